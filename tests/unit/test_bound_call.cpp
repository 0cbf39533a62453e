// Bound calls (backend/bound_call.hpp): the function receives exactly the bound arguments, also
// from a copy; Comm's default bind() runs the operation with the arguments as given, only when the
// bound call runs; each single-operation family binds the operation its launch() runs. The MPI communicator's bound
// calls: tests/mpi/test_bound_call_mpi.cpp.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "collbench/backend/bound_call.hpp"
#include "collbench/backend/operation.hpp"
#include "collbench/coll/collective.hpp"

using namespace collbench;

namespace {

struct Recorded {
  std::vector<int> values;
};

struct ThreeInts {
  Recorded* out;
  int a, b, c;
};

void record_three(const ThreeInts& t) {
  t.out->values.insert(t.out->values.end(), {t.a, t.b, t.c});
}

// One call a communicator received: which method, and every argument.
struct Call {
  std::string op;
  const void* send = nullptr;
  const void* recv = nullptr;
  std::size_t count = 0;
  Dtype dtype = Dtype::float32;
  Redop redop = Redop::sum;
  int root = 0;
  int send_peer = 0;
  int recv_peer = 0;
  bool operator==(const Call&) const = default;
};

// A communicator of 4 ranks (this one rank 1) that records its calls and moves no data.
class RecordingComm final : public backend::Comm {
 public:
  std::vector<Call> calls;
  [[nodiscard]] int rank() const override { return 1; }
  [[nodiscard]] int size() const override { return 4; }
  // Every field of the operation as the communicator received it.
  void run(const backend::Operation& o) override {
    calls.push_back(
        {std::string(to_string(o.op)), o.send, o.recv, o.count, o.dtype, o.redop, o.root, o.send_peer, o.recv_peer});
  }
  [[nodiscard]] std::size_t reduce_scatter_in_place_offset(std::size_t) const override { return 0; }
  void barrier() override { calls.push_back({"barrier"}); }
};

coll::CaseContext context(Dtype dtype, Redop redop, int root = 0) {
  coll::CaseContext ctx;
  ctx.dtype = dtype;
  ctx.redop = redop;
  ctx.rank = 1;
  ctx.num_ranks = 4;
  ctx.root = root;
  return ctx;
}

// The calls that launch() makes and the calls that bind_launch() then one run of the bound call
// make, on fresh recording communicators; nothing is called at bind time.
void expect_bound_like_launch(const std::string& name, std::uint64_t bytes, const coll::CaseContext& ctx) {
  const auto& c = coll::find_collective(name);
  const coll::Shape shape = c.shape(bytes, ctx.dtype, ctx.rank, ctx.num_ranks);
  char send[8];
  char recv[8];
  RecordingComm direct;
  c.launch(direct, send, recv, shape, ctx);
  RecordingComm bound;
  const backend::BoundCall call = c.bind_launch(bound, send, recv, shape, ctx);
  EXPECT_TRUE(bound.calls.empty()) << name;
  call();
  call();
  ASSERT_EQ(direct.calls.size(), 1u) << name;
  EXPECT_EQ(bound.calls, std::vector<Call>(2, direct.calls[0])) << name;
}

}  // namespace

TEST(BoundCall, CallsTheFunctionWithTheBoundArgumentsAlsoFromACopy) {
  Recorded out;
  const backend::BoundCall call = backend::BoundCall::of<&record_three>(ThreeInts{&out, 7, -3, 1 << 30});
  EXPECT_TRUE(out.values.empty());
  call();
  const backend::BoundCall copy = call;
  copy();
  EXPECT_EQ(out.values, (std::vector<int>{7, -3, 1 << 30, 7, -3, 1 << 30}));
}

TEST(BoundCall, CommDefaultRunsTheOperationWithTheArgumentsAsGiven) {
  RecordingComm comm;
  int a = 0;
  int b = 0;
  using backend::Operation;
  std::vector<backend::BoundCall> calls{
      comm.bind(
          {.op = NcclOp::allreduce, .dtype = Dtype::bfloat16, .redop = Redop::max, .send = &a, .recv = &b, .count = 5}),
      comm.bind({.op = NcclOp::reducescatter,
                 .dtype = Dtype::int64,
                 .redop = Redop::prod,
                 .send = &b,
                 .recv = &a,
                 .count = 6}),
      comm.bind({.op = NcclOp::allgather, .dtype = Dtype::float8e5m2, .send = &a, .recv = &a, .count = 7}),
      comm.bind({.op = NcclOp::alltoall, .dtype = Dtype::float64, .send = &b, .recv = &b, .count = 8}),
      comm.bind({.op = NcclOp::broadcast, .dtype = Dtype::float8e4m3, .root = 3, .send = &a, .recv = &b, .count = 9}),
      comm.bind({.op = NcclOp::sendrecv,
                 .dtype = Dtype::int32,
                 .send_peer = 2,
                 .recv_peer = 0,
                 .send = &a,
                 .recv = &b,
                 .count = 10}),
  };
  EXPECT_TRUE(comm.calls.empty());
  for (const auto& call : calls) call();
  const std::vector<Call> expected{
      {"allreduce", &a, &b, 5, Dtype::bfloat16, Redop::max},
      {"reducescatter", &b, &a, 6, Dtype::int64, Redop::prod},
      {"allgather", &a, &a, 7, Dtype::float8e5m2},
      {"alltoall", &b, &b, 8, Dtype::float64},
      {"broadcast", &a, &b, 9, Dtype::float8e4m3, Redop::sum, 3},
      {"sendrecv", &a, &b, 10, Dtype::int32, Redop::sum, 0, 2, 0},
  };
  EXPECT_EQ(comm.calls, expected);
  EXPECT_FALSE(comm.synchronize_is_noop());  // a communicator must say so itself
}

TEST(BoundCall, FamiliesBindWhatTheirLaunchCalls) {
  // 4 ranks: all-to-all's per-peer count is count / 4, all-gather's and reduce-scatter's the chunk.
  expect_bound_like_launch("allreduce", 1000, context(Dtype::float32, Redop::min));
  expect_bound_like_launch("alltoall", 4096, context(Dtype::int32, Redop::sum));
  expect_bound_like_launch("allgather", 4096, context(Dtype::float16, Redop::sum));
  expect_bound_like_launch("reducescatter", 4096, context(Dtype::bfloat16, Redop::prod));
  expect_bound_like_launch("broadcast", 64, context(Dtype::float8e5m2, Redop::sum, 2));
  expect_bound_like_launch("sendrecv", 64, context(Dtype::float64, Redop::sum));
}

TEST(BoundCall, AllToAllBindsThePerPeerCount) {
  const auto& c = coll::find_collective("alltoall");
  const auto ctx = context(Dtype::int32, Redop::sum);
  const coll::Shape shape = c.shape(4096, ctx.dtype, ctx.rank, ctx.num_ranks);
  RecordingComm comm;
  char buf[8];
  c.bind_launch(comm, buf, buf, shape, ctx)();
  ASSERT_EQ(comm.calls.size(), 1u);
  EXPECT_EQ(comm.calls[0], (Call{"alltoall", buf, buf, 256, Dtype::int32}));  // 4096 B / 4 B / 4 ranks
}
