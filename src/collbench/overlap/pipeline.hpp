// The chunked communication/compute pipeline that MoE trainers run (DualPipe-style overlap,
// docs/overlap.md): a micro-batch is split into C chunks; chunk i's communication runs while
// chunk i-1 computes. Pure C++: the schedule, its predicted step time from per-operation times,
// and the ideal max(total compute, total communication).
#pragma once

#include <vector>

namespace collbench::overlap {

// One communication operation of the pipeline: `stage` 0 runs before the chunk's compute
// (MoE dispatch, or the only stage of a one-stage collective), stage 1 after it (MoE combine).
struct ChunkOp {
  int chunk = 0;
  int stage = 0;
  friend bool operator==(const ChunkOp&, const ChunkOp&) = default;
};

// One time slot: the compute of one chunk (or none) runs beside the slot's communication
// operations, which run one after the other.
struct Slot {
  int compute_chunk = -1;  // -1: no compute in this slot
  std::vector<ChunkOp> comm;
};

// The schedule for `chunks` chunks (>= 1) of a collective with `stages` communication stages
// (1 or 2; std::invalid_argument otherwise).
//   stages = 1: slot s (0..C) communicates chunk s while chunk s-1 computes.
//   stages = 2: slot s (0..C+1) computes chunk s-1 while it combines chunk s-2 (stage 1) and
//               dispatches chunk s (stage 0); combine first, it is the older work.
// Every chunk is dispatched before it computes and computes before it is combined.
std::vector<Slot> pipeline_schedule(int chunks, int stages);

// Per-operation times (the same for every chunk), in us.
struct ChunkTimes {
  std::vector<double> stage_us;  // one per stage
  double compute_us = 0.0;
};

// The schedule's step time if every operation took its time alone and the two resources
// (network, compute) were independent: sum over slots of max(compute, sum of communication).
// It exceeds the ideal by the pipeline's fill and drain.
double schedule_time_us(const std::vector<Slot>& schedule, const ChunkTimes& times);

// max(total compute, total communication): no schedule on independent resources does better.
double ideal_step_us(double total_comm_us, double total_compute_us);

}  // namespace collbench::overlap
