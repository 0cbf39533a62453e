// Every collective x dtype x reduction x in/out-of-place verifies exactly on the MPI backend at
// several sizes (including sizes that do not split evenly), on all ranks of the job.
#include <gtest/gtest.h>
#include <mpi.h>

#include <chrono>
#include <thread>

#include "collbench/backend/registry.hpp"
#include "collbench/coll/collective.hpp"
#include "collbench/coll/pattern.hpp"
#include "mpi_test_util.hpp"

namespace {

using namespace collbench;

// Runs one case and returns this rank's wrong-element count.
std::uint64_t run_and_verify(backend::Backend& be, backend::Comm& comm, const coll::Collective& c, Dtype dtype,
                             Redop redop, bool in_place, std::uint64_t bytes) {
  coll::CaseContext ctx;
  ctx.dtype = dtype;
  ctx.redop = redop;
  ctx.rank = comm.rank();
  ctx.num_ranks = comm.size();
  ctx.in_place = in_place;
  const auto shape = c.shape(bytes, dtype, ctx.rank, ctx.num_ranks);
  const std::size_t elem = dtype_size(dtype);
  std::vector<unsigned char> result;
  if (in_place) {
    std::vector<unsigned char> host(std::max<std::size_t>(shape.in_place_elems() * elem, 1), 0);
    const std::size_t in_off = c.in_place_input_offset(shape, ctx);
    c.fill(host.data() + in_off * elem, shape, ctx);
    auto buf = be.allocate(host.size());
    be.upload(*buf, host.data(), host.size());
    auto* base = static_cast<unsigned char*>(buf->data());
    c.launch(comm, base + in_off * elem, base, shape, ctx);
    const std::size_t out_off = c.in_place_result_offset(shape, ctx, comm);
    result.assign(base + out_off * elem, base + (out_off + shape.recv_elems) * elem);
  } else {
    std::vector<unsigned char> host(std::max<std::size_t>(shape.send_elems * elem, 1), 0);
    c.fill(host.data(), shape, ctx);
    auto send = be.allocate(host.size());
    be.upload(*send, host.data(), host.size());
    auto recv = be.allocate(std::max<std::size_t>(shape.recv_elems * elem, 1));
    c.launch(comm, send->data(), recv->data(), shape, ctx);
    const auto* r = static_cast<const unsigned char*>(recv->data());
    result.assign(r, r + shape.recv_elems * elem);
  }
  return c.verify(result.data(), shape, ctx);
}

class CollectivesMpi : public ::testing::Test {
 protected:
  void SetUp() override {
    // More ranks than cores: poll with yield, as the runner's automatic choice would.
    int n = 0;
    MPI_Comm_size(MPI_COMM_WORLD, &n);
    backend::BackendOptions o;
    if (static_cast<unsigned>(n) > std::thread::hardware_concurrency()) o.progress = backend::Progress::yield;
    backend_ = backend::make_backend("mpi", o);
    world_ = backend_->world();
  }
  std::unique_ptr<backend::Backend> backend_;
  std::unique_ptr<backend::Comm> world_;
};

TEST_F(CollectivesMpi, EveryCollectiveDtypeAndPlacementVerifies) {
  // 1000 B does not split evenly across 3+ ranks or into 8-byte elements.
  const std::vector<std::uint64_t> sizes{0, 8, 1000, 4096, 65536 + 24};
  int cases = 0;
  for (const auto& c : coll::collective_registry()) {
    if (c->uses_levels()) continue;  // needs the runner's levels (tests/mpi/test_ep_dp_mpi.cpp)
    for (const auto& d : all_dtypes()) {
      const std::vector<Redop> redops = c->has_redop()
                                            ? std::vector<Redop>{Redop::sum, Redop::prod, Redop::min, Redop::max}
                                            : std::vector<Redop>{Redop::sum};
      for (Redop r : redops) {
        for (bool in_place : {false, true}) {
          if (in_place && !c->supports_in_place()) continue;
          for (auto bytes : sizes) {
            const auto wrong =
                mpitest::sum_over_ranks(run_and_verify(*backend_, *world_, *c, d.dtype, r, in_place, bytes));
            EXPECT_EQ(wrong, 0u) << c->name() << " " << d.name << " " << to_string(r) << (in_place ? " in-place " : " ")
                                 << bytes << " B";
            ++cases;
          }
        }
      }
    }
  }
  EXPECT_GT(cases, 300);
}

TEST_F(CollectivesMpi, ResultsFromTheWrongPeerAreCounted) {
  // Feed the all-to-all verifier a result that pretends every block came from rank 0: with
  // more than one rank, blocks from other peers must count as wrong.
  const auto& c = coll::find_collective("alltoall");
  coll::CaseContext ctx;
  ctx.dtype = Dtype::int32;
  ctx.rank = world_->rank();
  ctx.num_ranks = world_->size();
  const auto shape = c.shape(4096, ctx.dtype, ctx.rank, ctx.num_ranks);
  std::vector<std::int32_t> fake(shape.recv_elems);
  const std::size_t per_peer = shape.count / static_cast<std::size_t>(ctx.num_ranks);
  for (std::size_t i = 0; i < fake.size(); ++i) {
    fake[i] = static_cast<std::int32_t>(coll::move_value(ctx.dtype, 0, ctx.rank, i % per_peer));
  }
  const auto wrong = c.verify(fake.data(), shape, ctx);
  EXPECT_GT(wrong, 0u);
  EXPECT_LE(wrong, static_cast<std::uint64_t>(per_peer) * static_cast<std::uint64_t>(ctx.num_ranks - 1));
}

TEST_F(CollectivesMpi, BlockLevelIsTheRanksBlockOfConsecutiveRanksKeptAfterFirstUse) {
  const int n = world_->size();
  const int r = world_->rank();
  EXPECT_EQ(world_->block_level(n), world_.get());
  EXPECT_EQ(world_->block_level(0), nullptr);
  if (n > 2) {
    EXPECT_EQ(world_->block_level(n - 1), nullptr);  // does not divide n
  }
  backend::Comm* one = world_->block_level(1);
  ASSERT_NE(one, nullptr);
  EXPECT_EQ(one->size(), 1);
  EXPECT_EQ(one->rank(), 0);
  if (n % 2 == 0) {
    backend::Comm* half = world_->block_level(n / 2);
    ASSERT_NE(half, nullptr);
    EXPECT_EQ(half, world_->block_level(n / 2));  // created once
    EXPECT_EQ(half->size(), n / 2);
    EXPECT_EQ(half->rank(), r % (n / 2));
    // An all-to-all inside the block reaches the block's ranks only: the world ranks arrive.
    std::vector<std::int32_t> send(static_cast<std::size_t>(n / 2), r), recv(static_cast<std::size_t>(n / 2), -1);
    half->run({.op = NcclOp::alltoall, .dtype = Dtype::int32, .send = send.data(), .recv = recv.data(), .count = 1});
    for (int i = 0; i < n / 2; ++i) EXPECT_EQ(recv[static_cast<std::size_t>(i)], r / (n / 2) * (n / 2) + i);
  }
}

TEST_F(CollectivesMpi, YieldProgressGivesTheSameResults) {
  backend::BackendOptions o;
  o.progress = backend::Progress::yield;
  auto be = backend::make_backend("mpi", o);
  auto comm = be->world();
  for (const char* name : {"allreduce", "alltoall", "alltoallv", "reducescatter", "allgather"}) {
    const auto& c = coll::find_collective(name);
    EXPECT_EQ(mpitest::sum_over_ranks(run_and_verify(*be, *comm, c, Dtype::float32, Redop::sum, false, 8192)), 0u)
        << name;
  }
}

// The timer: without enter() the whole interval is inside the collective; enter() after a delay
// moves the entry (the delay counts in total, not inside).
TEST(WallTimerMpi, InsideEqualsTotalWithoutEnterAndExcludesWhatRanBeforeEnter) {
  auto be = backend::make_backend("mpi", backend::BackendOptions{});
  auto timer = be->timer();
  timer->start();
  std::this_thread::sleep_for(std::chrono::milliseconds(2));
  timer->stop();
  EXPECT_GE(timer->total_us(), 2000.0);
  EXPECT_EQ(timer->inside_us(), timer->total_us());
  timer->start();
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  timer->enter();
  timer->stop();
  EXPECT_GE(timer->total_us(), 20000.0);
  EXPECT_LT(timer->inside_us(), timer->total_us() - 19000.0);
  EXPECT_GE(timer->inside_us(), 0.0);
}

}  // namespace
