// RAII owners for the CUDA handles of the NCCL backend (streams, events, device memory) and a
// scoped environment override (NCCL_ALGO/NCCL_PROTO around communicator creation). NCCL
// communicators, registrations and windows are owned by nccl_context.hpp's CommOwner and
// DeviceBuffer, which need the backend's shared state. Destructors never throw: a failing
// release is reported on stderr.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "collbench/backend/nccl/nccl_host.hpp"

namespace collbench::backend::nccl {

// Reports a failed release (destructors cannot throw).
void report_release_failure(const char* what, cudaError_t code) noexcept;

class CudaStream {
 public:
  CudaStream();  // non-blocking: never synchronises with the legacy default stream
  CudaStream(const CudaStream&) = delete;
  CudaStream& operator=(const CudaStream&) = delete;
  ~CudaStream();
  [[nodiscard]] cudaStream_t get() const { return stream_; }

 private:
  cudaStream_t stream_ = nullptr;
};

class CudaEvent {
 public:
  explicit CudaEvent(unsigned flags = cudaEventDefault);  // default: with timing
  CudaEvent(const CudaEvent&) = delete;
  CudaEvent& operator=(const CudaEvent&) = delete;
  ~CudaEvent();
  [[nodiscard]] cudaEvent_t get() const { return event_; }

 private:
  cudaEvent_t event_ = nullptr;
};

// cudaMalloc'd memory, grown on demand by reserve() (contents are not kept).
class DeviceMemory {
 public:
  DeviceMemory() = default;
  explicit DeviceMemory(std::size_t bytes) { reserve(bytes); }
  DeviceMemory(const DeviceMemory&) = delete;
  DeviceMemory& operator=(const DeviceMemory&) = delete;
  DeviceMemory(DeviceMemory&& other) noexcept
      : ptr_(std::exchange(other.ptr_, nullptr)), bytes_(std::exchange(other.bytes_, 0)) {}
  ~DeviceMemory() { release(); }
  // Ensures at least `bytes`; the caller must have finished using the old memory.
  void* reserve(std::size_t bytes);
  void release() noexcept;
  [[nodiscard]] void* get() const { return ptr_; }
  [[nodiscard]] std::size_t bytes() const { return bytes_; }

 private:
  void* ptr_ = nullptr;
  std::size_t bytes_ = 0;
};

// Sets environment variables for its lifetime and restores the previous values (or their
// absence) afterwards.
class ScopedEnv {
 public:
  explicit ScopedEnv(const std::vector<EnvChange>& changes);
  ScopedEnv(const ScopedEnv&) = delete;
  ScopedEnv& operator=(const ScopedEnv&) = delete;
  ~ScopedEnv();

 private:
  std::vector<std::pair<std::string, std::optional<std::string>>> saved_;
};

}  // namespace collbench::backend::nccl
