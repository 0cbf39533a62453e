// The training step model (docs/step.md): a workload's architecture, a parallel layout and a
// system's compute figures give each layer's forward and backward compute; collective times
// (model or measured, comm.hpp) give its TP, EP, PP and DP communication; an overlap efficiency
// per phase says how much of it hides behind compute. Out come the per-layer timeline, the step
// time of the slowest pipeline rank under the interleaved 1F1B schedule, model FLOPs per step and
// delivered TFLOP/s per GPU. Pure arithmetic over its inputs; no I/O.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "collbench/model/system_profile.hpp"
#include "collbench/step/architecture.hpp"
#include "collbench/step/comm.hpp"
#include "collbench/step/ep_placement.hpp"
#include "collbench/step/groups.hpp"
#include "collbench/step/layout.hpp"

namespace collbench::step {

// Overlap efficiency per phase kind: the fraction of its compute window a collective may hide in
// (docs/overlap.md's efficiency). The stated default: TP and EP on the critical path, PP and DP
// hidden (Megatron-Core overlaps the pipeline's sends and the distributed optimizer's exchanges).
struct Overlap {
  double tp = 0.0, ep = 0.0, pp = 1.0, dp = 1.0;
  std::string source = "default";
  std::map<std::string, std::string> detail;  // kind -> the overlap record that served it
};

struct StepInputs {
  Architecture arch;
  std::string workload;  // name, for the report
  Layout layout;
  model::SystemProfile system;            // must hold `compute`
  int ranks_per_domain = 0;               // GPUs per scale-up domain; 0: every GPU in one domain
  Packing packing = Packing::ep_aligned;  // how GPUs fill the domains (ep_placement.hpp)
  Overlap overlap;
};

// One collective phase of the step.
struct Phase {
  std::string name;        // "TP all-gather", "EP dispatch", "DP reduce-scatter", ...
  std::string collective;  // allgather reducescatter alltoall sendrecv
  GroupKind group = GroupKind::tp;
  int group_size = 1;
  bool scale_out = false;             // some group of it spans scale-up domains
  double bytes = 0.0;                 // per call, the collective's nccl-tests convention
  CommAnswer answer;                  // time of one call, and its source
  double inside_one_domain_us = 0.0;  // scale-out model phases: the same call with the group inside one domain
  double overlap = 0.0;               // efficiency applied
  double window_us = 0.0;             // compute one call may hide behind
  double slack_us = 0.0;              // window - time: negative = it cannot fit
  // Per step on the critical pipeline rank, over its m micro-batches (DP phases: once per step).
  // The pipeline's fill and drain (bubble_us) repeat the per-micro-batch exposure (PP-1)/VPP
  // more times; that share is in bubble_us, not here, so exposed <= time and hidden = the rest.
  double calls_per_step = 0.0;
  double time_per_step_us = 0.0;     // calls x time
  double exposed_per_step_us = 0.0;  // what it adds to the critical rank's m micro-batches
};

// One layer of a kind, one micro-batch, on one GPU.
struct LayerRow {
  std::string kind;                                          // dense, moe, output
  int count = 0;                                             // layers of this kind in the model
  double fwd_compute_us = 0.0, bwd_compute_us = 0.0;         // backward includes recomputation
  double fwd_comm_us = 0.0, bwd_comm_us = 0.0;               // every collective call of the layer
  double fwd_exposed_us = 0.0, bwd_exposed_us = 0.0;         // what is left after overlap
  std::vector<std::pair<int, double>> fwd_calls, bwd_calls;  // (phase index, calls)
  std::vector<double> fwd_phase_exposed, bwd_phase_exposed;  // exposed us of each entry above
};

struct StepPoint {
  Shape shape;
  EpPlacement placement;  // where the GPUs sit; EP groups inside domains unless it says otherwise
  std::vector<LayerRow> layers;
  std::vector<Phase> phases;
  int critical_rank = 0;           // pipeline rank with the most work per micro-batch
  double microbatch_fwd_us = 0.0;  // on it, every chunk, exposed communication included
  double microbatch_bwd_us = 0.0;
  double schedule_factor = 0.0;  // m + (PP - 1) / VPP micro-batch slots per step
  double pipeline_us = 0.0;      // schedule_factor x (fwd + bwd)
  double bubble_us = 0.0;        // (PP - 1) / VPP x (fwd + bwd)
  double compute_us = 0.0;       // pure compute of the critical rank per step (bubble excluded)
  double dp_exposed_us = 0.0;
  double step_us = 0.0;
  double tokens = 0.0;          // per step
  double model_flops = 0.0;     // per step
  double tflops_per_gpu = 0.0;  // delivered: model FLOPs / (step time x GPUs)
  double retention = 1.0;       // tflops / the first GPU count's
};

StepPoint build_step(const StepInputs& in, const CommTimes& comm, int gpus);

}  // namespace collbench::step
