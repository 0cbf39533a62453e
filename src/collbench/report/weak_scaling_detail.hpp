// Internals of the weak-scaling report shared by its files (not an interface of the layer).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "collbench/report/weak_scaling.hpp"

namespace collbench::report::weak_scaling_detail {

// A record that can be a point: status ok with a positive p50.
bool measured(const record::CaseRecord& r);

struct Systems {
  std::optional<std::string> measured;               // the system the records were measured on
  bool measured_from_records = false;                // named by records or run headers (not only --system)
  const model::SystemProfile* bounds = nullptr;      // profile for bounds of records without `model`
  const model::SystemProfile* projection = nullptr;  // profile for projections
  bool cross = false;
  std::string status;  // why there are no projections
};

// The system the records were measured on, and the profiles for bounds and projections.
// InputError when the records name several systems, or --system contradicts them.
Systems resolve_systems(const std::vector<InputFile>& files, const WeakScalingOptions& opt);

// ---- policies (weak_scaling_policy.cpp) ---------------------------------------------------------

inline constexpr double kDefaultAnomalyBelowPct = 40.0;

// "4x72" for domain sizes.
std::string packing_string_of(const std::vector<int>& sizes);
// The note every projected point carries: its packing and the rule that chose it.
std::string packing_note(const ProjectedPoint& pp, int m, Packing packing);
// Why N was not projected under --packing full, with the alternatives.
std::string no_full_packing_note(int n, int m);
// InputError when --anomaly-below is not a percentage.
void check_anomaly_option(const WeakScalingOptions& opt);
// The anomaly threshold of a record: --anomaly-below, else 40 for GPU measurements (any backend
// but mpi) and 0 (off) for CPU ones, whose bound is a ping-pong rate far above what collectives reach.
double anomaly_threshold(const WeakScalingOptions& opt, const record::CaseRecord& r);
void flag_anomaly(MeasuredPoint& m, double threshold);
void warn_anomalies(WeakScalingReport& rep);
// Measurements faster than their bound: the profile (or its calibration) is wrong for them.
void warn_beyond_bound(WeakScalingReport& rep);
// Index of N = base among the points' rank counts.
std::optional<std::size_t> base_index(const std::vector<int>& ranks, int base);
// InputError when --base names an N at which no group has a reference point.
void check_base_found(const WeakScalingReport& rep);

}  // namespace collbench::report::weak_scaling_detail
