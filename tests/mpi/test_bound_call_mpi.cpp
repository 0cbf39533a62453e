// The timed loop's bound launches on the MPI backend (Collective::bind_launch, Comm::bind):
// every single-operation family gives byte for byte the result of its unbound launch, in and out
// of place, blocking (spin: the MPI call bound with converted arguments) and non-blocking (yield:
// the method through the bound call), with a soft-float type and user-defined op among them; a
// family without an override (sendrecv, all-to-all-v) through the default binding; and a count
// beyond MPI's int is refused at bind time with the existing message, before any MPI call.
#include <gtest/gtest.h>
#include <mpi.h>

#include <algorithm>
#include <climits>
#include <cstdint>
#include <string>
#include <vector>

#include "collbench/backend/registry.hpp"
#include "collbench/coll/collective.hpp"
#include "collbench/core/error.hpp"

namespace {

using namespace collbench;

struct Launched {
  std::vector<unsigned char> result;
  std::uint64_t wrong = 0;
};

// One launch of `c` on freshly filled buffers, unbound or through bind_launch; this rank's result.
Launched run_once(backend::Backend& be, backend::Comm& comm, const coll::Collective& c, const coll::CaseContext& ctx,
                  std::uint64_t bytes, bool bound) {
  const auto shape = c.shape(bytes, ctx.dtype, ctx.rank, ctx.num_ranks);
  const std::size_t elem = dtype_size(ctx.dtype);
  const std::size_t elems = ctx.in_place ? shape.in_place_elems() : shape.send_elems;
  const std::size_t in_off = ctx.in_place ? c.in_place_input_offset(shape, ctx) : 0;
  auto first = be.allocate(std::max<std::size_t>(elems * elem, 1));
  auto* base = static_cast<unsigned char*>(first->data());
  std::fill(base, base + first->bytes(), 0);
  c.fill(base + in_off * elem, shape, ctx);
  auto second = ctx.in_place ? nullptr : be.allocate(std::max<std::size_t>(shape.recv_elems * elem, 1));
  const void* send = base + in_off * elem;
  auto* recv = ctx.in_place ? base : static_cast<unsigned char*>(second->data());
  if (bound) {
    c.bind_launch(comm, send, recv, shape, ctx)();
  } else {
    c.launch(comm, send, recv, shape, ctx);
  }
  const std::size_t out_off = ctx.in_place ? c.in_place_result_offset(shape, ctx, comm) : 0;
  Launched r;
  r.result.assign(recv + out_off * elem, recv + (out_off + shape.recv_elems) * elem);
  r.wrong = c.verify(r.result.data(), shape, ctx);
  return r;
}

class BoundCallMpi : public ::testing::TestWithParam<backend::Progress> {
 protected:
  void SetUp() override {
    backend::BackendOptions o;
    o.progress = GetParam();
    backend_ = backend::make_backend("mpi", o);
    world_ = backend_->world();
  }
  [[nodiscard]] coll::CaseContext context(Dtype dtype, Redop redop, bool in_place) const {
    coll::CaseContext ctx;
    ctx.dtype = dtype;
    ctx.redop = redop;
    ctx.rank = world_->rank();
    ctx.num_ranks = world_->size();
    ctx.in_place = in_place;
    ctx.root = world_->size() - 1;
    return ctx;
  }
  std::unique_ptr<backend::Backend> backend_;
  std::unique_ptr<backend::Comm> world_;
};

TEST_P(BoundCallMpi, BoundLaunchGivesTheUnboundResultByteForByte) {
  int cases = 0;
  for (const std::string name : {"allreduce", "alltoall", "allgather", "reducescatter", "broadcast", "sendrecv"}) {
    const auto& c = coll::find_collective(name);
    for (const Dtype dtype : {Dtype::float32, Dtype::bfloat16, Dtype::int64}) {
      for (const bool in_place : {false, true}) {
        if (in_place && !c.supports_in_place()) continue;
        const auto ctx = context(dtype, c.has_redop() ? Redop::max : Redop::sum, in_place);
        for (const std::uint64_t bytes : {64u, 4096u + 24u}) {
          const Launched unbound = run_once(*backend_, *world_, c, ctx, bytes, false);
          const Launched bound = run_once(*backend_, *world_, c, ctx, bytes, true);
          const std::string what = name + " " + std::string(to_string(dtype)) + (in_place ? " in place " : " ") +
                                   std::to_string(bytes) + " B";
          EXPECT_EQ(unbound.wrong, 0u) << what;
          EXPECT_EQ(bound.wrong, 0u) << what;
          EXPECT_FALSE(bound.result.empty()) << what;
          EXPECT_EQ(bound.result, unbound.result) << what;
          ++cases;
        }
      }
    }
  }
  EXPECT_EQ(cases, 66);  // 6 families x 3 dtypes x 2 sizes, in place for all but sendrecv
}

TEST_P(BoundCallMpi, CountBeyondMpiIntIsRefusedAtBindTime) {
  const std::size_t over = static_cast<std::size_t>(INT_MAX) + 1;
  const std::string message =
      "message of 2147483648 elements exceeds MPI's int count limit (2147483647); use a "
      "smaller size or a wider dtype";
  auto expect_refused = [&](auto bind, const std::string& expected) {
    try {
      (void)bind();
      ADD_FAILURE() << "not refused: " << expected;
    } catch (const InputError& e) {
      EXPECT_EQ(std::string(e.what()), expected);
    }
  };
  // No buffers at all: a bind that reached MPI would crash, not throw.
  auto& comm = *world_;
  expect_refused([&] { return comm.bind({.op = NcclOp::allreduce, .count = over}); }, message);
  expect_refused([&] { return comm.bind({.op = NcclOp::alltoall, .dtype = Dtype::float8e5m2, .count = over}); },
                 message);
  expect_refused([&] { return comm.bind({.op = NcclOp::broadcast, .dtype = Dtype::float8e5m2, .count = over}); },
                 message);
  // reduce-scatter and all-gather: also the whole buffer, recvcount x ranks (2147483648 for
  // 2 and 4 ranks alike).
  const std::size_t per_rank = over / static_cast<std::size_t>(comm.size());
  expect_refused(
      [&] { return comm.bind({.op = NcclOp::reducescatter, .dtype = Dtype::float8e5m2, .count = per_rank}); }, message);
  expect_refused([&] { return comm.bind({.op = NcclOp::allgather, .dtype = Dtype::float8e5m2, .count = per_rank}); },
                 message);
  // Through the family: all-to-all's per-peer count.
  coll::Shape shape;
  shape.count = over * static_cast<std::size_t>(comm.size());
  const auto ctx = context(Dtype::float8e5m2, Redop::sum, false);
  expect_refused([&] { return coll::find_collective("alltoall").bind_launch(comm, nullptr, nullptr, shape, ctx); },
                 message);
}

TEST_P(BoundCallMpi, SynchronizeIsANoOpOnMpiCommunicators) {
  EXPECT_TRUE(world_->synchronize_is_noop());
  backend::Comm* block = world_->block_level(1);
  ASSERT_NE(block, nullptr);
  EXPECT_TRUE(block->synchronize_is_noop());
}

std::string progress_name(const ::testing::TestParamInfo<backend::Progress>& param) {
  return param.param == backend::Progress::spin ? "spin" : "yield";
}

INSTANTIATE_TEST_SUITE_P(Progress, BoundCallMpi, ::testing::Values(backend::Progress::spin, backend::Progress::yield),
                         progress_name);

}  // namespace
