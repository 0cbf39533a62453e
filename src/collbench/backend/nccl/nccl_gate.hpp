// The NCCL backend's timing gate (docs/measurement.md "The timed sequence"): a kernel that holds
// the backend's stream until the host releases it, so that the device runs the sample's device
// barrier, start event, operations and end event only after the host has enqueued them all.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

namespace collbench::backend::nccl {

class StreamGate {
 public:
  StreamGate();  // two words of pinned host memory, mapped into the device
  StreamGate(const StreamGate&) = delete;
  StreamGate& operator=(const StreamGate&) = delete;
  // Opens the gate, waits for the stream it last held (its kernel reads the words), frees them.
  ~StreamGate();
  // Enqueues a gate of the next generation on `stream`: what is enqueued after it waits.
  void hold(cudaStream_t stream);
  // Opens the current gate (a store to host memory: cannot fail).
  void release() noexcept;
  // Whether the current gate opened by its timeout (read once the stream has passed it).
  [[nodiscard]] bool timed_out() const noexcept;

 private:
  std::uint32_t* host_ = nullptr;          // [0] released, [1] timed out
  const std::uint32_t* device_ = nullptr;  // the same words, as the device sees them
  std::uint32_t generation_ = 0;
  cudaStream_t held_ = nullptr;  // the stream of the last hold
};

}  // namespace collbench::backend::nccl
