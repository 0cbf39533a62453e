// The NCCL backend's Timer: CUDA events on the backend's stream.
#include "collbench/backend/nccl/nccl_timer.hpp"

#include <cstdint>
#include <optional>
#include <utility>

#include "collbench/backend/nccl/gate_rule.hpp"
#include "collbench/backend/nccl/nccl_check.hpp"
#include "collbench/backend/nccl/nccl_gate.hpp"
#include "collbench/core/error.hpp"

namespace collbench::backend::nccl {
namespace {

// CUDA events on the backend's stream. The end of an iteration is the sync event that
// Comm::synchronize() records right after the last operation (before it waits), so the host's
// wake-up latency is not counted; without a synchronize, stop() records its own event.
// hold()/release(): the timing gate (nccl_gate.hpp), made on first use; a sample whose gate
// opened by its timeout is a failure (its time would hold the host's wait for the device).
class CudaTimer final : public Timer {
 public:
  explicit CudaTimer(std::shared_ptr<Context> ctx) : ctx_(std::move(ctx)) {}
  [[nodiscard]] bool holds_stream() const override { return true; }
  void hold() override {
    if (!gate_) gate_.emplace();
    gate_->hold(ctx_->s());
    gated_ = true;
  }
  void release() noexcept override {
    if (gate_) gate_->release();
  }
  void start() override {
    CB_CHECK_CUDA(cudaEventRecord(start_.get(), ctx_->s()));
    generation_ = ctx_->sync_generation;
    have_result_ = false;
    entered_ = false;
  }
  void enter() override {
    CB_CHECK_CUDA(cudaEventRecord(enter_.get(), ctx_->s()));
    entered_ = true;
  }
  void stop() override { finish(); }
  [[nodiscard]] double total_us() override {
    finish();
    return total_us_;
  }
  [[nodiscard]] double inside_us() override {
    finish();
    return inside_us_;
  }

 private:
  void finish() {
    if (have_result_) return;
    cudaEvent_t end = ctx_->sync_event->get();
    if (ctx_->sync_generation == generation_) {  // no synchronize since start(): record and wait
      CB_CHECK_CUDA(cudaEventRecord(stop_.get(), ctx_->s()));
      CB_CHECK_CUDA(cudaEventSynchronize(stop_.get()));
      end = stop_.get();
    }
    if (gated_ && gate_->timed_out()) {
      throw RuntimeFailure(gate_timeout_message(ctx_->world_rank, kGateTimeoutNs));
    }
    gated_ = false;
    float total_ms = 0.0f;
    float inside_ms = 0.0f;
    CB_CHECK_CUDA(cudaEventElapsedTime(&total_ms, start_.get(), end));
    CB_CHECK_CUDA(cudaEventElapsedTime(&inside_ms, entered_ ? enter_.get() : start_.get(), end));
    total_us_ = static_cast<double>(total_ms) * 1e3;
    inside_us_ = static_cast<double>(inside_ms) * 1e3;
    have_result_ = true;
  }

  std::shared_ptr<Context> ctx_;
  std::optional<StreamGate> gate_;  // declared after ctx_: destroyed first, while the stream lives
  bool gated_ = false;              // the sample being read was held
  CudaEvent start_, enter_, stop_;
  std::uint64_t generation_ = 0;
  bool have_result_ = false;
  bool entered_ = false;
  double total_us_ = 0.0;
  double inside_us_ = 0.0;
};

}  // namespace

std::unique_ptr<Timer> make_cuda_timer(std::shared_ptr<Context> ctx) {
  return std::make_unique<CudaTimer>(std::move(ctx));
}

}  // namespace collbench::backend::nccl
