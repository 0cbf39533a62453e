// CUDA-graph capture and replay on the NCCL backend's stream (--graph/-G, Backend::capture).
#pragma once

#include <functional>
#include <memory>

#include "collbench/backend/nccl/nccl_context.hpp"

namespace collbench::backend::nccl {

// Captures what `issue` enqueues on ctx's stream (cudaStreamCaptureModeThreadLocal: this
// thread's potentially unsafe calls fail instead of joining the capture; Context::synchronize
// refuses meanwhile), instantiates and uploads the graph. Operations on other streams that
// depend on ctx's (an NCCL group's per-communicator streams) join the capture through their
// events. A failure ends the capture and throws; nothing is left half captured.
std::unique_ptr<Replay> capture_graph(const std::shared_ptr<Context>& ctx, const std::function<void()>& issue);

}  // namespace collbench::backend::nccl
