// The NCCL backend end to end on GPUs: every collective family, dtype, reduction and in-place
// form through the same upload/launch/download/verify path the runner uses, for each buffer
// kind (plain, registered, symmetric), on the world communicator and a split; CUDA-event
// timing; algorithm control and algo_used; provenance; error paths; the device-pattern fast
// path; collbench's hierarchical composition over NCCL communicators. Rank-count agnostic:
// run under mpiexec with one rank per GPU (label `gpu`).
#include <gtest/gtest.h>
#include <mpi.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <map>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "collbench/backend/hierarchical.hpp"
#include "collbench/backend/nccl/gpu_libraries.hpp"
#include "collbench/backend/nccl/nccl_backend.hpp"
#include "collbench/coll/collective.hpp"
#include "collbench/coll/device_plan.hpp"
#include "collbench/coll/pattern.hpp"
#include "collbench/core/error.hpp"
#include "gpu_cases.hpp"
#include "gpu_verify.hpp"

namespace {

using namespace collbench;
namespace nccl = collbench::backend::nccl;

std::unique_ptr<backend::Backend> make(const std::string& buffers, const std::string& algo = "auto") {
  backend::BackendOptions o;
  o.buffers = buffers;
  o.algo = algo;
  return backend::make_nccl_backend(o);
}

int my_rank() {
  int r = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &r);
  return r;
}

using gpu_test::run_and_verify_host;
using gpu_test::sum_over_ranks;
using gpu_test::world_size;

// The device fast path: fill and check on the GPU with the family's plans.
std::uint64_t run_and_verify_device(backend::Backend& be, backend::Comm& comm, const coll::Collective& c,
                                    coll::CaseContext ctx, std::uint64_t bytes) {
  ctx.rank = comm.rank();
  ctx.num_ranks = comm.size();
  auto& dp = *nccl::device_patterns(be);
  const std::size_t elem = dtype_size(ctx.dtype);
  const coll::Shape s = c.shape(bytes, ctx.dtype, ctx.rank, ctx.num_ranks);
  const auto params = nccl::pattern_params(ctx);
  auto send = be.allocate(std::max<std::size_t>(s.send_elems * elem, 1));
  auto recv = be.allocate(std::max<std::size_t>(s.recv_elems * elem, 1));
  dp.fill(send->data(), s.send_elems, params, *nccl::fill_plan(c.name(), s, ctx));
  c.launch(comm, send->data(), recv->data(), s, ctx);
  return dp.count_wrong(recv->data(), params, *nccl::verify_plan(c.name(), s, ctx));
}

// One backend per buffer kind, made on first use (collectively: every rank asks in the same
// order) and kept for the suite, since communicator creation is the slow part.
class NcclBackendTest : public ::testing::Test {
 protected:
  static void TearDownTestSuite() { backends().clear(); }
  static std::map<std::string, std::unique_ptr<backend::Backend>>& backends() {
    static std::map<std::string, std::unique_ptr<backend::Backend>> b;
    return b;
  }
  static backend::Backend& be(const std::string& kind = "plain") {
    auto it = backends().find(kind);
    if (it == backends().end()) it = backends().emplace(kind, make(kind)).first;
    return *it->second;
  }
};

TEST_F(NcclBackendTest, ProvenanceNamesLibrariesAndEveryRanksGpu) {
  const auto p = be().provenance();
  EXPECT_EQ(be().name(), "nccl");
  for (const char* key : {"nccl_version", "nccl_version_built", "cuda_runtime", "cuda_driver", "buffers", "algo"}) {
    ASSERT_TRUE(p.count(key)) << key;
    EXPECT_FALSE(p.at(key).empty()) << key;
    EXPECT_NE(p.at(key), "unknown") << key;
  }
  for (int r = 0; r < world_size(); ++r) {
    const std::string k = "rank." + std::to_string(r) + ".";
    ASSERT_TRUE(p.count(k + "gpu_name")) << k;
    EXPECT_EQ(p.at(k + "gpu_uuid").rfind("GPU-", 0), 0u) << p.at(k + "gpu_uuid");
    EXPECT_EQ(p.at(k + "gpu_uuid").size(), 40u) << p.at(k + "gpu_uuid");
    EXPECT_FALSE(p.at(k + "pci_bus_id").empty());
    EXPECT_TRUE(p.count(k + "compute_capability"));
  }
  if (::testing::Test::HasFailure()) return;
  std::printf("provenance (rank 0 view):\n");
  for (const auto& [k, v] : p) std::printf("  %s = %s\n", k.c_str(), v.c_str());
}

