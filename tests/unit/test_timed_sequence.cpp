// The timed sequence (docs/measurement.md "The timed sequence") through run::measure() itself,
// on a backend whose communicator, timer and graph capture record every call: the order of the
// steps with a timer that holds the stream (the NCCL backend's gate) and without one (MPI), the
// fault delay's rule (a held stream is released before the delay), the gate released when an
// operation throws, and --graph/-G (priming, one capture of graph x batch launches, one replay
// per sample, time / (graph x batch)). One rank: MPI is started here as a singleton for the
// runner's control channel.
#include <gtest/gtest.h>
#include <mpi.h>

#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "collbench/backend/backend.hpp"
#include "collbench/coll/collective.hpp"
#include "collbench/core/error.hpp"
#include "collbench/run/fault.hpp"
#include "collbench/run/measure.hpp"
#include "collbench/run/session.hpp"
#include "collbench/run/timed_sample.hpp"

namespace {

using namespace collbench;
using Log = std::vector<std::string>;

void ensure_mpi() {
  int initialized = 0;
  MPI_Initialized(&initialized);
  if (initialized != 0) return;
  int provided = 0;
  MPI_Init_thread(nullptr, nullptr, MPI_THREAD_MULTIPLE, &provided);
  std::atexit([] {
    int finalized = 0;
    MPI_Finalized(&finalized);
    if (finalized == 0) MPI_Finalize();
  });
}

class HostBuffer final : public backend::Buffer {
 public:
  explicit HostBuffer(std::size_t bytes) : mem_(bytes) {}
  void* data() override { return mem_.data(); }
  [[nodiscard]] std::size_t bytes() const override { return mem_.size(); }
  void* host_data() override { return mem_.data(); }

 private:
  std::vector<unsigned char> mem_;
};

// Every operation is "launch"; `throw_at` (counting launches from 1) makes that one throw.
class RecordingComm final : public backend::Comm {
 public:
  explicit RecordingComm(Log& log) : log_(&log) {}
  int throw_at = 0;
  [[nodiscard]] int rank() const override { return 0; }
  [[nodiscard]] int size() const override { return 1; }
  void run(const backend::Operation&) override { launch(); }
  [[nodiscard]] std::size_t reduce_scatter_in_place_offset(std::size_t) const override { return 0; }
  void barrier() override { log_->push_back("comm.barrier"); }
  void synchronize() override { log_->push_back("synchronize"); }

 private:
  void launch() {
    log_->push_back("launch");
    if (++launches_ == throw_at) throw RuntimeFailure("launch failed");
  }
  Log* log_;
  int launches_ = 0;
};

// Reads total 40 us, and 30 us inside once enter() ran.
class RecordingTimer final : public backend::Timer {
 public:
  RecordingTimer(Log& log, bool holds) : log_(&log), holds_(holds) {}
  void start() override {
    log_->push_back("start");
    entered_ = false;
  }
  void enter() override {
    log_->push_back("enter");
    entered_ = true;
  }
  void stop() override { log_->push_back("stop"); }
  [[nodiscard]] double total_us() override { return 40.0; }
  [[nodiscard]] double inside_us() override { return entered_ ? 30.0 : 40.0; }
  [[nodiscard]] bool holds_stream() const override { return holds_; }
  void hold() override { log_->push_back("hold"); }
  void release() noexcept override { log_->push_back("release"); }

 private:
  Log* log_;
  bool holds_;
  bool entered_ = false;
};

class RecordingReplay final : public backend::Replay {
 public:
  explicit RecordingReplay(Log& log) : log_(&log) {}
  void launch() override { log_->push_back("replay"); }

 private:
  Log* log_;
};

class RecordingBackend final : public backend::Backend {
 public:
  RecordingBackend(Log& log, bool holds) : log_(&log), holds_(holds) {}
  [[nodiscard]] std::string name() const override { return "recording"; }
  [[nodiscard]] std::unique_ptr<backend::Buffer> allocate(std::size_t bytes) override {
    return std::make_unique<HostBuffer>(bytes);
  }
  void upload(backend::Buffer& dst, const void* host, std::size_t bytes) override {
    std::memcpy(dst.data(), host, bytes);
  }
  void download(void* host, backend::Buffer& src, std::size_t bytes) override { std::memcpy(host, src.data(), bytes); }
  [[nodiscard]] std::unique_ptr<backend::Comm> world() override { return std::make_unique<RecordingComm>(*log_); }
  [[nodiscard]] std::unique_ptr<backend::Comm> split(int, int) override { return world(); }
  [[nodiscard]] std::unique_ptr<backend::Timer> timer() override {
    return std::make_unique<RecordingTimer>(*log_, holds_);
  }
  [[nodiscard]] std::map<std::string, std::string> provenance() const override { return {}; }
  void device_barrier() override { log_->push_back("device_barrier"); }
  [[nodiscard]] std::unique_ptr<backend::Replay> capture(const std::function<void()>& issue) override {
    log_->push_back("capture{");
    issue();
    log_->push_back("}capture");
    return std::make_unique<RecordingReplay>(*log_);
  }

