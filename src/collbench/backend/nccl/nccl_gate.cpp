// The NCCL backend's timing gate (nccl_gate.hpp; rules in gate_rule.hpp).
#include "collbench/backend/nccl/nccl_gate.hpp"

#include <atomic>

#include "collbench/backend/nccl/gate_kernel.hpp"
#include "collbench/backend/nccl/gate_rule.hpp"
#include "collbench/backend/nccl/nccl_check.hpp"
#include "collbench/backend/nccl/nccl_resources.hpp"

namespace collbench::backend::nccl {

StreamGate::StreamGate() {
  void* p = nullptr;
  CB_CHECK_CUDA(cudaHostAlloc(&p, 2 * sizeof(std::uint32_t), cudaHostAllocMapped));
  host_ = static_cast<std::uint32_t*>(p);
  host_[0] = 0;
  host_[1] = 0;
  void* d = nullptr;
  if (const cudaError_t rc = cudaHostGetDevicePointer(&d, p, 0); rc != cudaSuccess) {
    (void)cudaFreeHost(p);
    throw_cuda_error(rc, "cudaHostGetDevicePointer(gate)", __FILE__, __LINE__);
  }
  device_ = static_cast<const std::uint32_t*>(d);
}

StreamGate::~StreamGate() {
  release();
  if (held_ != nullptr) {
    if (const cudaError_t rc = cudaStreamSynchronize(held_); rc != cudaSuccess) {
      report_release_failure("cudaStreamSynchronize(gate)", rc);
    }
  }
  if (const cudaError_t rc = cudaFreeHost(host_); rc != cudaSuccess) report_release_failure("cudaFreeHost(gate)", rc);
}

void StreamGate::hold(cudaStream_t stream) {
  generation_ = next_generation(generation_);
  launch_gate(device_, generation_, kGateTimeoutNs, stream);
  held_ = stream;
}

void StreamGate::release() noexcept {
  std::atomic_ref<std::uint32_t>(host_[0]).store(generation_, std::memory_order_release);
}

bool StreamGate::timed_out() const noexcept {
  return generation_ != 0 && std::atomic_ref<std::uint32_t>(host_[1]).load(std::memory_order_acquire) == generation_;
}

}  // namespace collbench::backend::nccl
