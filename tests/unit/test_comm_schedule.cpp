// The runner's case order and communicator-set lifetimes (plan/comm_schedule.hpp): each set's
// cases run together in regrouped order, sets in the order of their first case, the sweep's order
// inside a set; accept/locate keep their order; every set is released after its last case.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "collbench/plan/comm_schedule.hpp"

namespace {

using collbench::plan::CaseSchedule;
using collbench::plan::releases_after;
using collbench::plan::schedule_cases;

// `run --algo auto,ring,tree,nvls,nvlstree,pat -d float32,bfloat16 -b 1K -e 2K` on nccl: the
// command line's loops put dtype outside algorithm outside size, so the sets interleave.
std::vector<std::string> nccl_algo_sweep() {
  std::vector<std::string> keys;
  for (int dtype = 0; dtype < 2; ++dtype) {
    for (const char* algo : {"auto", "ring", "tree", "nvls", "nvlstree", "pat"}) {
      for (int size = 0; size < 2; ++size) keys.push_back(std::string("nccl|") + algo + "|plain");
    }
  }
  return keys;
}

std::vector<bool> releases(const CaseSchedule& s) {
  std::vector<bool> out;
  for (std::size_t pos = 0; pos < s.order.size(); ++pos) out.push_back(releases_after(s, pos));
  return out;
}

}  // namespace

TEST(CommSchedule, RegroupedRunsOneSetAtATime) {
  const auto s = schedule_cases(nccl_algo_sweep(), false);
  // auto: cases 0,1 (float32) and 12,13 (bfloat16); ring: 2,3 and 14,15; ...
  EXPECT_EQ(s.order, (std::vector<std::size_t>{0, 1, 12, 13, 2, 3, 14, 15, 4,  5,  16, 17,
                                               6, 7, 18, 19, 8, 9, 20, 21, 10, 11, 22, 23}));
  EXPECT_EQ(s.max_live_sets, 1);
  EXPECT_EQ(s.last_position, (std::vector<std::size_t>{3, 7, 11, 15, 19, 23}));
  ASSERT_EQ(s.set_of.size(), 24u);
  EXPECT_EQ(s.set_of[12], 0);  // bfloat16 auto shares float32 auto's set
  EXPECT_EQ(s.set_of[23], 5);
  std::vector<bool> expected(24, false);
  for (std::size_t pos : {3u, 7u, 11u, 15u, 19u, 23u}) expected[pos] = true;
  EXPECT_EQ(releases(s), expected);
}

TEST(CommSchedule, KeptOrderHoldsEverySetThatIsStillToCome) {
  const auto s = schedule_cases(nccl_algo_sweep(), true);
  for (std::size_t i = 0; i < s.order.size(); ++i) EXPECT_EQ(s.order[i], i);
  // Each set is used again in the bfloat16 half: all six are alive from the sixth set's start.
  EXPECT_EQ(s.max_live_sets, 6);
  EXPECT_EQ(s.last_position, (std::vector<std::size_t>{13, 15, 17, 19, 21, 23}));
}

TEST(CommSchedule, SetsComeInTheOrderOfTheirFirstCaseAndReleaseAfterTheirLast) {
  const std::vector<std::string> keys{"A", "B", "A", "C", "B"};
  const auto regrouped = schedule_cases(keys, false);
  EXPECT_EQ(regrouped.order, (std::vector<std::size_t>{0, 2, 1, 4, 3}));
  EXPECT_EQ(regrouped.set_of, (std::vector<int>{0, 1, 0, 2, 1}));
  EXPECT_EQ(regrouped.last_position, (std::vector<std::size_t>{1, 3, 4}));
  EXPECT_EQ(releases(regrouped), (std::vector<bool>{false, true, false, true, true}));
  EXPECT_EQ(regrouped.max_live_sets, 1);
  // Kept: A lives over positions 0-2, B 1-4, C 3: B and A at 1-2, B and C at 3.
  const auto kept = schedule_cases(keys, true);
  EXPECT_EQ(kept.last_position, (std::vector<std::size_t>{2, 4, 3}));
  EXPECT_EQ(releases(kept), (std::vector<bool>{false, false, true, true, true}));
  EXPECT_EQ(kept.max_live_sets, 2);
}

TEST(CommSchedule, OneSetKeepsTheSweepOrder) {
  const std::vector<std::string> keys(4, "mpi");
  const auto s = schedule_cases(keys, false);
  EXPECT_EQ(s.order, (std::vector<std::size_t>{0, 1, 2, 3}));
  EXPECT_EQ(releases(s), (std::vector<bool>{false, false, false, true}));
  EXPECT_EQ(s.max_live_sets, 1);
  const auto none = schedule_cases({}, false);
  EXPECT_TRUE(none.order.empty());
  EXPECT_EQ(none.max_live_sets, 0);
}