// NCCL and cuBLAS are opened with dlopen (docs/nccl-backend.md, "Linking"): on a GPU machine both
// load, and the backend runs on the library the loader found.
TEST_F(NcclBackendTest, LoadsNcclAndCublasAtRunTime) {
  (void)be();
  EXPECT_FALSE(nccl::nccl_load_problem().has_value()) << *nccl::nccl_load_problem();
  EXPECT_NE(nccl::nccl_library_path().find("libnccl"), std::string::npos) << nccl::nccl_library_path();
  EXPECT_FALSE(nccl::cublas_load_problem().has_value()) << *nccl::cublas_load_problem();
}

TEST_F(NcclBackendTest, WorldAndSplitCommunicators) {
  auto world = be().world();
  EXPECT_EQ(world->size(), world_size());
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  EXPECT_EQ(world->rank(), rank);
  auto halves = be().split(rank % 2, rank);
  EXPECT_EQ(halves->size(), (world_size() + 1 - rank % 2) / 2);
  world->barrier();
  halves->barrier();
}

// Every family x dtype x reduction x in-place form, every buffer kind, at three sizes (the cases:
// gpu_cases.hpp, also built by the CPU unit test tests/unit/test_gpu_cases.cpp). Families that
// the runner waives on this many ranks (e.g. MoE where 256 experts do not split) are left out.
TEST_F(NcclBackendTest, EveryCollectiveVerifiesOnEveryBufferKind) {
  gpu_test::Waived waived;
  const auto cases = gpu_test::every_collective_cases(world_size(), &waived);
  for (const auto& [family, why] : waived) {
    if (my_rank() == 0) std::printf("[ waived   ] %s on %d rank(s): %s\n", family.c_str(), world_size(), why.c_str());
  }
  for (const char* kind : {"plain", "registered", "symmetric"}) {
    auto& b = be(kind);
    auto world = b.world();
    for (const auto& cc : cases) {
      const std::uint64_t wrong = sum_over_ranks(run_and_verify_host(b, *world, *cc.collective, cc.ctx, cc.bytes));
      ASSERT_EQ(wrong, 0u) << kind << " " << cc.where;
    }
  }
}

TEST_F(NcclBackendTest, SplitCommunicatorRunsCollectives) {
  const int rank = my_rank();
  auto domain = be().split(rank % 2, rank);
  // The families both halves run (sum_over_ranks is over the world: every rank must take part
  // in the same cases), e.g. not MoE on 5 ranks, whose half of 3 cannot split 256 experts.
  const auto other_half = gpu_test::split_cases(std::max(1, world_size() - domain->size()));
  for (const auto& cc : gpu_test::split_cases(domain->size())) {
    const bool everywhere = std::any_of(other_half.begin(), other_half.end(),
                                        [&](const auto& other) { return other.collective == cc.collective; });
    if (!everywhere) continue;
    EXPECT_EQ(sum_over_ranks(run_and_verify_host(be(), *domain, *cc.collective, cc.ctx, cc.bytes)), 0u) << cc.where;
  }
}

TEST_F(NcclBackendTest, DeviceFastPathVerifies) {
  auto world = be().world();
  for (const auto& cc : gpu_test::device_fast_path_cases()) {
    EXPECT_EQ(sum_over_ranks(run_and_verify_device(be(), *world, *cc.collective, cc.ctx, cc.bytes)), 0u) << cc.where;
  }
}

TEST_F(NcclBackendTest, CudaEventTimer) {
  auto world = be().world();
  const auto& c = coll::find_collective("allreduce");
  coll::CaseContext ctx;
  ctx.rank = world->rank();
  ctx.num_ranks = world->size();
  const coll::Shape s = c.shape(64 << 20, Dtype::float32, ctx.rank, ctx.num_ranks);
  auto send = be().allocate(s.send_elems * 4);
  auto recv = be().allocate(s.recv_elems * 4);
  auto timer = be().timer();
  std::vector<double> one, eight;
  for (int i = 0; i < 5; ++i) {
    for (int batch : {1, 8}) {
      world->barrier();
      timer->start();
      timer->enter();
      for (int b = 0; b < batch; ++b) c.launch(*world, send->data(), recv->data(), s, ctx);
      world->synchronize();
      timer->stop();
      EXPECT_GT(timer->total_us(), 0.0);
      EXPECT_LE(timer->inside_us(), timer->total_us());
      (batch == 1 ? one : eight).push_back(timer->total_us());
    }
  }
  std::sort(one.begin(), one.end());
  std::sort(eight.begin(), eight.end());
  // Eight back-to-back operations take longer than one (64 MiB: bandwidth-bound, not launch-bound).
  EXPECT_GT(eight[2], 2.0 * one[2]) << "median of 1: " << one[2] << " us, of 8: " << eight[2] << " us";
  // Without a synchronize the timer waits itself.
  timer->start();
  timer->enter();
  c.launch(*world, send->data(), recv->data(), s, ctx);
  timer->stop();
  EXPECT_GT(timer->total_us(), 0.0);
  // Without enter() the entry is the start event: inside == total.
  world->barrier();
  timer->start();
  c.launch(*world, send->data(), recv->data(), s, ctx);
  world->synchronize();
  timer->stop();
  EXPECT_GT(timer->total_us(), 0.0);
  EXPECT_FLOAT_EQ(static_cast<float>(timer->inside_us()), static_cast<float>(timer->total_us()));
  // The runner holds the stream (run/timed_sample.hpp): 20 ms of host time between start and the
  // launch are not timed, since the device starts only once the launch is enqueued.
  world->barrier();
  timer->hold();
  be().device_barrier();
  timer->start();
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  c.launch(*world, send->data(), recv->data(), s, ctx);
  timer->release();
  world->synchronize();
  timer->stop();
  EXPECT_LT(timer->total_us(), 5000.0);
  // An injected delay releases the stream first: enter() after it is recorded 20 ms after start
  // on the device too, so the delay is in total and not inside.
  world->barrier();
  timer->hold();
  be().device_barrier();
  timer->start();
  timer->release();
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  timer->enter();
  c.launch(*world, send->data(), recv->data(), s, ctx);
  world->synchronize();
  timer->stop();
  EXPECT_GE(timer->total_us(), 19000.0);
  EXPECT_LT(timer->inside_us(), 5000.0);
}