 private:
  Log* log_;
  bool holds_;
};

// One all-reduce case of 64 B on the recording backend: `iters` timed iterations, one warm-up
// launch, no verification.
struct Bench {
  explicit Bench(bool holds, const std::string& fault = "")
      : backend(log, holds), comm(log), faults(make_faults(fault)) {
    ensure_mpi();
    control = std::make_unique<run::Control>();
    spec.bytes = 64;
    spec.check = false;
    spec.stop.warmup = 1;
    spec.stop.min_iters = 3;
    spec.stop.max_iters = 3;
  }
  static run::FaultPlan make_faults(const std::string& text) {
    return text.empty() ? run::FaultPlan() : run::FaultPlan::parse(text);
  }
  run::Measurement measure() {
    run::MeasureInput in;
    in.spec = &spec;
    in.collective = &coll::find_collective("allreduce");
    in.backend = &backend;
    in.comm = &comm;
    in.control = control.get();
    in.faults = &faults;
    return run::measure(in);
  }
  Log log;
  RecordingBackend backend;
  RecordingComm comm;
  run::FaultPlan faults;
  std::unique_ptr<run::Control> control;
  plan::Case spec;
};

Log concat(std::initializer_list<Log> parts) {
  Log out;
  for (const auto& p : parts) out.insert(out.end(), p.begin(), p.end());
  return out;
}

Log times(int n, const Log& part) {
  Log out;
  for (int i = 0; i < n; ++i) out.insert(out.end(), part.begin(), part.end());
  return out;
}

// Without verification (-c 0) the first launch is unchecked but still agreed on as a possible
// refusal (run/measure.cpp verify_case), then comes the warm-up launch.
const Log kUnchecked{"launch", "synchronize"};
const Log kWarmUp = concat({kUnchecked, {"launch", "synchronize"}});

TEST(TimedSequence, HeldStreamOrder) {
  Bench b(true);
  const run::Measurement m = b.measure();
  const Log prime{"launch", "device_barrier", "synchronize"};
  const Log sample{"hold", "device_barrier", "start", "launch", "release", "synchronize", "stop"};
  EXPECT_EQ(b.log, concat({kWarmUp, prime, times(3, sample)}));
  EXPECT_EQ(m.iterations, 3);
  EXPECT_EQ(m.samples_us, (std::vector<double>{40.0, 40.0, 40.0}));
}

TEST(TimedSequence, TimerWithoutGateKeepsTheOrderBeforeTheGate) {
  Bench b(false);  // the timer reads no MPI_Wtime: the timer's path, not the inline clock
  const run::Measurement m = b.measure();
  EXPECT_EQ(b.log, concat({kWarmUp, times(3, {"start", "launch", "synchronize", "stop"})}));
  EXPECT_EQ(m.samples_us, (std::vector<double>{40.0, 40.0, 40.0}));
}

TEST(TimedSequence, DelayedRankReleasesBeforeItsDelay) {
  Bench b(true, "delay:rank=0,us=1");
  const run::Measurement m = b.measure();
  const Log prime{"launch", "device_barrier", "synchronize"};
  const Log sample{"hold", "device_barrier", "start", "release", "enter", "launch", "synchronize", "stop"};
  EXPECT_EQ(b.log, concat({kWarmUp, prime, times(3, sample)}));
  ASSERT_EQ(m.rank_wait_us.size(), 1u);
  EXPECT_DOUBLE_EQ(m.rank_mean_us[0], 40.0);  // from start
  EXPECT_DOUBLE_EQ(m.rank_wait_us[0], 30.0);  // from enter
}

TEST(TimedSequence, FailingOperationStillReleasesTheStream) {
  Bench b(true);
  b.comm.throw_at = 5;  // unchecked 1, warm-up 2, priming 3, first sample 4, second sample 5
  EXPECT_THROW(b.measure(), RuntimeFailure);
  const Log prime{"launch", "device_barrier", "synchronize"};
  const Log sample{"hold", "device_barrier", "start", "launch", "release", "synchronize", "stop"};
  EXPECT_EQ(b.log, concat({kWarmUp, prime, sample, {"hold", "device_barrier", "start", "launch", "release"}}));
}

TEST(TimedSequence, GraphCapturesGraphTimesBatchLaunchesAndDividesByThem) {
  Bench b(true);
  b.spec.graph = 4;
  b.spec.timing = Timing::pipelined;
  b.spec.stop.batch = 2;
  const run::Measurement m = b.measure();
  const Log prime{"launch", "launch", "device_barrier", "synchronize"};
  const Log capture = concat({{"capture{"}, times(8, {"launch"}), {"}capture", "replay", "synchronize"}});
  const Log sample{"hold", "device_barrier", "start", "replay", "release", "synchronize", "stop"};
  EXPECT_EQ(b.log, concat({kWarmUp, prime, capture, times(3, sample)}));
  EXPECT_EQ(m.samples_us, (std::vector<double>{5.0, 5.0, 5.0}));  // 40 us / (4 x 2)
}

TEST(TimedSequence, GraphInIsolatedTimingHoldsGraphLaunches) {
  Bench b(true);
  b.spec.graph = 20;
  const run::Measurement m = b.measure();
  EXPECT_EQ(m.samples_us, (std::vector<double>{2.0, 2.0, 2.0}));  // 40 us / 20
}

TEST(TimedSequence, OperationsPerSampleAndTimePerOperation) {
  EXPECT_EQ(run::operations_per_sample(1, 0), 1);
  EXPECT_EQ(run::operations_per_sample(20, 0), 20);
  EXPECT_EQ(run::operations_per_sample(1, 20), 20);
  EXPECT_EQ(run::operations_per_sample(20, 5), 100);
  EXPECT_EQ(run::operations_per_sample(0, 0), 1);
  EXPECT_DOUBLE_EQ(run::per_operation_us(1000.0, 1.0, 100), 10.0);
  EXPECT_DOUBLE_EQ(run::per_operation_us(1000.0, 1.5, 20), 75.0);
}

}  // namespace
