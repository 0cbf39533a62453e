// Kernels of the GPU compute loads for the overlap mode (gpu_load_kernels.cu): a streaming
// copy (memory-bound), a clock spin on one thread block (the GPU "sleep"), and a bf16 fill for
// the GEMM inputs. C++17 and CUDA runtime types only (nvcc builds the .cu as C++17).
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>

namespace collbench::backend::nccl {

// dst[i] = src[i] for `bytes` bytes, `repeat` times, 16 bytes per thread step (grid-stride).
void launch_stream_copy(void* dst, const void* src, std::size_t bytes, int repeat, cudaStream_t stream);
// One block of 32 threads waits until `ns` nanoseconds of %globaltimer have passed.
void launch_spin(std::uint64_t ns, cudaStream_t stream);
// `count` bf16 values of `dst` set to the bit pattern `bits` (1.0 = 0x3F80).
void launch_fill_u16(void* dst, std::size_t count, std::uint16_t bits, cudaStream_t stream);

}  // namespace collbench::backend::nccl
