// The dry run's time estimate: the stopping rule's limits (docs/measurement.md step 6) at a
// given iteration time, against values worked out by hand.
#include <gtest/gtest.h>

#include <limits>

#include "collbench/plan/stop_estimate.hpp"

namespace {

using collbench::plan::budget_iteration_s;
using collbench::plan::StopRule;
using collbench::plan::timed_seconds;

constexpr double kInf = std::numeric_limits<double>::infinity();

TEST(StopEstimate, DefaultRuleStopsAtTheBudgetOrItsHundredIterations) {
  const StopRule rule;  // max_time 2 s, max_iters 100000, min_iters 10, budget 10 ms and 100 iterations
  // 1 us: 100 iterations take 0.1 ms, so the 10 ms ends the case (max_iters would take 0.1 s).
  EXPECT_DOUBLE_EQ(timed_seconds(rule, 1e-6), 0.01);
  // 1 ms: the 100 iterations take 0.1 s, past the 10 ms.
  EXPECT_DOUBLE_EQ(timed_seconds(rule, 1e-3), 0.1);
  // 50 ms: 100 iterations would take 5 s; --max-time's 2 s comes first.
  EXPECT_DOUBLE_EQ(timed_seconds(rule, 0.05), 2.0);
  EXPECT_DOUBLE_EQ(timed_seconds(rule, kInf), 2.0);
  // The iteration time up to which the budget's seconds decide: 10 ms / 100.
  EXPECT_DOUBLE_EQ(budget_iteration_s(rule), 1e-4);
  EXPECT_DOUBLE_EQ(timed_seconds(rule, budget_iteration_s(rule)), 0.01);
}

TEST(StopEstimate, BudgetOffLeavesMaxItersAndMaxTime) {
  StopRule rule;
  rule.budget_s = 0.0;                               // --budget 0
  EXPECT_DOUBLE_EQ(timed_seconds(rule, 1e-6), 0.1);  // 100000 x 1 us
  EXPECT_DOUBLE_EQ(timed_seconds(rule, 1e-3), 2.0);  // 100000 x 1 ms = 100 s > 2 s
  EXPECT_EQ(budget_iteration_s(rule), kInf);
  EXPECT_DOUBLE_EQ(timed_seconds(rule, budget_iteration_s(rule)), 2.0);
}

TEST(StopEstimate, MaxItersBelowTheBudgetsIterationsStopsFirst) {
  StopRule rule;  // cpu-smoke.yaml: max_iters 50, max_time 200 ms, default budget
  rule.max_iters = 50;
  rule.max_time_s = 0.2;
  // The budget needs 100 iterations, which --max-iters 50 never allows: 50 x 0.1 ms.
  EXPECT_DOUBLE_EQ(timed_seconds(rule, 1e-4), 0.005);
  EXPECT_DOUBLE_EQ(timed_seconds(rule, 1e-2), 0.2);  // 50 x 10 ms = 0.5 s > 200 ms
  // -n 20 (min_iters = max_iters = 20): 20 iterations of 1 ms.
  rule.min_iters = rule.max_iters = 20;
  EXPECT_DOUBLE_EQ(timed_seconds(rule, 1e-3), 0.02);
}

TEST(StopEstimate, MinItersAboveTheBudgetsIterationsRaisesThem) {
  StopRule rule;
  rule.min_iters = 400;  // the budget stops after max(100, 400) iterations
  EXPECT_DOUBLE_EQ(budget_iteration_s(rule), 0.01 / 400);
  EXPECT_DOUBLE_EQ(timed_seconds(rule, 1e-4), 0.04);  // 400 x 0.1 ms > 10 ms
  rule.budget_s = 0.5;
  EXPECT_DOUBLE_EQ(timed_seconds(rule, 1e-4), 0.5);  // 400 x 0.1 ms < 500 ms
}

}  // namespace
