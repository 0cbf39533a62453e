// Internals of the weak-scaling report shared by its files (not an interface of the layer).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "collbench/model/estimate.hpp"
#include "collbench/scaling/weak_scaling.hpp"

namespace collbench::scaling::weak_scaling_detail {

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
Systems resolve_systems(const std::vector<record::InputFile>& files, const WeakScalingOptions& opt);

// The model's estimate for a measured or projected case; nullopt with `why` filled otherwise.
std::optional<model::Estimate> estimate_for(const model::SystemProfile& profile, const std::string& collective,
                                            const std::string& algo, const std::string& dtype, std::uint64_t bytes,
                                            const std::string& scope, const std::vector<int>& domain_sizes,
                                            std::string& why);

// ---- projections (weak_scaling_projection.cpp) ---------------------------------------------------

// A projected point beyond --extrapolation-warn's factor of the largest measured N.
struct Far {
  int n, largest;
  double factor;
};

// Projections of group g to the requested rank counts without a measurement (or above
// --calibrate-at), calibrated on its largest non-anomalous point; `reference` is the record of
// N0 (null when the group has none). Far extrapolations are appended to `far`.
void add_projections(WeakScalingGroup& g, const record::CaseRecord* reference, const WeakScalingReport& rep,
                     const Systems& systems, const WeakScalingOptions& opt, std::vector<Far>& far);
// One warning for the report (each projected point also carries its own note and flag).
void warn_far_projections(WeakScalingReport& rep, const std::vector<Far>& far, const WeakScalingOptions& opt);

// ---- policies (weak_scaling_policy.cpp) ---------------------------------------------------------

inline constexpr double kDefaultAnomalyBelowPct = 40.0;

// "4x72" for domain sizes.
std::string packing_string_of(const std::vector<int>& sizes);
// Domains of different sizes.
bool uneven(const std::vector<int>& sizes);
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

}  // namespace collbench::scaling::weak_scaling_detail
