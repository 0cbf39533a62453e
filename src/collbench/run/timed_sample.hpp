// The timed steps of a case (run/measure.cpp's timed rounds and side operations): what one
// sample issues (direct launches, or one replay of a CUDA graph of them under --graph/-G), and
// the order of the device-facing steps around it. docs/measurement.md, "The timed sequence".
#pragma once

#include <functional>
#include <memory>

#include "collbench/backend/backend.hpp"

namespace collbench::run {

// Operations one sample holds: `batch` launches (1 in isolated timing, --batch in pipelined),
// times `graph` under --graph/-G: a graph of graph x batch launches is replayed once per sample,
// as nccl-tests does. At least 1.
int operations_per_sample(int batch, int graph);

// A sample's time per operation: the timer's reading x the fault injection's slow factor,
// divided by the operations the sample held (graph time / (N x batch) under -G).
double per_operation_us(double sample_us, double slow, int operations);

// What a sample issues between start and release: `batch` launches of `launch` back to back, or
// one replay of a capture of graph x batch of them.
class SampleOps {
 public:
  // `prime`: run one untimed batch of launches and a device barrier first, and wait for them
  // (the runner primes whenever the timer holds the stream or a graph is captured): whatever the
  // library sets up on first use (NCCL's connections, collbench's scratch) then happens here,
  // never behind a held stream or inside a capture. graph > 0: then captures graph x batch
  // launches through backend.capture() (nothing inside may wait or query).
  SampleOps(std::function<void()> launch, int batch, int graph, bool prime, backend::Backend& backend,
            backend::Comm& comm);
  SampleOps(const SampleOps&) = delete;
  SampleOps& operator=(const SampleOps&) = delete;
  ~SampleOps();
  // Enqueues one sample's operations.
  void issue() const;
  // operations_per_sample(batch, graph): the divisor of the sample's time.
  [[nodiscard]] int operations() const { return operations_; }

 private:
  std::function<void()> launch_;
  int batch_ = 1;
  int operations_ = 1;
  std::unique_ptr<backend::Replay> replay_;  // graph > 0
};

// The device-facing steps of one sample, after the host barrier and before Timer::stop():
//   a timer that holds the stream: hold, device barrier, start, [delay], operations, release,
//                                  synchronize;
//   any other timer (MPI):         start, [delay], operations, synchronize.
// [delay] (delay_us > 0, the fault injection's delay) is: `delay` (the host sleeps), then
// Timer::enter(). A held stream is released before it, so that the delay lies on the device's
// timeline between start and enter, as it does on the host's: the delayed rank enters the
// collective delay_us after the common start, and the others wait for it inside.
// The stream is released on every path, an exception included.
struct SampleSteps {
  backend::Timer* timer = nullptr;
  backend::Backend* backend = nullptr;
  backend::Comm* comm = nullptr;
  const SampleOps* ops = nullptr;
};
void run_sample(const SampleSteps& s, double delay_us, const std::function<void()>& delay);

}  // namespace collbench::run
