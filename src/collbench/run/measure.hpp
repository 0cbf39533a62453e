// Measuring one case on one communicator: verification before timing, warm-up, then timed
// rounds until the stopping rule says enough (DESIGN.md "Measurement rules"). All ranks take
// part; rank 0 receives the per-iteration max over ranks and decides when to stop.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "collbench/backend/backend.hpp"
#include "collbench/backend/registry.hpp"
#include "collbench/coll/collective.hpp"
#include "collbench/plan/case.hpp"
#include "collbench/run/fault.hpp"
#include "collbench/run/session.hpp"

namespace collbench::run {

struct MeasureInput {
  const plan::Case* spec = nullptr;
  const coll::Collective* collective = nullptr;
  backend::Backend* backend = nullptr;
  backend::Comm* comm = nullptr;   // the measured communicator (world or this rank's domain)
  const Control* control = nullptr;
  backend::Progress progress = backend::Progress::spin;
  const FaultPlan* faults = nullptr;
  int case_index = 0;
  int world_rank = 0;
  std::size_t max_samples_kept = 10000;
};

struct Measurement {
  coll::Shape shape;                 // this rank's shape
  // rank 0 only:
  std::vector<double> samples_us;    // per-iteration max over ranks (all of them)
  std::vector<double> rank_mean_us, rank_max_us, rank_wait_us;
  std::vector<std::uint64_t> wrong_by_rank;
  int iterations = 0;
  std::string stop_reason;
  bool checked = false;
};

Measurement measure(const MeasureInput& in);

// Stop decision on rank 0 after `iterations` timed iterations over `elapsed_s` seconds.
// Returns the reason, or empty to continue. Exposed for unit tests.
std::string stop_reason(const plan::StopRule& rule, const std::vector<double>& samples, double elapsed_s);

}  // namespace collbench::run
