// COLLBENCH_FAULT items that name ranks or cases the run does not have (issue 20 item 5).
#include <gtest/gtest.h>

#include <string>

#include "collbench/core/error.hpp"
#include "collbench/run/fault.hpp"

using collbench::InputError;
using collbench::run::FaultPlan;

namespace {

std::string target_error(const std::string& text, int ranks, std::optional<std::size_t> cases) {
  try {
    FaultPlan::parse(text).check_targets(ranks, cases);
  } catch (const InputError& e) {
    return e.what();
  }
  return "(accepted)";
}

}  // namespace

TEST(FaultTargets, RankOutsideTheRunNamesTheItemAndTheRange) {
  EXPECT_EQ(target_error("hang:rank=4,case=1", 4, 3),
            "COLLBENCH_FAULT item 'hang:rank=4,case=1': rank=4 names no rank of this run; accepted: 0 to 3 (4 ranks)");
  EXPECT_EQ(target_error("corrupt:rank=1", 1, 3),
            "COLLBENCH_FAULT item 'corrupt:rank=1': rank=1 names no rank of this run; accepted: 0 to 0 (1 rank)");
}

TEST(FaultTargets, SlowPairRanksAreChecked) {
  EXPECT_EQ(target_error("slow-pair:a=1,b=2,factor=3", 2, std::nullopt),
            "COLLBENCH_FAULT item 'slow-pair:a=1,b=2,factor=3': b=2 names no rank of this run; accepted: 0 to 1 (2 "
            "ranks)");
}

TEST(FaultTargets, CaseOutsideTheSweepNamesTheRange) {
  EXPECT_EQ(target_error("delay:rank=0,us=5,case=3", 2, 3),
            "COLLBENCH_FAULT item 'delay:rank=0,us=5,case=3': case=3 names no case of this run; accepted: 0 to 2 (3 "
            "cases)");
  EXPECT_EQ(target_error("slow:factor=2,case=0", 2, 0),
            "COLLBENCH_FAULT item 'slow:factor=2,case=0': case=0 names no case of this run; accepted: none (0 cases)");
}

TEST(FaultTargets, TargetsInsideTheRunAndUncheckedCasesAreAccepted) {
  EXPECT_EQ(target_error("hang:rank=3,case=2,iter=900;slow-pair:a=0,b=3,factor=2;slow:factor=2", 4, 3), "(accepted)");
  // Several sweeps (accept, locate) number their cases each from 0: no case count to check against.
  EXPECT_EQ(target_error("corrupt:rank=1,case=40", 2, std::nullopt), "(accepted)");
}
