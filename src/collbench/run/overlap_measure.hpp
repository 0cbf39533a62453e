// Overlap mode timing (docs/overlap.md): the collective alone, the compute load alone, and both
// started together, interleaved per iteration so that drift hits all three alike; each timed on
// the host clock after both the collective and the load have finished, per rank, then the
// per-iteration max over ranks. With chunks, "both" is the pipeline schedule of
// overlap/pipeline.hpp. Needs MPI (the control channel); the loads come from the backend.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "collbench/backend/registry.hpp"
#include "collbench/overlap/load.hpp"
#include "collbench/plan/case.hpp"
#include "collbench/run/session.hpp"

namespace collbench::run {

struct OverlapOps {
  int chunks = 0;  // 0: the plain overlap; >= 1: the pipeline over that many chunks
  int stages = 1;  // communication stages per chunk (Collective::num_stages)
  // Launches one operation: stage -1 = the whole collective (plain overlap), else one stage
  // of one chunk.
  std::function<void(int chunk, int stage)> launch;
  std::function<void()> synchronize;  // the collective's completion (GPU: its stream)
  overlap::ComputeLoad* compute = nullptr;
  // Called before every barrier with the iteration (the watchdog learns where the rank is).
  std::function<void(int iteration)> progress;
};

struct OverlapSamples {
  // Rank 0: per-iteration max over ranks, in us. Pipeline: comm = every chunk's every stage
  // back to back, compute = every chunk's compute back to back, both = the schedule.
  std::vector<double> comm_us, compute_us, both_us;
  std::vector<std::vector<double>> stage_us;  // pipeline: per stage, all chunks back to back
  int iterations = 0;
  std::string stop_reason;
};

// Collective over the control communicator; every rank takes part, rank 0 decides when to stop
// (plan::StopRule on the "both" samples, as measure() does on the collective's).
OverlapSamples time_overlap(const OverlapOps& ops, const Control& control, const plan::StopRule& rule,
                            backend::Progress progress);

}  // namespace collbench::run
