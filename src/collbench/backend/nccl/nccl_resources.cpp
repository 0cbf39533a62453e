// CUDA handle owners.
#include "collbench/backend/nccl/nccl_resources.hpp"

#include <cstdio>
#include <cstdlib>

#include "collbench/backend/nccl/nccl_check.hpp"

namespace collbench::backend::nccl {

void report_release_failure(const char* what, cudaError_t code) noexcept {
  std::fprintf(stderr, "collbench: warning: %s failed: %s: %s\n", what, cudaGetErrorName(code),
               cudaGetErrorString(code));
}

CudaStream::CudaStream() {
  CB_CHECK_CUDA(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking));
}

CudaStream::~CudaStream() {
  if (stream_ == nullptr) return;
  if (const cudaError_t rc = cudaStreamDestroy(stream_); rc != cudaSuccess)
    report_release_failure("cudaStreamDestroy", rc);
}

CudaEvent::CudaEvent(unsigned flags) {
  CB_CHECK_CUDA(cudaEventCreateWithFlags(&event_, flags));
}

CudaEvent::~CudaEvent() {
  if (event_ == nullptr) return;
  if (const cudaError_t rc = cudaEventDestroy(event_); rc != cudaSuccess)
    report_release_failure("cudaEventDestroy", rc);
}

void* DeviceMemory::reserve(std::size_t bytes) {
  if (bytes <= bytes_ && ptr_ != nullptr) return ptr_;
  release();
  CB_CHECK_CUDA(cudaMalloc(&ptr_, bytes == 0 ? 1 : bytes));
  bytes_ = bytes;
  return ptr_;
}

void DeviceMemory::release() noexcept {
  if (ptr_ == nullptr) return;
  if (const cudaError_t rc = cudaFree(ptr_); rc != cudaSuccess) report_release_failure("cudaFree", rc);
  ptr_ = nullptr;
  bytes_ = 0;
}

ScopedEnv::ScopedEnv(const std::vector<EnvChange>& changes) {
  for (const auto& c : changes) {
    const char* old = std::getenv(c.name.c_str());
    saved_.emplace_back(c.name, old != nullptr ? std::optional<std::string>(old) : std::nullopt);
    ::setenv(c.name.c_str(), c.value.c_str(), 1);
  }
}

ScopedEnv::~ScopedEnv() {
  for (auto it = saved_.rbegin(); it != saved_.rend(); ++it) {
    if (it->second) {
      ::setenv(it->first.c_str(), it->second->c_str(), 1);
    } else {
      ::unsetenv(it->first.c_str());
    }
  }
}

}  // namespace collbench::backend::nccl
