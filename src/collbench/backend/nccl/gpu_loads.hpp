// GPU compute loads for the overlap mode (docs/overlap.md), each on its own non-blocking
// stream so that it runs concurrently with the NCCL stream: gemm (cuBLAS bf16, fp32 accumulate,
// gpu_gemm_load.cpp), stream (a copy kernel, gpu_stream_load.cpp), sleep (a clock spin on one
// block, gpu_sleep_load.cpp). The current device must be the rank's GPU. Needs a GPU to run.
#pragma once

#include <memory>

#include "collbench/overlap/load.hpp"

namespace collbench::backend::nccl {

// By spec.load (InputError for a name without a GPU implementation).
std::unique_ptr<overlap::ComputeLoad> make_gpu_load(const overlap::ComputeSpec& spec);

std::unique_ptr<overlap::ComputeLoad> make_gpu_gemm(const overlap::ComputeSpec& spec);
std::unique_ptr<overlap::ComputeLoad> make_gpu_stream(const overlap::ComputeSpec& spec);
std::unique_ptr<overlap::ComputeLoad> make_gpu_sleep(const overlap::ComputeSpec& spec);

}  // namespace collbench::backend::nccl
