// The stopping rule (docs/measurement.md step 6): stop_reason's order of reasons and the budget,
// and the length of the next timed round, on hand-computed cases.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "collbench/plan/case.hpp"
#include "collbench/run/measure.hpp"

namespace collbench {
namespace {

using run::next_round_size;
using run::stop_reason;

// n samples 1 + step * i. With n = 100 the median's 95% CI is the order statistics 40 and 60
// (floor(50 - 9.8), ceil(50 + 9.8)) and p50 = 1 + 49.5 step, so the relative half-width is
// 10 step / (1 + 49.5 step): 0.00953 for step 0.001 (within 1%), 0.0669 for step 0.01.
std::vector<double> ramp(int n, double step) {
  std::vector<double> v;
  for (int i = 0; i < n; ++i) v.push_back(1.0 + step * i);
  return v;
}

const std::vector<double> kTight = ramp(100, 0.001);
const std::vector<double> kWide = ramp(100, 0.01);

TEST(StopRule, Defaults) {
  const plan::StopRule rule;
  EXPECT_EQ(rule.min_iters, 10);
  EXPECT_EQ(rule.max_iters, 100000);
  EXPECT_DOUBLE_EQ(rule.min_time_s, 0.005);
  EXPECT_DOUBLE_EQ(rule.max_time_s, 2.0);
  EXPECT_DOUBLE_EQ(rule.max_noise, 0.01);
  EXPECT_EQ(rule.budget_iters, 100);
  EXPECT_DOUBLE_EQ(rule.budget_s, 0.01);
}

TEST(StopRule, BudgetNeedsItsIterationsAndItsTime) {
  const plan::StopRule rule;
  EXPECT_EQ(stop_reason(rule, kWide, 0.01), "budget");
  EXPECT_EQ(stop_reason(rule, kWide, 0.0099), "");                // 100 iterations, not yet 10 ms
  EXPECT_EQ(stop_reason(rule, ramp(99, 0.01), 1.0), "");          // 1 s, but 99 iterations
  EXPECT_EQ(stop_reason(rule, ramp(99, 0.01), 2.0), "max_time");  // the hard limit still holds
}

TEST(StopRule, ConvergedBeforeTheBudgetAndReportedFirst) {
  const plan::StopRule rule;
  EXPECT_EQ(stop_reason(rule, kTight, 0.006), "converged");
  EXPECT_EQ(stop_reason(rule, kTight, 0.004), "");  // under --min-time (5 ms)
  EXPECT_EQ(stop_reason(rule, kTight, 0.02), "converged");
  plan::StopRule strict;
  strict.max_noise = 0.009;  // 0.00953 is wider: the budget stops it
  EXPECT_EQ(stop_reason(strict, kTight, 0.02), "budget");
}

TEST(StopRule, BudgetZeroIsTheOldRule) {
  plan::StopRule rule;
  rule.budget_s = 0;
  EXPECT_EQ(stop_reason(rule, kWide, 1.0), "");
  EXPECT_EQ(stop_reason(rule, kWide, 2.0), "max_time");
  EXPECT_EQ(stop_reason(rule, kTight, 0.006), "converged");
}

TEST(StopRule, FixedCountAndMinItersAreNotCutByTheBudget) {
  plan::StopRule fixed;  // -n 1000
  fixed.min_iters = fixed.max_iters = 1000;
  fixed.min_time_s = 0.0;
  fixed.max_time_s = 1e12;
  EXPECT_EQ(stop_reason(fixed, ramp(500, 0.01), 5.0), "");
  EXPECT_EQ(stop_reason(fixed, ramp(1000, 0.01), 5.0), "max_iters");
  plan::StopRule many;  // --min-iters 300
  many.min_iters = 300;
  EXPECT_EQ(stop_reason(many, kWide, 1.0), "");
  EXPECT_EQ(stop_reason(many, ramp(300, 0.01), 1.0), "budget");
  EXPECT_EQ(stop_reason(many, ramp(300, 0.01), 3.0), "max_time");
}

TEST(StopRule, MaxItersBeforeMaxTime) {
  plan::StopRule rule;
  rule.max_iters = 100;
  EXPECT_EQ(stop_reason(rule, kWide, 5.0), "max_iters");
}

TEST(NextRound, DoublesWhileTheBudgetIsFarAhead) {
  // 3 us per iteration: the budget ends at ceil(9.97 ms / 3 us) = 3,324 more; doubling gives 20.
  EXPECT_EQ(next_round_size(plan::StopRule{}, 10, 10, 30e-6), 20);
}

TEST(NextRound, EndsAtTheBudget) {
  const plan::StopRule rule;
  // 1 ms per iteration, 70 done in 70 ms: the budget's time is spent, 30 iterations remain to 100.
  EXPECT_EQ(next_round_size(rule, 70, 40, 0.07), 30);
  // 3,000 iterations in 6.1 ms: 3.9 ms remain, 0.0039 x 3000 / 0.0061 = 1918.03 -> 1,919 (not 2,048).
  EXPECT_EQ(next_round_size(rule, 3000, 1024, 0.0061), 1919);
  plan::StopRule off = rule;
  off.budget_s = 0;
  EXPECT_EQ(next_round_size(off, 70, 40, 0.07), 80);
}

TEST(NextRound, MaxTimeMaxItersAndTheCap) {
  plan::StopRule rule;
  rule.budget_s = 0;
  // 1.9 ms per iteration, 0.1 s left: 52.6 -> 53.
  EXPECT_EQ(next_round_size(rule, 1000, 512, 1.9), 53);
  rule.budget_s = 0.01;  // the budget is behind: it does not shorten the round
  EXPECT_EQ(next_round_size(rule, 1000, 512, 1.9), 53);
  plan::StopRule fixed;  // -n 100
  fixed.min_iters = fixed.max_iters = 100;
  EXPECT_EQ(next_round_size(fixed, 30, 20, 1e-4), 40);
  EXPECT_EQ(next_round_size(fixed, 90, 40, 1e-4), 10);
  EXPECT_EQ(next_round_size(plan::StopRule{}, 8192, 4096, 0.001), 4096);  // at most 4,096
  EXPECT_EQ(next_round_size(plan::StopRule{}, 10, 10, 0.0), 20);          // no rate yet: double
}

// The timed rounds read MPI_Wtime inline only for a timer that reads nothing else and a case no
// fault item applies to (hang, delay, slow and slow-pair need the timer's path).
TEST(InlineClock, OnlyForAnMpiWtimeTimerAndACaseWithoutFaults) {
  EXPECT_TRUE(run::use_inline_clock(true, false));
  EXPECT_FALSE(run::use_inline_clock(true, true));    // a fault applies to the case
  EXPECT_FALSE(run::use_inline_clock(false, false));  // CUDA events
  EXPECT_FALSE(run::use_inline_clock(false, true));
}

}  // namespace
}  // namespace collbench
