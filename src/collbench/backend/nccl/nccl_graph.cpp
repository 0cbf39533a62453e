// CUDA-graph capture and replay (nccl_graph.hpp).
#include "collbench/backend/nccl/nccl_graph.hpp"

#include <fmt/format.h>

#include <utility>

#include "collbench/backend/nccl/nccl_check.hpp"
#include "collbench/backend/nccl/nccl_resources.hpp"
#include "collbench/core/error.hpp"

namespace collbench::backend::nccl {
namespace {

// An instantiated graph, replayed on the context's stream.
class GraphReplay final : public Replay {
 public:
  GraphReplay(std::shared_ptr<Context> ctx, cudaGraphExec_t exec) : ctx_(std::move(ctx)), exec_(exec) {}
  GraphReplay(const GraphReplay&) = delete;
  GraphReplay& operator=(const GraphReplay&) = delete;
  ~GraphReplay() override {
    ctx_->wait_quietly();  // a replay may still run
    if (const cudaError_t rc = cudaGraphExecDestroy(exec_); rc != cudaSuccess) {
      report_release_failure("cudaGraphExecDestroy", rc);
    }
  }
  void launch() override { CB_CHECK_CUDA(cudaGraphLaunch(exec_, ctx_->s())); }

 private:
  std::shared_ptr<Context> ctx_;
  cudaGraphExec_t exec_;
};

// The captured graph (destroyed once instantiated).
class GraphOwner {
 public:
  explicit GraphOwner(cudaGraph_t graph) : graph_(graph) {}
  GraphOwner(const GraphOwner&) = delete;
  GraphOwner& operator=(const GraphOwner&) = delete;
  ~GraphOwner() {
    if (graph_ == nullptr) return;
    if (const cudaError_t rc = cudaGraphDestroy(graph_); rc != cudaSuccess)
      report_release_failure("cudaGraphDestroy", rc);
  }
  [[nodiscard]] cudaGraph_t get() const { return graph_; }

 private:
  cudaGraph_t graph_;
};

// Ends a capture that `issue` left by an exception, dropping what was captured and the error
// state the failed call left behind.
void abandon_capture(Context& ctx) noexcept {
  ctx.capturing = false;
  cudaGraph_t partial = nullptr;
  (void)cudaStreamEndCapture(ctx.s(), &partial);
  GraphOwner drop(partial);
  (void)cudaGetLastError();
}

}  // namespace

std::unique_ptr<Replay> capture_graph(const std::shared_ptr<Context>& ctx, const std::function<void()>& issue) {
  CB_CHECK_CUDA(cudaStreamBeginCapture(ctx->s(), cudaStreamCaptureModeThreadLocal));
  ctx->capturing = true;
  try {
    issue();
  } catch (...) {
    abandon_capture(*ctx);
    throw;
  }
  ctx->capturing = false;
  cudaGraph_t graph = nullptr;
  if (const cudaError_t rc = cudaStreamEndCapture(ctx->s(), &graph); rc != cudaSuccess) {
    GraphOwner drop(graph);
    (void)cudaGetLastError();
    throw RuntimeFailure(fmt::format(
        "--graph/-G: the capture of the case's launches failed: {}: {} (a call inside it waited for or queried the "
        "device)",
        cudaGetErrorName(rc), cudaGetErrorString(rc)));
  }
  GraphOwner owner(graph);
  cudaGraphExec_t exec = nullptr;
  CB_CHECK_CUDA(cudaGraphInstantiate(&exec, owner.get(), 0));
  auto replay = std::make_unique<GraphReplay>(ctx, exec);
  CB_CHECK_CUDA(cudaGraphUpload(exec, ctx->s()));
  return replay;
}

}  // namespace collbench::backend::nccl
