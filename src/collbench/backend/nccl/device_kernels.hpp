// Fill and check kernels of the NCCL backend (device_kernels.cu), launched on a given stream.
// They execute the segments of coll/device_plan.hpp with the value rules of pattern_hd.hpp, so their
// output equals the host path's bit for bit (tests/gpu/test_gpu_device_patterns.cpp).
// Needs the CUDA runtime headers (cudaStream_t); used by the backend, the GPU tests and
// bench/micro/bench_gpu_kernels.cu.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

#include "collbench/backend/nccl/pattern_hd.hpp"

namespace collbench::backend::nccl {

// Writes segments[0..num_segments) (device memory) into `dst`. `max_count`: the longest
// segment's count (sets the grid). Errors: CB_CHECK_CUDA on the launch.
void launch_fill(void* dst, const hd::PatternParams& params, const hd::Segment* device_segments, int num_segments,
                 std::uint64_t max_count, cudaStream_t stream);

// Adds to *device_counter the number of elements of `src` that differ from the segments' values.
void launch_count_wrong(const void* src, const hd::PatternParams& params, const hd::Segment* device_segments,
                        int num_segments, std::uint64_t max_count, unsigned long long* device_counter,
                        cudaStream_t stream);

}  // namespace collbench::backend::nccl
