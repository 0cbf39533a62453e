// The MPI backend's posted all-to-all (--algo linear, backend/mpi/mpi_alltoall_posted.hpp): exact
// results on communicators of 2 and 3 ranks (the world, and a split of it at 4 ranks), in and out
// of place, uniform and with uneven per-peer counts (zeros included), alone and inside a group;
// the communicator says the schedule ran, the library's does not.
#include <gtest/gtest.h>
#include <mpi.h>

#include <algorithm>
#include <cstdint>
#include <memory>
#include <numeric>
#include <thread>
#include <vector>

#include "collbench/backend/mpi/mpi_alltoall_posted.hpp"
#include "collbench/backend/registry.hpp"
#include "collbench/coll/collective.hpp"
#include "mpi_test_util.hpp"

namespace {

using namespace collbench;

// The value rank `from` sends to rank `to` at element i of their block.
std::int64_t value(int from, int to, std::size_t i) {
  return 1'000'000 * from + 1'000 * to + static_cast<std::int64_t>(i);
}

// One case of collective `c` on `comm` (the runner's in-place offsets), this rank's wrong elements.
std::uint64_t run_and_verify(const coll::Collective& c, backend::Comm& comm, const coll::CaseContext& ctx,
                             std::uint64_t bytes) {
  const auto shape = c.shape(bytes, ctx.dtype, ctx.rank, ctx.num_ranks);
  const std::size_t elem = dtype_size(ctx.dtype);
  if (ctx.in_place) {
    std::vector<unsigned char> buf(std::max<std::size_t>(shape.in_place_elems() * elem, 1), 0);
    const std::size_t in_off = c.in_place_input_offset(shape, ctx);
    c.fill(buf.data() + in_off * elem, shape, ctx);
    c.launch(comm, buf.data() + in_off * elem, buf.data(), shape, ctx);
    return c.verify(buf.data() + c.in_place_result_offset(shape, ctx, comm) * elem, shape, ctx);
  }
  std::vector<unsigned char> send(std::max<std::size_t>(shape.send_elems * elem, 1), 0);
  std::vector<unsigned char> recv(std::max<std::size_t>(shape.recv_elems * elem, 1), 0);
  c.fill(send.data(), shape, ctx);
  c.launch(comm, send.data(), recv.data(), shape, ctx);
  return c.verify(recv.data(), shape, ctx);
}

class PostedAlltoallMpi : public ::testing::Test {
 protected:
  void SetUp() override {
    backend::BackendOptions o;
    o.algo = std::string(backend::kPostedAlltoallAlgo);
    if (static_cast<unsigned>(mpitest::world_size()) > std::thread::hardware_concurrency()) {
      o.progress = backend::Progress::yield;
    }
    posted_ = backend::make_backend("mpi", o);
    world_ = posted_->world();
  }
  // Communicators of 2 and 3 ranks that this rank belongs to: the world when it has 2 or 3
  // ranks, and at 4 ranks the splits {0,1,2}+{3} and {0,1}+{2,3} (the lone rank gets size 1).
  std::vector<std::unique_ptr<backend::Comm>> small_comms() {
    std::vector<std::unique_ptr<backend::Comm>> out;
    const int r = mpitest::world_rank();
    out.push_back(posted_->split(r < 3 ? 0 : 1, r));
    out.push_back(posted_->split(r < 2 ? 0 : 1, r));
    out.push_back(posted_->world());
    return out;
  }
  std::unique_ptr<backend::Backend> posted_;
  std::unique_ptr<backend::Comm> world_;
};

// Uniform all-to-all of `per_peer` int64 elements: every block is the sender's, exactly.
std::uint64_t wrong_uniform(backend::Comm& comm, std::size_t per_peer, bool in_place) {
  const int n = comm.size();
  const int r = comm.rank();
  std::vector<std::int64_t> send(per_peer * static_cast<std::size_t>(n));
  for (int p = 0; p < n; ++p) {
    for (std::size_t i = 0; i < per_peer; ++i) send[static_cast<std::size_t>(p) * per_peer + i] = value(r, p, i);
  }
  std::vector<std::int64_t> recv(send.size(), -1);
  if (in_place) {
    recv = send;
    comm.run(
        {.op = NcclOp::alltoall, .dtype = Dtype::int64, .send = recv.data(), .recv = recv.data(), .count = per_peer});
  } else {
    comm.run(
        {.op = NcclOp::alltoall, .dtype = Dtype::int64, .send = send.data(), .recv = recv.data(), .count = per_peer});
  }
  std::uint64_t wrong = 0;
  for (int p = 0; p < n; ++p) {
    for (std::size_t i = 0; i < per_peer; ++i)
      wrong += recv[static_cast<std::size_t>(p) * per_peer + i] != value(p, r, i);
  }
  return wrong;
}

TEST_F(PostedAlltoallMpi, UniformBlocksArriveExactlyOnTwoAndThreeRanksInAndOutOfPlace) {
  int sizes_seen = 0;
  for (auto& comm : small_comms()) {
    EXPECT_EQ(comm->algo_used(), "linear");
    for (std::size_t per_peer : {std::size_t{0}, std::size_t{1}, std::size_t{7}, std::size_t{4099}}) {
      for (bool in_place : {false, true}) {
        const auto wrong = mpitest::sum_over_ranks(wrong_uniform(*comm, per_peer, in_place));
        EXPECT_EQ(wrong, 0u) << comm->size() << " ranks, " << per_peer << " per peer" << (in_place ? ", in place" : "");
      }
    }
    sizes_seen |= comm->size() == 2 ? 1 : comm->size() == 3 ? 2 : 0;
  }
  int any = 0;
  MPI_Allreduce(&sizes_seen, &any, 1, MPI_INT, MPI_BOR, MPI_COMM_WORLD);
  EXPECT_NE(any & 1, 0) << "no communicator of 2 ranks was tested";
  if (mpitest::world_size() >= 3) {
    EXPECT_NE(any & 2, 0) << "no communicator of 3 ranks was tested";
  }
}

TEST_F(PostedAlltoallMpi, EveryDtypeVerifiesThroughTheAlltoallCollective) {
  const auto& c = coll::find_collective("alltoall");
  for (auto& comm : small_comms()) {
    for (const auto& d : all_dtypes()) {
      for (bool in_place : {false, true}) {
        for (std::uint64_t bytes : {std::uint64_t{8}, std::uint64_t{1000}, std::uint64_t{65536 + 24}}) {
          coll::CaseContext ctx;
          ctx.dtype = d.dtype;
          ctx.rank = comm->rank();
          ctx.num_ranks = comm->size();
          ctx.in_place = in_place;
          const auto wrong = mpitest::sum_over_ranks(run_and_verify(c, *comm, ctx, bytes));
          EXPECT_EQ(wrong, 0u) << comm->size() << " ranks " << d.name << " " << bytes << " B"
                               << (in_place ? " in place" : "");
        }
      }
    }
  }
}

// Rank a sends (a + b) % 3 elements to rank b (zero for some pairs), packed in peer order.
std::size_t uneven(int a, int b) {
  return static_cast<std::size_t>((a + b) % 3);
}

std::uint64_t wrong_uneven(backend::Comm& comm) {
  const int n = comm.size();
  const int r = comm.rank();
  std::vector<std::size_t> sc(static_cast<std::size_t>(n)), rc(sc.size()), sd(sc.size()), rd(sc.size());
  for (int p = 0; p < n; ++p) {
    sc[static_cast<std::size_t>(p)] = uneven(r, p);
    rc[static_cast<std::size_t>(p)] = uneven(p, r);
  }
  std::exclusive_scan(sc.begin(), sc.end(), sd.begin(), std::size_t{0});
  std::exclusive_scan(rc.begin(), rc.end(), rd.begin(), std::size_t{0});
  std::vector<std::int64_t> send(std::max<std::size_t>(std::accumulate(sc.begin(), sc.end(), std::size_t{0}), 1));
  std::vector<std::int64_t> recv(std::max<std::size_t>(std::accumulate(rc.begin(), rc.end(), std::size_t{0}), 1), -1);
  for (int p = 0; p < n; ++p) {
    for (std::size_t i = 0; i < sc[static_cast<std::size_t>(p)]; ++i)
      send[sd[static_cast<std::size_t>(p)] + i] = value(r, p, i);
  }
  const backend::PeerLayout peers{sc, sd, rc, rd};
  comm.run({.op = NcclOp::alltoallv, .dtype = Dtype::int64, .send = send.data(), .recv = recv.data(), .peers = &peers});
  std::uint64_t wrong = 0;
  for (int p = 0; p < n; ++p) {
    for (std::size_t i = 0; i < rc[static_cast<std::size_t>(p)]; ++i)
      wrong += recv[rd[static_cast<std::size_t>(p)] + i] != value(p, r, i);
  }
  return wrong;
}

TEST_F(PostedAlltoallMpi, UnevenCountsWithZerosArriveExactly) {
  for (auto& comm : small_comms()) {
    EXPECT_EQ(mpitest::sum_over_ranks(wrong_uneven(*comm)), 0u) << comm->size() << " ranks";
  }
}

TEST_F(PostedAlltoallMpi, InsideAGroupTheExchangeCompletesAtGroupEnd) {
  // In place inside a group: the staged sends must outlive the call until group_end.
  const int n = world_->size();
  const int r = world_->rank();
  const std::size_t per_peer = 33;
  std::vector<std::int64_t> buf(per_peer * static_cast<std::size_t>(n));
  for (int p = 0; p < n; ++p) {
    for (std::size_t i = 0; i < per_peer; ++i) buf[static_cast<std::size_t>(p) * per_peer + i] = value(r, p, i);
  }
  world_->group_start();
  world_->run(
      {.op = NcclOp::alltoall, .dtype = Dtype::int64, .send = buf.data(), .recv = buf.data(), .count = per_peer});
  world_->group_end();
  std::uint64_t wrong = 0;
  for (int p = 0; p < n; ++p) {
    for (std::size_t i = 0; i < per_peer; ++i)
      wrong += buf[static_cast<std::size_t>(p) * per_peer + i] != value(p, r, i);
  }
  EXPECT_EQ(mpitest::sum_over_ranks(wrong), 0u);
}

TEST_F(PostedAlltoallMpi, TheLibrarysScheduleSaysNothingAndTheBoundCallRunsThePostedOne) {
  auto library = backend::make_backend("mpi", backend::BackendOptions{});
  EXPECT_EQ(library->world()->algo_used(), "");
  const int n = world_->size();
  const int r = world_->rank();
  std::vector<std::int64_t> send(static_cast<std::size_t>(n)), recv(send.size(), -1);
  for (int p = 0; p < n; ++p) send[static_cast<std::size_t>(p)] = value(r, p, 0);
  const backend::BoundCall call = world_->bind(
      {.op = NcclOp::alltoall, .dtype = Dtype::int64, .send = send.data(), .recv = recv.data(), .count = 1});
  call();
  std::uint64_t wrong = 0;
  for (int p = 0; p < n; ++p) wrong += recv[static_cast<std::size_t>(p)] != value(p, r, 0);
  EXPECT_EQ(mpitest::sum_over_ranks(wrong), 0u);
}

}  // namespace
