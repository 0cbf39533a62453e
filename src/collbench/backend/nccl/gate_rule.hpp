// The timing gate's rules (docs/measurement.md "The timed sequence"), shared by the host
// (nccl_gate.cpp), the kernel (gate_kernel.cu) and the CPU tests: no CUDA header.
//
// The gate is two 32-bit words of pinned host memory mapped into the device: `released`, which
// the host advances to a hold's generation to open it, and `timed_out`, where a kernel that gave
// up waiting writes its generation. Each hold() takes the next generation, so a kernel never
// needs the words reset, and a release that comes before its kernel starts still opens it.
#pragma once

#include <cstdint>
#if !defined(__CUDACC__)
#include <fmt/format.h>

#include <string>
#endif

#if defined(__CUDACC__)
#define CB_GATE_HD __host__ __device__
#else
#define CB_GATE_HD
#endif

namespace collbench::backend::nccl {

// How long a gate waits for its release before it opens by itself (and says so): far longer
// than any host enqueue, short enough that a host blocked behind the held stream (a library
// that waits for the device inside an enqueue) fails with a message instead of hanging.
inline constexpr std::uint64_t kGateTimeoutNs = 10'000'000'000ULL;  // 10 s

// Whether a gate of `generation` is open once `released` was stored: generations count up
// modulo 2^32, and a later release opens every earlier gate.
CB_GATE_HD inline bool gate_open(std::uint32_t released, std::uint32_t generation) {
  return static_cast<std::int32_t>(released - generation) >= 0;
}

// The generation after `generation` (0 is never used, so zeroed memory opens nothing).
CB_GATE_HD inline std::uint32_t next_generation(std::uint32_t generation) {
  const std::uint32_t next = generation + 1;
  return next == 0 ? 1 : next;
}

#if !defined(__CUDACC__)
// The failure when a sample's gate opened by its timeout instead of by the host: the host's
// enqueue waited for the device, which the gate held, so the sample would hold that wait.
inline std::string gate_timeout_message(int rank, std::uint64_t timeout_ns) {
  return fmt::format(
      "timing gate: rank {}'s stream was held {:g} s while the host enqueued the sample's operations, and the "
      "gate opened by its timeout: the enqueue waited for the device (a library that blocks in its launch when "
      "its queue to the GPU is full); time fewer operations per sample (--batch, --graph)",
      rank, static_cast<double>(timeout_ns) * 1e-9);
}
#endif

}  // namespace collbench::backend::nccl
