// Which backend instance (and so which communicator set) a case runs on (run/comm_sets.hpp):
// set_key and the options the instance is built with.
#include <gtest/gtest.h>

#include "collbench/plan/case.hpp"
#include "collbench/run/comm_sets.hpp"

namespace {

using namespace collbench;

plan::Case a_case(const std::string& backend, const std::string& collective, Scope scope = Scope::global) {
  plan::Case c;
  c.backend = backend;
  c.collective = collective;
  c.algo = "auto";
  c.buffers = backend == "nccl" ? "plain" : "host";
  c.scope = scope;
  return c;
}

// ep-dp-concurrent runs its domain and cross-domain parts at once: on NCCL a split that shares its
// parent's resources queues its kernels behind the parent's internal stream, so the family gets a
// set of its own whose world is created without splitShare (BackendOptions::share_split_resources).
TEST(CommSets, ConcurrentLevelsGetTheirOwnUnsharedSet) {
  const run::SetLayout layout;
  const plan::Case concurrent = a_case("nccl", "ep-dp-concurrent");
  const plan::Case allreduce = a_case("nccl", "allreduce");
  EXPECT_EQ(run::set_key(allreduce), "nccl|auto|plain");
  EXPECT_EQ(run::set_key(concurrent), "nccl|auto|plain|levels-at-once");
  EXPECT_TRUE(run::options_for(allreduce, layout, nullptr).share_split_resources);
  EXPECT_FALSE(run::options_for(concurrent, layout, nullptr).share_split_resources);
  // The families that run one part at a time share, hierarchical included.
  for (const char* family : {"alltoall", "moe-dispatch", "reducescatter"}) {
    EXPECT_TRUE(run::options_for(a_case("nccl", family), layout, nullptr).share_split_resources) << family;
  }
  // Off scope global the family is waived (it gets no levels): no set of its own.
  const plan::Case domain = a_case("nccl", "ep-dp-concurrent", Scope::domain);
  EXPECT_EQ(run::set_key(domain), "nccl|auto|plain");
  // MPI has no shared resources to separate: one set.
  EXPECT_EQ(run::set_key(a_case("mpi", "ep-dp-concurrent")), run::set_key(a_case("mpi", "allreduce")));
}

}  // namespace
