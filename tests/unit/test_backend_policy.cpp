// The backend policy the runner asks (backend/policy.hpp): defaults, buffer kinds, algorithm
// waivers, overlap polling and instance keys per backend name.
#include <gtest/gtest.h>

#include "collbench/backend/policy.hpp"
#include "collbench/core/error.hpp"

using collbench::InputError;
using collbench::backend::backend_policy;

TEST(BackendPolicy, Mpi) {
  const auto& p = backend_policy("mpi");
  EXPECT_EQ(p.default_buffers("auto"), "host");
  EXPECT_NO_THROW(p.check_buffers("host"));
  EXPECT_NO_THROW(p.check_buffers("plain"));
  EXPECT_THROW(p.check_buffers("registered"), InputError);
  EXPECT_FALSE(p.algo_waiver("auto", "allreduce", 0));
  EXPECT_FALSE(p.algo_waiver("flat", "allreduce", 0));
  const auto ring = p.algo_waiver("ring", "allreduce", 0);
  ASSERT_TRUE(ring);
  EXPECT_EQ(*ring, "algorithm 'ring' is not available on the mpi backend (it runs: auto, flat, hierarchical)");
  EXPECT_TRUE(p.polls_for_overlap());
  EXPECT_EQ(p.instance_key("mpi", "auto", "host", false), "mpi");
  EXPECT_EQ(p.instance_key("mpi", "auto", "host", true), "mpi|overlap");
  EXPECT_TRUE(p.record_notes("auto", "allreduce", collbench::Dtype::float32, 1024.0, 2).empty());
}

TEST(BackendPolicy, Nccl) {
  const auto& p = backend_policy("nccl");
  EXPECT_EQ(p.default_buffers("auto"), "plain");
  EXPECT_FALSE(p.polls_for_overlap());
  EXPECT_EQ(p.instance_key("nccl", "ring", "plain", true), "nccl|ring|plain");
  EXPECT_NO_THROW(p.check_buffers("symmetric"));
#ifdef COLLBENCH_HAVE_NCCL
  EXPECT_EQ(p.default_buffers("cb-multimem"), "symmetric");
  const auto graph = p.algo_waiver("auto", "allreduce", 1);
  ASSERT_TRUE(graph);
  EXPECT_NE(graph->find("--graph"), std::string::npos);
  EXPECT_FALSE(p.algo_waiver("auto", "allreduce", 0));
  EXPECT_TRUE(p.algo_waiver("cb-multimem", "alltoall", 0));
#endif
}

TEST(BackendPolicy, UnknownNameGetsTheDefaults) {
  const auto& p = backend_policy("no-such-backend");
  EXPECT_EQ(p.default_buffers("auto"), "host");
  EXPECT_NO_THROW(p.check_buffers("anything"));
  EXPECT_FALSE(p.algo_waiver("ring", "allreduce", 3));
  EXPECT_FALSE(p.polls_for_overlap());
  EXPECT_EQ(p.instance_key("x", "a", "b", false), "x|a|b");
}
