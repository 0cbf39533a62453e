// The timed steps of a case (timed_sample.hpp).
#include "collbench/run/timed_sample.hpp"

#include <algorithm>
#include <utility>

namespace collbench::run {
namespace {

// Releases a held stream when it goes out of scope (after the operations, or when one of them
// throws: a stream left held would keep every later wait on it until the gate's timeout).
class HeldStream {
 public:
  explicit HeldStream(backend::Timer& timer) : timer_(&timer) { timer_->hold(); }
  HeldStream(const HeldStream&) = delete;
  HeldStream& operator=(const HeldStream&) = delete;
  ~HeldStream() { release(); }
  void release() noexcept {
    if (timer_ != nullptr) timer_->release();
    timer_ = nullptr;
  }

 private:
  backend::Timer* timer_;
};

}  // namespace

int operations_per_sample(int batch, int graph) {
  return std::max(batch, 1) * std::max(graph, 1);
}

double per_operation_us(double sample_us, double slow, int operations) {
  return sample_us * slow / std::max(operations, 1);
}

SampleOps::SampleOps(std::function<void()> launch, int batch, int graph, bool prime, backend::Backend& backend,
                     backend::Comm& comm)
    : launch_(std::move(launch)), batch_(std::max(batch, 1)), operations_(operations_per_sample(batch, graph)) {
  if (prime || graph > 0) {
    for (int b = 0; b < batch_; ++b) launch_();
    backend.device_barrier();
    comm.synchronize();
  }
  if (graph > 0) {
    replay_ = backend.capture([this] {
      for (int i = 0; i < operations_; ++i) launch_();
    });
    // One untimed replay: the graph's first launch uploads it to the device.
    replay_->launch();
    comm.synchronize();
  }
}

SampleOps::~SampleOps() = default;

void SampleOps::issue() const {
  if (replay_) {
    replay_->launch();
    return;
  }
  for (int b = 0; b < batch_; ++b) launch_();
}

void run_sample(const SampleSteps& s, double delay_us, const std::function<void()>& delay) {
  backend::Timer& timer = *s.timer;
  if (!timer.holds_stream()) {  // MPI: the steps as they were before the gate
    timer.start();
    if (delay_us > 0) {
      delay();
      timer.enter();
    }
    s.ops->issue();
    s.comm->synchronize();
    return;
  }
  HeldStream held(timer);
  s.backend->device_barrier();
  timer.start();
  if (delay_us > 0) {
    held.release();
    delay();
    timer.enter();
  }
  s.ops->issue();
  held.release();
  s.comm->synchronize();
}

}  // namespace collbench::run
