// A compute load that runs beside a collective (overlap mode, docs/overlap.md). start() begins
// one unit of work asynchronously (CPU: on worker threads; GPU: on a second stream) and returns
// at once; wait() returns when it has finished. The caller times start..wait on the host clock.
// Owners release their threads, streams and memory on destruction (RAII).
#pragma once

#include <memory>
#include <string>

#include "collbench/overlap/spec.hpp"

namespace collbench::overlap {

class ComputeLoad {
 public:
  virtual ~ComputeLoad() = default;
  virtual void start() = 0;
  virtual void wait() = 0;
  // "cpu" or "gpu".
  [[nodiscard]] virtual std::string device() const = 0;
  // Counts wrong elements of the last unit's output, where the load can tell (gemm: every
  // element of C must equal k; stream: the copy must equal its source); 0 for sleep.
  [[nodiscard]] virtual std::uint64_t check() = 0;
};

// CPU implementations (cpu_gemm.cpp, cpu_stream.cpp, cpu_sleep.cpp), chosen by spec.load.
std::unique_ptr<ComputeLoad> make_cpu_load(const ComputeSpec& spec);

// One per file.
std::unique_ptr<ComputeLoad> make_cpu_gemm(const ComputeSpec& spec);
std::unique_ptr<ComputeLoad> make_cpu_stream(const ComputeSpec& spec);
std::unique_ptr<ComputeLoad> make_cpu_sleep(const ComputeSpec& spec);

}  // namespace collbench::overlap
