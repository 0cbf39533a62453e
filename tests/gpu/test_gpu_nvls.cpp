// NVLink SHARP on GPUs (label `gpu`; compiled in CI, run with COLLBENCH_GPU_TESTS=1): the
// capability verdicts of nvls / nvlstree / cb-multimem on this machine (the same on every rank,
// with a reason where waived, and a waived cb-multimem refuses to run with that reason), and
// where the machine has NVLink SHARP, collbench's cb-multimem kernels verified exactly for every
// collective they implement, dtype, awkward size (not a multiple of 16 B, smaller than m x 16 B)
// and in/out of place, on the world communicator and a split; NCCL's NVLS forced and reported.
// On a GPU without NVSwitch multicast (e.g. a single H200, PCIe) the kernel tests skip, printing
// the reason. Rank-count agnostic: one rank per GPU under mpiexec.
#include <gtest/gtest.h>
#include <mpi.h>

#include <cstdio>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "collbench/backend/nccl/nccl_backend.hpp"
#include "collbench/backend/nccl/nccl_host.hpp"
#include "collbench/coll/collective.hpp"
#include "collbench/core/error.hpp"
#include "gpu_cases.hpp"
#include "gpu_verify.hpp"

namespace {

using namespace collbench;
namespace nccl = collbench::backend::nccl;
using gpu_test::run_and_verify_host;
using gpu_test::sum_over_ranks;

std::unique_ptr<backend::Backend> make(const std::string& algo) {
  backend::BackendOptions o;
  o.algo = algo;
  o.buffers = nccl::default_nccl_buffers(algo);
  return backend::make_nccl_backend(o);
}

int my_rank() {
  int r = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &r);
  return r;
}

// Rank 0's text, broadcast (to compare verdicts across ranks).
std::string rank0(const std::string& mine) {
  int len = static_cast<int>(mine.size());
  MPI_Bcast(&len, 1, MPI_INT, 0, MPI_COMM_WORLD);
  std::string out = mine;
  out.resize(static_cast<std::size_t>(len));
  MPI_Bcast(out.data(), len, MPI_CHAR, 0, MPI_COMM_WORLD);
  return out;
}

void note(const std::string& text) {
  if (my_rank() == 0) std::printf("[ nvls     ] %s\n", text.c_str());
}

TEST(NvlsGpu, VerdictsAreAgreedAndExplained) {
  for (const char* algo : {"nvls", "nvlstree", "cb-multimem"}) {
    auto be = make(algo);
    auto world = be->world();
    for (const char* coll : {"allreduce", "reducescatter", "allgather"}) {
      if (nccl::nccl_algo_waiver(algo, coll)) continue;  // e.g. nvlstree reduce-scatter: not NCCL's
      const auto why = nccl::capability_waiver(*be, *world, coll, Dtype::bfloat16, Redop::sum);
      const std::string mine = why ? "waived: " + *why : std::string("runs");
      EXPECT_EQ(rank0(mine), mine) << algo << " " << coll;
      if (why) {
        EXPECT_FALSE(why->empty());
      }
      note(std::string(algo) + " " + coll + " on " + std::to_string(world->size()) + " rank(s): " + mine);
    }
    // Every other algorithm is never judged here.
    auto ring = make("ring");
    auto rw = ring->world();
    EXPECT_FALSE(nccl::capability_waiver(*ring, *rw, "allreduce", Dtype::bfloat16, Redop::sum));
  }
}

class CbMultimem : public ::testing::Test {
 protected:
  void SetUp() override {
    be_ = make("cb-multimem");
    world_ = be_->world();
    why_ = nccl::capability_waiver(*be_, *world_, "allreduce", Dtype::float32, Redop::sum);
    if (why_) {
      // A waived communicator refuses to run, with the same reason.
      auto buf = be_->allocate(4096);
      try {
        world_->run({.op = NcclOp::allreduce, .send = buf->data(), .recv = buf->data(), .count = 1024});
        ADD_FAILURE() << "cb-multimem ran although waived: " << *why_;
      } catch (const InputError& e) {
        EXPECT_NE(std::string(e.what()).find("cb-multimem"), std::string::npos) << e.what();
      }
      note("cb-multimem waived here: " + *why_);
      GTEST_SKIP() << *why_;
    }
  }
  std::unique_ptr<backend::Backend> be_;
  std::unique_ptr<backend::Comm> world_;
  std::optional<std::string> why_;
};

// The cases (awkward sizes, types, placements): gpu_cases.hpp, also built by the CPU unit test.
TEST_F(CbMultimem, EveryCollectiveDtypeSizeAndPlacementVerifies) {
  for (const auto& cc : gpu_test::multimem_cases(world_->size())) {
    const std::uint64_t wrong = sum_over_ranks(run_and_verify_host(*be_, *world_, *cc.collective, cc.ctx, cc.bytes));
    ASSERT_EQ(wrong, 0u) << cc.where;
    EXPECT_EQ(world_->algo_used(), "cb-multimem") << cc.where;
  }
}

TEST_F(CbMultimem, UnsupportedCasesAreWaivedNotRun) {
  EXPECT_TRUE(nccl::capability_waiver(*be_, *world_, "allreduce", Dtype::int32, Redop::sum));
  EXPECT_TRUE(nccl::capability_waiver(*be_, *world_, "allreduce", Dtype::float32, Redop::max));
  EXPECT_FALSE(nccl::capability_waiver(*be_, *world_, "allgather", Dtype::int32, Redop::sum));
}

TEST_F(CbMultimem, SplitCommunicatorsAgree) {
  const int rank = my_rank();
  auto halves = be_->split(rank % 2, rank);
  const auto why = nccl::capability_waiver(*be_, *halves, "allreduce", Dtype::bfloat16, Redop::sum);
  const std::string mine = why.value_or("runs");
  EXPECT_EQ(rank0(mine), mine);
  if (why) {
    note("cb-multimem on halves: " + *why);
    return;
  }
  coll::CaseContext ctx;
  ctx.dtype = Dtype::bfloat16;
  EXPECT_EQ(sum_over_ranks(run_and_verify_host(*be_, *halves, coll::find_collective("allreduce"), ctx, 3 << 20)), 0u);
}

TEST(NvlsGpu, ForcedNvlsRunsAndIsReportedWhereAvailable) {
  auto be = make("nvls");
  auto world = be->world();
  if (const auto why = nccl::capability_waiver(*be, *world, "allreduce", Dtype::bfloat16, Redop::sum)) {
    GTEST_SKIP() << *why;
  }
  coll::CaseContext ctx;
  ctx.dtype = Dtype::bfloat16;
  EXPECT_EQ(sum_over_ranks(run_and_verify_host(*be, *world, coll::find_collective("allreduce"), ctx, 16 << 20)), 0u);
  EXPECT_EQ(world->algo_used(), "nvls");
}

}  // namespace
