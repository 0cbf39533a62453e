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
  EXPECT_EQ(*ring,
            "algorithm 'ring' is not available on the mpi backend (it runs: auto, flat, hierarchical; linear for "
            "all-to-all)");
  // linear: collbench's posted all-to-all, for the collectives that run one, on an instance of its own.
  for (const char* coll : {"alltoall", "alltoallv", "moe-dispatch", "moe-combine", "moe-roundtrip"}) {
    EXPECT_FALSE(p.algo_waiver("linear", coll, 0)) << coll;
  }
  const auto linear_ar = p.algo_waiver("linear", "allreduce", 0);
  ASSERT_TRUE(linear_ar);
  EXPECT_EQ(*linear_ar,
            "algorithm 'linear' is an all-to-all schedule (alltoall, alltoallv, moe-dispatch, moe-combine, "
            "moe-roundtrip); allreduce runs none");
  EXPECT_TRUE(p.algo_waiver("linear", "ep-dp-concurrent", 0));
  EXPECT_EQ(p.instance_key("mpi", "linear", "host", false), "mpi|linear");
  EXPECT_EQ(p.instance_key("mpi", "linear", "host", true), "mpi|linear|overlap");
  EXPECT_TRUE(p.polls_for_overlap());
  EXPECT_FALSE(p.replays_graphs());
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
  EXPECT_TRUE(p.replays_graphs());
#ifdef COLLBENCH_HAVE_NCCL
  EXPECT_EQ(p.default_buffers("cb-multimem"), "symmetric");
  EXPECT_FALSE(p.algo_waiver("auto", "allreduce", 20));  // -G replays: no waiver any more
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

// --graph/-G is refused up front on a backend that cannot replay graphs, naming the flag, the
// backend and the backends that can (exit 2); 0 is always accepted, a negative count never.
TEST(BackendPolicy, GraphIsRefusedWhereNoGraphCanBeReplayed) {
  using collbench::backend::check_graph;
  EXPECT_NO_THROW(check_graph("mpi", 0));
  EXPECT_NO_THROW(check_graph("nccl", 0));
  EXPECT_NO_THROW(check_graph("nccl", 20));
  try {
    check_graph("mpi", 20);
    FAIL() << "-G 20 on mpi was accepted";
  } catch (const InputError& e) {
    EXPECT_STREQ(e.what(),
                 "--graph/-G 20: CUDA-graph replay is not available on the mpi backend (it runs each operation when "
                 "it is called); backends that support it: nccl");
  }
  try {
    check_graph("nccl", -1);
    FAIL() << "-G -1 was accepted";
  } catch (const InputError& e) {
    EXPECT_STREQ(e.what(), "--graph/-G -1: must be 0 (off) or the number of launches a CUDA graph holds");
  }
}
