// COLLBENCH_FAULT parsing and selection.
#include <gtest/gtest.h>

#include "collbench/core/error.hpp"
#include "collbench/run/fault.hpp"

using collbench::InputError;
using collbench::run::FaultPlan;

TEST(Fault, ParsesEveryKind) {
  const auto f = FaultPlan::parse(
      "corrupt:rank=1;delay:rank=2,us=20000,case=3;slow:factor=3;"
      "slow-pair:a=1,b=3,factor=10;hang:rank=1,case=2,iter=3");
  EXPECT_EQ(f.items().size(), 5u);
  EXPECT_TRUE(f.corrupt(1, 0));
  EXPECT_FALSE(f.corrupt(0, 0));
  EXPECT_DOUBLE_EQ(f.delay_us(2, 3, 7), 20000.0);
  EXPECT_DOUBLE_EQ(f.delay_us(2, 4, 7), 0.0);
  EXPECT_DOUBLE_EQ(f.slow_factor(9), 3.0);
  EXPECT_DOUBLE_EQ(f.pair_factor(3, 1, 0), 10.0);
  EXPECT_DOUBLE_EQ(f.pair_factor(1, 2, 0), 1.0);
  EXPECT_TRUE(f.hang(1, 2, 3));
  EXPECT_FALSE(f.hang(1, 2, 4));
  EXPECT_TRUE(f.affects_case(0));
}

TEST(Fault, CaseSelection) {
  const auto f = FaultPlan::parse("corrupt:rank=0,case=2");
  EXPECT_FALSE(f.affects_case(1));
  EXPECT_TRUE(f.affects_case(2));
  EXPECT_FALSE(f.corrupt(0, 1));
  EXPECT_TRUE(f.corrupt(0, 2));
}

TEST(Fault, Rejections) {
  EXPECT_THROW(FaultPlan::parse("explode:rank=1"), InputError);
  EXPECT_THROW(FaultPlan::parse("delay:rank=1"), InputError);  // needs us
  EXPECT_THROW(FaultPlan::parse("corrupt:us=4"), InputError);  // wrong key
  EXPECT_THROW(FaultPlan::parse("corrupt:rank=x"), InputError);
  EXPECT_THROW(FaultPlan::parse("slow-pair:a=1,factor=2"), InputError);
  try {
    FaultPlan::parse("corupt:rank=1");
    FAIL();
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("did you mean 'corrupt'"), std::string::npos);
  }
}

TEST(Fault, HangAtTheRunsStart) {
  const auto f = FaultPlan::parse("hang:rank=1,start=1");
  EXPECT_TRUE(f.hang_at_start(1));
  EXPECT_FALSE(f.hang_at_start(0));
  for (int c = 0; c < 3; ++c) EXPECT_FALSE(f.hang(1, c, 0)) << c;  // never again inside a case
  EXPECT_FALSE(FaultPlan::parse("hang:rank=1").hang_at_start(1));
  EXPECT_FALSE(FaultPlan::parse("hang:rank=1,start=0").hang_at_start(1));
  try {
    FaultPlan::parse("hang:rank=1,start=1,case=2");
    FAIL();
  } catch (const InputError& e) {
    EXPECT_EQ(std::string(e.what()),
              "COLLBENCH_FAULT item 'hang:rank=1,start=1,case=2': start=1 (at the run's start, before any case) "
              "excludes case, iter and warmup");
  }
  EXPECT_THROW(FaultPlan::parse("corrupt:rank=1,start=1"), InputError);  // a hang's key only
}
