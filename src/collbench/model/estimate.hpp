// The model's entry point for one measured or projected case: the physical bound (link rates
// alone; no real run may beat it) and the expected value (bound x calibrated efficiency,
// calibrated caps, plus latency terms) of a collective on a system profile. Pure, no I/O.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "collbench/core/dtype.hpp"
#include "collbench/core/names.hpp"
#include "collbench/core/placement.hpp"
#include "collbench/model/system_profile.hpp"

namespace collbench::model {

struct CaseGeometry {
  std::string collective;  // allreduce reducescatter allgather alltoall alltoallv broadcast sendrecv
  std::string algo;        // auto ring tree nvls nvlstree hierarchical flat cb-multimem ...
  Dtype dtype = Dtype::float32;
  std::uint64_t bytes = 0;  // nccl-tests convention S (docs/hardware-context.md section 3)
  Placement placement;
  Scope scope = Scope::global;
};

struct Estimate {
  std::string system;
  double bound_time_us = 0.0;
  double bound_algbw_gbps = 0.0;
  double bound_busbw_gbps = 0.0;
  double expected_time_us = 0.0;
  double expected_busbw_gbps = 0.0;
  double wire_bytes_per_rank = 0.0;  // what the busiest rank sends per direction over its links
  std::string algo_modelled;         // for auto: the algorithm the model predicts the library picks
  std::string note;
  // Additions beyond the record's model object:
  double expected_algbw_gbps = 0.0;
  int busbw_ranks = 0;        // the communicator size used for the busbw factor
  double bound_margin = 0.0;  // calibration margin of the profile (0 for datasheet profiles)
  std::string protocol;       // the library protocol of the expected value (NCCL ring: LL, LL128, Simple), or ""
};

// Either an estimate, or why the case is not modelled (shown as such, never silently dropped).
struct ModelOutcome {
  std::optional<Estimate> estimate;
  std::string why_not;
};

ModelOutcome model_case(const SystemProfile& system, const CaseGeometry& geometry);

// nullopt when the case is not modelled (model_case says why).
std::optional<Estimate> estimate(const SystemProfile& system, const CaseGeometry& geometry);

// = bound time / measured time: 1.0 means the run reached the physical bound.
double efficiency(const Estimate& estimate, double measured_p50_us);

// A measurement faster than its bound means the model (or the profile) is wrong, or, on a
// calibrated profile, noise within the calibration margin. Flag it; never hide it.
struct BoundCheck {
  double efficiency = 0.0;
  bool beats_bound = false;    // measured < bound
  bool beyond_margin = false;  // measured < bound x (1 - margin): not explained by calibration noise
};
BoundCheck check_against_bound(const Estimate& estimate, double measured_p50_us);

// The collectives the model knows (moe-* go through estimate_from_traffic, traffic.hpp).
const std::vector<std::string>& modelled_collectives();

// Busbw factor for a collective (nccl-tests, docs/hardware-context.md section 3); InputError when unknown.
double busbw_factor(std::string_view collective, int num_ranks);

// "3x72+40" (uneven) or "4x64": the packing every scaling report must state.
std::string packing_string(const Placement& placement);

}  // namespace collbench::model
