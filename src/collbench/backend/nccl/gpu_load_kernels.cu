// Kernels of the GPU compute loads (gpu_load_kernels.hpp). Needs a GPU to run; compiled for the
// project's architectures (sm_90, sm_100, sm_103).
#include "collbench/backend/nccl/gpu_load_kernels.hpp"
#include "collbench/backend/nccl/nccl_check.hpp"

namespace collbench::backend::nccl {
namespace {

constexpr int kThreads = 256;

int grid_for(std::size_t items) {
  const std::size_t blocks = (items + kThreads - 1) / kThreads;
  return static_cast<int>(blocks < 1 ? 1 : (blocks > 4096 ? 4096 : blocks));
}

__global__ void stream_copy_kernel(uint4* dst, const uint4* src, std::size_t vecs, unsigned char* dst_tail,
                                   const unsigned char* src_tail, std::size_t tail) {
  const std::size_t stride = static_cast<std::size_t>(gridDim.x) * blockDim.x;
  for (std::size_t i = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < vecs; i += stride) {
    dst[i] = src[i];
  }
  if (blockIdx.x == 0 && threadIdx.x < tail) dst_tail[threadIdx.x] = src_tail[threadIdx.x];
}

__global__ void spin_kernel(std::uint64_t ns) {
  if (threadIdx.x != 0) return;
  std::uint64_t start = 0;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(start));
  for (;;) {
    std::uint64_t now = 0;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(now));
    if (now - start >= ns) return;
    __nanosleep(1000);
  }
}

__global__ void fill_u16_kernel(std::uint16_t* dst, std::size_t count, std::uint16_t bits) {
  const std::size_t stride = static_cast<std::size_t>(gridDim.x) * blockDim.x;
  for (std::size_t i = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < count; i += stride) {
    dst[i] = bits;
  }
}

}  // namespace

void launch_stream_copy(void* dst, const void* src, std::size_t bytes, int repeat, cudaStream_t stream) {
  const std::size_t vecs = bytes / sizeof(uint4);
  const std::size_t tail = bytes - vecs * sizeof(uint4);  // < 16 bytes, copied by block 0
  auto* d = static_cast<unsigned char*>(dst);
  const auto* s = static_cast<const unsigned char*>(src);
  for (int r = 0; r < repeat; ++r) {
    stream_copy_kernel<<<grid_for(vecs), kThreads, 0, stream>>>(
        static_cast<uint4*>(dst), static_cast<const uint4*>(src), vecs, d + vecs * sizeof(uint4),
        s + vecs * sizeof(uint4), tail);
    CB_CHECK_CUDA(cudaGetLastError());
  }
}

void launch_spin(std::uint64_t ns, cudaStream_t stream) {
  spin_kernel<<<1, 32, 0, stream>>>(ns);
  CB_CHECK_CUDA(cudaGetLastError());
}

void launch_fill_u16(void* dst, std::size_t count, std::uint16_t bits, cudaStream_t stream) {
  fill_u16_kernel<<<grid_for(count), kThreads, 0, stream>>>(static_cast<std::uint16_t*>(dst), count, bits);
  CB_CHECK_CUDA(cudaGetLastError());
}

}  // namespace collbench::backend::nccl