TEST_F(NcclBackendTest, ForcedAlgorithmIsReported) {
  auto ring = make("plain", "ring");
  EXPECT_EQ(ring->provenance().at("nccl_algo"), "ring");
  auto world = ring->world();
  coll::CaseContext ctx;
  EXPECT_EQ(sum_over_ranks(run_and_verify_host(*ring, *world, coll::find_collective("allreduce"), ctx, 1 << 20)), 0u);
  EXPECT_EQ(world->algo_used(), "ring");
  EXPECT_EQ(sum_over_ranks(run_and_verify_host(*ring, *world, coll::find_collective("alltoall"), ctx, 1 << 20)), 0u);
  EXPECT_EQ(world->algo_used(), "");  // point-to-point: NCCL_ALGO does not apply
  auto automatic = be().world();
  EXPECT_EQ(sum_over_ranks(run_and_verify_host(be(), *automatic, coll::find_collective("allreduce"), ctx, 1 << 20)),
            0u);
  EXPECT_EQ(automatic->algo_used(), "");
  // The environment is restored after communicator creation.
  EXPECT_EQ(std::getenv("NCCL_ALGO") == nullptr, be().provenance().at("nccl_algo").empty());
}

// On window buffers NCCL 2.28 tries its symmetric kernels before NCCL_ALGO's choice, so a forced
// algorithm is not known to have run there: algo_used stays unknown.
TEST_F(NcclBackendTest, ForcedAlgorithmOnWindowBuffersIsNotClaimed) {
  auto ring = make("symmetric", "ring");
  auto world = ring->world();
  coll::CaseContext ctx;
  EXPECT_EQ(sum_over_ranks(run_and_verify_host(*ring, *world, coll::find_collective("allreduce"), ctx, 1 << 20)), 0u);
  EXPECT_EQ(world->algo_used(), "");
}

TEST_F(NcclBackendTest, HierarchicalCompositionOverNcclCommunicators) {
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  auto world = be().world();
  auto domain = be().split(0, rank);  // one domain: the composition degenerates but runs every step
  auto cross = be().split(rank, 0);
  backend::HierarchicalComm h(be(), *domain, *cross, *world);
  for (const char* name : {"allreduce", "alltoall"}) {
    coll::CaseContext ctx;
    ctx.dtype = Dtype::float32;
    EXPECT_EQ(sum_over_ranks(run_and_verify_host(be(), h, coll::find_collective(name), ctx, 1 << 20)), 0u) << name;
  }
}

