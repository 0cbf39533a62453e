// The timing gate's kernel (gate_kernel.cu; rules in gate_rule.hpp). C++17 and CUDA runtime
// types only (nvcc builds the .cu as C++17).
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

namespace collbench::backend::nccl {

// One thread on `stream` waits until gate_open(words[0], generation), reading the host-mapped
// words with __nanosleep between reads, or until `timeout_ns` of %globaltimer have passed; then
// it writes `generation` to words[1] and ends. `words` is the device address of the gate.
void launch_gate(const std::uint32_t* words, std::uint32_t generation, std::uint64_t timeout_ns, cudaStream_t stream);

}  // namespace collbench::backend::nccl
