// The timing gate and CUDA graphs on GPUs (issue 34 items 8-9; docs/measurement.md "The timed
// sequence", docs/gpu-validation.md "Timing gate and CUDA graphs"): the gate holds the stream
// until released; host time spent before the operations are enqueued is not timed behind it,
// while the fault delay (released first) is; -G replays run the operation and the runner's
// -G time is close to its isolated time; nothing may wait inside a capture. The CPU test
// tests/unit/test_timed_sequence.cpp checks the order of the same steps. Label `gpu`.
#include <gtest/gtest.h>
#include <mpi.h>

#include <chrono>
#include <cstdio>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "collbench/backend/nccl/nccl_backend.hpp"
#include "collbench/backend/nccl/nccl_gate.hpp"
#include "collbench/backend/nccl/nccl_resources.hpp"
#include "collbench/coll/collective.hpp"
#include "collbench/core/error.hpp"
#include "collbench/run/fault.hpp"
#include "collbench/run/measure.hpp"
#include "collbench/run/session.hpp"
#include "collbench/run/timed_sample.hpp"
#include "collbench/stats/summary.hpp"
#include "gpu_verify.hpp"

namespace {

using namespace collbench;
namespace nccl = collbench::backend::nccl;
using std::chrono::milliseconds;

class GpuTimingTest : public ::testing::Test {
 protected:
  static void TearDownTestSuite() { backend_().reset(); }
  static backend::Backend& be() {
    if (!backend_()) {
      backend::BackendOptions o;
      o.buffers = "plain";
      backend_() = backend::make_nccl_backend(o);
    }
    return *backend_();
  }

