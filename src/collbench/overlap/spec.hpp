// Compute loads for the overlap mode (`--overlap NAME[:key=value,...]`, docs/overlap.md): the
// table of loads and their keys, parsing with messages that name --overlap and the accepted
// values (InputError, exit 2), sizing from a workload profile, and per-chunk scaling for the
// pipeline. Pure C++; the loads themselves run in cpu_*.cpp (threads) and, on GPUs, in
// backend/nccl/gpu_*_load.* (cuBLAS, CUDA kernels).
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace collbench::overlap {

struct LoadInfo {
  std::string name;
  std::string description;
  std::vector<std::string> keys;  // accepted key=value settings
};

// gemm, stream, sleep (one file per load and device implements each).
const std::vector<LoadInfo>& compute_loads();
std::vector<std::string> compute_load_names();

// C[m x n] = A[m x k] * B[k x n]. An expert FFN's up-projection for t tokens: m = t,
// k = hidden size, n = expert intermediate size (DeepSeek-V3: t x 7168 x 2048).
struct GemmShape {
  std::int64_t m = 256, n = 256, k = 256;
  [[nodiscard]] double flops() const {
    return 2.0 * static_cast<double>(m) * static_cast<double>(n) * static_cast<double>(k);
  }
  friend bool operator==(const GemmShape&, const GemmShape&) = default;
};

struct ComputeSpec {
  std::string text;                           // as given ("gemm:workload=deepseek-v3,tokens_per_expert=256")
  std::string load;                           // a name of compute_loads()
  std::map<std::string, std::string> params;  // as given
  int threads = 1;                            // CPU: worker threads beside the rank's MPI thread (GPU: unused)
  int repeat = 1;                             // the unit of work runs this many times per launch
  GemmShape gemm;                             // gemm
  std::string workload;                       // gemm: the workload profile that sized it, or empty
  std::uint64_t bytes = 64ull << 20;          // stream: bytes copied per repeat (read + write = 2x traffic)
  double sleep_us = 20000.0;                  // sleep: each thread sleeps this long (leaves the cores to MPI)
};

// Parses `text` = NAME or NAME:key=value,key=value. `num_ranks` is the communicator size, the
// EP size when a gemm is sized from tokens per rank (tokens=T). InputError names --overlap,
// the bad name or key and the accepted ones.
ComputeSpec parse_compute_spec(std::string_view text, int num_ranks = 1);

// Rows one expert receives per micro-batch under uniform routing, rounded up: each of the
// tokens_per_rank tokens of the ep_size ranks goes to top_k of num_experts experts, so an
// expert sees tokens_per_rank x ep_size x top_k / num_experts rows. DeepSeek-V3 (k 8, E 256) at
// 4096 tokens per rank and EP64: 4096 x 64 x 8 / 256 = 8192.
std::int64_t tokens_per_expert(std::int64_t tokens_per_rank, int ep_size, int top_k, int num_experts);

// The load of one of `chunks` chunks of a micro-batch: gemm rows, stream bytes and sleep time
// divided by chunks (rounded up, at least one unit), so that the chunks together do the
// micro-batch's work.
ComputeSpec chunk_spec(const ComputeSpec& spec, int chunks);

// One line for tables and records: "gemm 256x2048x7168 fp32 (7.52 GFLOP) x1, 1 thread".
std::string describe(const ComputeSpec& spec, std::string_view device);

}  // namespace collbench::overlap
