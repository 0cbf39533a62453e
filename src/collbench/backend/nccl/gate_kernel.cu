// The timing gate's kernel (gate_kernel.hpp). Needs a GPU to run; compiled for the project's
// architectures (sm_90, sm_100, sm_103; __nanosleep needs sm_70).
#include "collbench/backend/nccl/gate_kernel.hpp"
#include "collbench/backend/nccl/gate_rule.hpp"
#include "collbench/backend/nccl/nccl_check.hpp"

namespace collbench::backend::nccl {
namespace {

__device__ std::uint64_t global_ns() {
  std::uint64_t now = 0;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(now));
  return now;
}

// The released word is read through a volatile pointer: every read goes to host memory.
__global__ void gate_kernel(const volatile std::uint32_t* words, std::uint32_t generation, std::uint64_t timeout_ns) {
  const std::uint64_t start = global_ns();
  while (!gate_open(words[0], generation)) {
    if (global_ns() - start >= timeout_ns) {
      const_cast<volatile std::uint32_t*>(words)[1] = generation;
      __threadfence_system();
      return;
    }
    __nanosleep(500);
  }
}

}  // namespace

void launch_gate(const std::uint32_t* words, std::uint32_t generation, std::uint64_t timeout_ns, cudaStream_t stream) {
  gate_kernel<<<1, 1, 0, stream>>>(words, generation, timeout_ns);
  CB_CHECK_CUDA(cudaGetLastError());
}

}  // namespace collbench::backend::nccl