 private:
  static std::unique_ptr<backend::Backend>& backend_() {
    static std::unique_ptr<backend::Backend> b;
    return b;
  }
};

// An out-of-place float32 all-reduce of `bytes` on `comm`, its input filled as the runner fills it.
struct Allreduce {
  Allreduce(backend::Backend& be, backend::Comm& on, std::uint64_t bytes)
      : c(coll::find_collective("allreduce")), comm(&on) {
    ctx.rank = on.rank();
    ctx.num_ranks = on.size();
    shape = c.shape(bytes, Dtype::float32, ctx.rank, ctx.num_ranks);
    std::vector<unsigned char> host(shape.send_elems * 4, 0);
    c.fill(host.data(), shape, ctx);
    send = be.allocate(host.size());
    be.upload(*send, host.data(), host.size());
    recv = be.allocate(shape.recv_elems * 4);
  }
  void launch() const { c.launch(*comm, send->data(), recv->data(), shape, ctx); }
  std::uint64_t wrong(backend::Backend& be) const {
    std::vector<unsigned char> result(recv->bytes());
    be.download(result.data(), *recv, result.size());
    return c.verify(result.data(), shape, ctx);
  }
  const coll::Collective& c;
  backend::Comm* comm;
  coll::CaseContext ctx;
  coll::Shape shape;
  std::unique_ptr<backend::Buffer> send, recv;
};

TEST_F(GpuTimingTest, GateHoldsTheStreamUntilReleased) {
  (void)be();  // the device is chosen
  nccl::CudaStream stream;
  nccl::CudaEvent after(cudaEventDisableTiming);
  nccl::StreamGate gate;
  gate.hold(stream.get());
  ASSERT_EQ(cudaEventRecord(after.get(), stream.get()), cudaSuccess);
  std::this_thread::sleep_for(milliseconds(5));
  EXPECT_EQ(cudaEventQuery(after.get()), cudaErrorNotReady);
  gate.release();
  EXPECT_EQ(cudaStreamSynchronize(stream.get()), cudaSuccess);
  EXPECT_FALSE(gate.timed_out());
  // A release that comes before the gate's kernel starts opens it as well.
  gate.hold(stream.get());
  gate.release();
  EXPECT_EQ(cudaStreamSynchronize(stream.get()), cudaSuccess);
  EXPECT_FALSE(gate.timed_out());
  EXPECT_EQ(cudaGetLastError(), cudaSuccess);
}

// 20 ms of host time after start and before the operation is enqueued: behind the gate it is not
// timed (the device starts once everything is enqueued); on a timer that is not held it is.
TEST_F(GpuTimingTest, HostTimeBeforeTheEnqueueIsNotTimedBehindTheGate) {
  auto world = be().world();
  const Allreduce op(be(), *world, 8 << 20);
  auto timer = be().timer();
  ASSERT_TRUE(timer->holds_stream());
  const run::SampleOps ops(
      [&op] {
        std::this_thread::sleep_for(milliseconds(20));
        op.launch();
      },
      1, 0, true, be(), *world);
  world->barrier();
  run::run_sample(run::SampleSteps{timer.get(), &be(), world.get(), &ops}, 0.0, [] {});
  timer->stop();
  EXPECT_LT(timer->total_us(), 5000.0);
  world->barrier();
  timer->start();
  ops.issue();
  world->synchronize();
  timer->stop();
  EXPECT_GE(timer->total_us(), 19000.0);
  EXPECT_EQ(op.wrong(be()), 0u);
}

// The fault delay keeps its meaning: the held stream is released before it, so the delay lies
// between start and enter on the device as on the host (every rank is delayed here).
TEST_F(GpuTimingTest, DelayIsTimedBetweenStartAndEnter) {
  auto world = be().world();
  const Allreduce op(be(), *world, 8 << 20);
  auto timer = be().timer();
  const run::SampleOps ops([&op] { op.launch(); }, 1, 0, true, be(), *world);
  world->barrier();
  run::run_sample(run::SampleSteps{timer.get(), &be(), world.get(), &ops}, 20000.0,
                  [] { std::this_thread::sleep_for(milliseconds(20)); });
  timer->stop();
  EXPECT_GE(timer->total_us(), 19000.0);
  EXPECT_LT(timer->inside_us(), 5000.0);
}

// A replay runs the captured operation: its result verifies.
TEST_F(GpuTimingTest, GraphReplayRunsTheOperation) {
  auto world = be().world();
  const Allreduce op(be(), *world, 1 << 20);
  const run::SampleOps ops([&op] { op.launch(); }, 1, 5, true, be(), *world);
  std::vector<unsigned char> poison(op.recv->bytes(), 0xff);
  be().upload(*op.recv, poison.data(), poison.size());
  ops.issue();
  world->synchronize();
  EXPECT_EQ(gpu_test::sum_over_ranks(op.wrong(be())), 0u);
}

TEST_F(GpuTimingTest, WaitingInsideACaptureIsRefusedAndTheBackendStillWorks) {
  auto world = be().world();
  try {
    (void)be().capture([&world] { world->synchronize(); });
    FAIL() << "a synchronize inside the capture was accepted";
  } catch (const RuntimeFailure& e) {
    EXPECT_NE(std::string(e.what()).find("--graph/-G: an operation waited"), std::string::npos) << e.what();
  }
  EXPECT_EQ(cudaGetLastError(), cudaSuccess);
  const Allreduce op(be(), *world, 1 << 20);
  op.launch();
  world->synchronize();
  EXPECT_EQ(gpu_test::sum_over_ranks(op.wrong(be())), 0u);
}

// The runner's p50 of `collective` at `bytes`, isolated, with --graph `graph` (rank 0; 0 elsewhere).
double runner_p50(backend::Backend& be, const std::string& collective, std::uint64_t bytes, int graph,
                  bool in_place = false) {
  auto world = be.world();
  const run::Control control;
  const run::FaultPlan faults;
  plan::Case spec;
  spec.collective = collective;
  spec.backend = "nccl";
  spec.buffers = "plain";
  spec.bytes = bytes;
  spec.in_place = in_place;
  spec.graph = graph;
  spec.stop.warmup = 2;
  spec.stop.min_iters = 30;
  spec.stop.max_iters = 30;
  run::MeasureInput in;
  in.spec = &spec;
  in.collective = &coll::find_collective(collective);
  in.backend = &be;
  in.comm = world.get();
  in.control = &control;
  in.faults = &faults;
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  in.world_rank = rank;
  const run::Measurement m = run::measure(in);
  EXPECT_FALSE(m.waived.has_value());
  EXPECT_EQ(m.iterations, 30);
  if (rank != 0) return 0.0;
  for (const auto w : m.wrong_by_rank) {
    EXPECT_EQ(w, 0u);
  }
  return stats::summarize(m.samples_us).p50;
}

// Issue 34's target: the gated isolated time within 3% of a graph-timed single operation at
// 8 MiB and above. Asserted at 128 MiB (5%, for a shared machine); every figure is printed.
TEST_F(GpuTimingTest, IsolatedTimeIsCloseToTheGraphTime) {
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  for (const std::uint64_t mib : {8, 32, 128}) {
    const double isolated = runner_p50(be(), "allreduce", mib << 20, 0);
    const double graph = runner_p50(be(), "allreduce", mib << 20, 20);
    if (rank != 0) continue;
    std::printf("allreduce %3llu MiB: isolated %.2f us, -G 20 %.2f us, ratio %.3f\n",
                static_cast<unsigned long long>(mib), isolated, graph, isolated / graph);
    ASSERT_GT(graph, 0.0);
    if (mib == 128) {
      EXPECT_LE(isolated / graph, 1.05);
    }
  }
}

// In-place all-to-all stages its input through scratch: allocated by the priming launch, so the
// capture holds only the copy and the exchange.
TEST_F(GpuTimingTest, GraphOfAnInPlaceAllToAll) {
  EXPECT_NO_THROW((void)runner_p50(be(), "alltoall", 1 << 20, 5, true));
}

}  // namespace
