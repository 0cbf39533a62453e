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

}  // namespace collbench::report::weak_scaling_detail