// The strided copy the hierarchical all-to-all packs with (one cudaMemcpy2DAsync): pitches wider
// than the rows, both ways, against the same block transposition on the host. One GPU suffices:
// the one-domain composition above never takes a pitch larger than its width.
TEST_F(NcclBackendTest, StridedCopyTransposesBlocks) {
  auto world = be().world();
  constexpr std::size_t a = 3, b = 5, block = 12;  // bytes
  std::vector<std::uint32_t> host(a * b * block / 4);
  for (std::size_t i = 0; i < host.size(); ++i) host[i] = static_cast<std::uint32_t>(i * 2654435761u);
  auto src = be().allocate(host.size() * 4);
  auto dst = be().allocate(host.size() * 4);
  be().upload(*src, host.data(), host.size() * 4);
  const backend::RowCopy rows = [&](void* d, std::size_t dp, const void* s, std::size_t sp, std::size_t w,
                                    std::size_t r) { world->local_copy_rows(d, dp, s, sp, w, r); };
  for (const bool wide : {true, false}) {  // a x b (3 copies of 5 rows) and b x a (3 copies of 5 rows back)
    const std::size_t ra = wide ? a : b, rb = wide ? b : a;
    backend::transpose_blocks(rows, dst->data(), src->data(), ra, rb, block);
    world->synchronize();
    std::vector<std::uint32_t> got(host.size());
    be().download(got.data(), *dst, got.size() * 4);
    for (std::size_t i = 0; i < ra; ++i) {
      for (std::size_t j = 0; j < rb; ++j) {
        EXPECT_EQ(std::memcmp(reinterpret_cast<const char*>(got.data()) + (j * ra + i) * block,
                              reinterpret_cast<const char*>(host.data()) + (i * rb + j) * block, block),
                  0)
            << ra << "x" << rb << " block " << i << "," << j;
      }
    }
  }
}

TEST_F(NcclBackendTest, ErrorsCarryTheCallAndNcclText) {
  auto world = be().world();
  auto buf = be().allocate(1024);
  try {
    world->run({.op = NcclOp::broadcast,
                .root = world->size() + 5,
                .send = buf->data(),
                .recv = buf->data(),
                .count = 16});  // no such root
    world->synchronize();
    FAIL() << "an invalid root was accepted";
  } catch (const RuntimeFailure& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("ncclBroadcast"), std::string::npos) << what;
    EXPECT_NE(what.find("invalid"), std::string::npos) << what;
  }
}

TEST(NcclBackendOptions, BadOptionsAreInputErrors) {
  EXPECT_THROW(make("host"), InputError);
  EXPECT_THROW(make("plain", "cb-multimem"), InputError);
  EXPECT_THROW(make("plain", "symmetric"), InputError);  // needs --buffers symmetric
}

// Runs in its own process (ctest gpu.abort.*): the abort request is process-wide and final.
TEST(NcclAbort, RequestAbortsCommunicatorsAndThrows) {
  auto b = make("plain");
  auto world = b->world();
  auto buf = b->allocate(1 << 20);
  world->run({.op = NcclOp::allreduce, .send = buf->data(), .recv = buf->data(), .count = (1 << 20) / 4});
  nccl::request_abort();
  EXPECT_THROW(world->synchronize(), RuntimeFailure);
  EXPECT_THROW(world->run({.op = NcclOp::allreduce, .send = buf->data(), .recv = buf->data(), .count = 16}),
               RuntimeFailure);
}

// Comm::group_start/group_end: an all-to-all on one communicator and an all-reduce on another in
// one NCCL group (ep-dp-concurrent's launch), results after synchronize().
TEST_F(NcclBackendTest, GroupSpansCommunicators) {
  int me = 0;
  int n = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &me);
  MPI_Comm_size(MPI_COMM_WORLD, &n);
  if (n % 2 != 0) GTEST_SKIP() << "needs an even rank count";
  const int m = n / 2;
  auto domain = be().split(me / m, me);
  auto cross = be().split(me % m, me / m);
  ASSERT_FALSE(domain->group_waiver().has_value());
  std::vector<std::int32_t> a2a(static_cast<std::size_t>(m)), ar(3, me + 1);
  for (int j = 0; j < m; ++j) a2a[static_cast<std::size_t>(j)] = me * 100 + j;
  auto a2a_in = be().allocate(a2a.size() * 4);
  auto a2a_out = be().allocate(a2a.size() * 4);
  auto ar_buf = be().allocate(ar.size() * 4);
  be().upload(*a2a_in, a2a.data(), a2a.size() * 4);
  be().upload(*ar_buf, ar.data(), ar.size() * 4);
  domain->group_start();
  domain->run(
      {.op = NcclOp::alltoall, .dtype = Dtype::int32, .send = a2a_in->data(), .recv = a2a_out->data(), .count = 1});
  cross->run(
      {.op = NcclOp::allreduce, .dtype = Dtype::int32, .send = ar_buf->data(), .recv = ar_buf->data(), .count = 3});
  domain->group_end();
  domain->synchronize();
  be().download(a2a.data(), *a2a_out, a2a.size() * 4);
  be().download(ar.data(), *ar_buf, ar.size() * 4);
  const int d = me / m;
  for (int src = 0; src < m; ++src) EXPECT_EQ(a2a[static_cast<std::size_t>(src)], (d * m + src) * 100 + me % m);
  for (const auto v : ar) EXPECT_EQ(v, (me % m + 1) + (m + me % m + 1));
  EXPECT_THROW(domain->group_end(), Error);
}

}  // namespace
