// The timing gate's rules (backend/nccl/gate_rule.hpp), shared by the host, the gate kernel and
// this CPU test: which release opens which gate, across the 32-bit wrap, the generation after
// each, and the failure's message when a gate opens by its timeout.
#include <gtest/gtest.h>

#include <cstdint>

#include "collbench/backend/nccl/gate_rule.hpp"

namespace nccl = collbench::backend::nccl;

TEST(TimingGateRule, AReleaseOpensItsGenerationAndEveryEarlierOne) {
  EXPECT_FALSE(nccl::gate_open(0, 1));  // zeroed memory opens nothing
  EXPECT_TRUE(nccl::gate_open(1, 1));
  EXPECT_TRUE(nccl::gate_open(7, 5));   // a later release opens an earlier gate
  EXPECT_FALSE(nccl::gate_open(5, 7));  // an earlier release does not open a later gate
}

TEST(TimingGateRule, GenerationsWrapWithoutOpeningTooEarly) {
  EXPECT_TRUE(nccl::gate_open(3, 0xFFFFFFFEu));   // released after the wrap
  EXPECT_FALSE(nccl::gate_open(0xFFFFFFFEu, 3));  // gate after the wrap, release before it
  EXPECT_FALSE(nccl::gate_open(0xFFFFFFFFu, 1));
}

TEST(TimingGateRule, NextGenerationSkipsZero) {
  EXPECT_EQ(nccl::next_generation(0), 1u);
  EXPECT_EQ(nccl::next_generation(41), 42u);
  EXPECT_EQ(nccl::next_generation(0xFFFFFFFFu), 1u);
  EXPECT_EQ(nccl::kGateTimeoutNs, 10'000'000'000ULL);
}

TEST(TimingGateRule, TimeoutMessageNamesTheRankTheTimeAndWhatToDo) {
  EXPECT_EQ(nccl::gate_timeout_message(3, nccl::kGateTimeoutNs),
            "timing gate: rank 3's stream was held 10 s while the host enqueued the sample's operations, and the "
            "gate opened by its timeout: the enqueue waited for the device (a library that blocks in its launch when "
            "its queue to the GPU is full); time fewer operations per sample (--batch, --graph)");
}
