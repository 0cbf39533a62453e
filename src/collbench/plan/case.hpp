// A Case: one measurement to make (collective, size, dtype, reduction, backend, algorithm,
// scope, placement-independent settings, stopping rule). Plans expand into Cases; the runner
// measures Cases; records name them by case_key. Pure C++.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "collbench/core/dtype.hpp"
#include "collbench/core/names.hpp"
#include "collbench/core/redop.hpp"

namespace collbench::plan {

// When to stop timing a case (docs/measurement.md step 6).
struct StopRule {
  int warmup = 5;  // -w
  int min_iters = 10;
  int max_iters = 100000;     // -n N sets min_iters = max_iters = N
  double min_time_s = 0.005;  // --min-time: before a convergence stop
  double max_time_s = 2.0;    // --max-time
  double max_noise = 0.01;    // --max-noise: relative 95% CI half-width of the median
  // The budget: once a case has run at least max(budget_iters, min_iters) iterations and budget_s
  // seconds, it stops (reason "budget") even if the interval is wider than max_noise. A case
  // then costs about max(budget_iters x its iteration time, budget_s). budget_s 0: off (--budget 0).
  int budget_iters = 100;
  double budget_s = 0.01;  // --budget
  int batch = 20;          // pipelined: operations per timed sample
};

struct Case {
  std::string collective = "allreduce";
  Redop redop = Redop::sum;
  Dtype dtype = Dtype::float32;
  std::string backend = "mpi";
  std::string algo = "auto";
  Scope scope = Scope::global;
  bool in_place = false;
  Timing timing = Timing::isolated;
  std::string buffers = "host";
  int graph = 0;  // CUDA-graph replays (GPU backends); 0 = off
  int root = 0;
  bool check = true;        // -c: verify before timing
  std::uint64_t bytes = 0;  // requested (rounded down per collective when run)
  StopRule stop;
  // Collective-specific parameters (MoE workload, tokens, routing, ...), as given.
  std::map<std::string, std::string> params;
  // Overlap mode (docs/overlap.md): a compute load run beside the collective, as given to
  // --overlap (e.g. "gemm:m=512,n=512,k=512"); empty = off. overlap_chunks > 0: the pipeline
  // (chunk i's communication beside chunk i-1's compute) with that many chunks.
  std::string overlap;
  int overlap_chunks = 0;
};

// Geometric (factor > 1) or arithmetic (increment > 0) size series from min to max inclusive,
// as nccl-tests' -b/-e/-f/-i. InputError when min > max or neither step is usable.
std::vector<std::uint64_t> size_series(std::uint64_t min_bytes, std::uint64_t max_bytes, double factor,
                                       std::uint64_t increment);

}  // namespace collbench::plan
