// The NCCL backend's Timer (nccl_timer.cpp).
#pragma once

#include <memory>

#include "collbench/backend/nccl/nccl_context.hpp"

namespace collbench::backend::nccl {

// CUDA events on `ctx`'s stream; the end of an iteration is the event Comm::synchronize()
// records right after the last operation. hold()/release() gate the stream (nccl_gate.hpp).
std::unique_ptr<Timer> make_cuda_timer(std::shared_ptr<Context> ctx);

}  // namespace collbench::backend::nccl
