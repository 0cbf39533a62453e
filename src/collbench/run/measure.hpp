// Measuring one case on one communicator: verification before timing, warm-up, then timed
// rounds until the stopping rule says enough (docs/design.md "Measurement rules"). All ranks take
// part; rank 0 receives the per-iteration max over ranks and decides when to stop.
#pragma once

#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "collbench/backend/backend.hpp"
#include "collbench/backend/registry.hpp"
#include "collbench/coll/collective.hpp"
#include "collbench/overlap/spec.hpp"
#include "collbench/plan/case.hpp"
#include "collbench/run/device_verify.hpp"
#include "collbench/run/fault.hpp"
#include "collbench/run/overlap_measure.hpp"
#include "collbench/run/session.hpp"
#include "collbench/run/watchdog.hpp"

namespace collbench::run {

struct MeasureInput {
  const plan::Case* spec = nullptr;
  const coll::Collective* collective = nullptr;
  backend::Backend* backend = nullptr;
  backend::Comm* comm = nullptr;  // the measured communicator (world or this rank's domain)
  const Control* control = nullptr;
  backend::Progress progress = backend::Progress::spin;
  const FaultPlan* faults = nullptr;
  int case_index = 0;
  int world_rank = 0;
  std::size_t max_samples_kept = 10000;
  Watchdog* watchdog = nullptr;               // null: no watchdog
  double timeout_s = 0.0;                     // per collective or barrier
  const Placement* placement = nullptr;       // the run's placement (null: one domain)
  VerifyMode verify = VerifyMode::automatic;  // --verify: where the input is written and the result checked
};

// Overlap mode's part of a measurement (at namespace scope: clang cannot default-construct a
// nested struct with member initializers inside std::optional of its enclosing class).
struct OverlapMeasurement {
  overlap::ComputeSpec compute;  // per chunk when chunks > 0
  std::string device;            // cpu | gpu
  int chunks = 0;
  int stages = 1;
  OverlapSamples samples;                            // rank 0
  std::vector<std::uint64_t> compute_wrong_by_rank;  // rank 0
};

struct Measurement {
  coll::Shape shape;  // this rank's shape
  // rank 0 only:
  std::vector<double> samples_us;  // per-iteration max over ranks (all of them)
  std::vector<double> rank_mean_us, rank_max_us, rank_wait_us;
  std::vector<double> rank_p50_us;                     // each rank's median per-iteration time
  std::vector<std::vector<double>> domain_samples_us;  // scope domain, >1 domain: per domain, per iteration
  std::vector<std::uint64_t> wrong_by_rank;
  int iterations = 0;
  std::string stop_reason;
  bool checked = false;
  // Side operations of the family (Collective::side_operations), timed on their own after the
  // timed rounds: the median over iterations of the per-iteration max over ranks, in us.
  std::map<std::string, double> side_us;
  // Overlap mode (spec->overlap set): the three timings and what ran beside the collective.
  using Overlap = OverlapMeasurement;
  std::optional<Overlap> overlap;
  // Set on every rank when the library refused the verification launch as unsupported on all of
  // them (backend::Unsupported): the case is waived with this reason and nothing else was measured.
  std::optional<std::string> waived;
};

Measurement measure(const MeasureInput& in);

// Whether the timed rounds read MPI_Wtime inline instead of calling the backend's timer: when the
// timer only reads MPI_Wtime (the MPI backend) and no fault item applies to the case (the fault
// injection's hang, delay, slow and slow-pair need the timer's path). Same times, fewer
// instructions between the two clock reads (docs/performance.md section 5, Run D).
bool use_inline_clock(bool timer_reads_mpi_wtime, bool case_has_faults);

// The collective's view of a case on a communicator of `num_ranks` ranks: dtype, reduction,
// parameters, algorithm, and the placement of the communicator's ranks (scope domain: one
// domain; global: the run's placement).
coll::CaseContext case_context(const plan::Case& spec, int rank, int num_ranks, const Placement* placement);

// The record's `overlap` object (schema: results/schema, docs/results-format.md) from rank 0's
// overlap samples: medians, exposed time, efficiency, the load, and the pipeline's ideal.
// `progress` is how the collective was waited for (MPI: yield = non-blocking + test).
nlohmann::json overlap_record(const Measurement::Overlap& o, const std::string& progress);

// One chunk of a pipelined overlap case (docs/overlap.md): MoE families get tokens / chunks
// tokens per rank (rounded up), the others bytes / chunks. InputError when a chunk would be empty.
plan::Case pipeline_chunk_case(const plan::Case& spec, int chunks);

// Stop decision on rank 0 after samples.size() timed iterations over `elapsed_s` seconds: the
// reason (max_iters, max_time, converged, budget, checked in that order), or empty to continue.
std::string stop_reason(const plan::StopRule& rule, const std::vector<double>& samples, double elapsed_s);

// Length of the next timed round after `iterations` iterations over `elapsed_s` seconds, the last
// round `round` long: twice the last, but no further than the first limit ahead (max_iters,
// max_time, the end of the budget) at the rate measured so far; between 1 and 4096.
int next_round_size(const plan::StopRule& rule, int iterations, int round, double elapsed_s);

}  // namespace collbench::run
