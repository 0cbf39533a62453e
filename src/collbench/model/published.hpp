// Published collective measurements the model has been checked against, shipped beside the
// system profiles (profiles/published/<system>.yaml, docs/model.md "Validated range"). Each point
// names its source; the model's bound and expected value for it are computed, never stored, so
// measured/expected always reflects the model of the build that prints it.
//
// `collbench model` and `report weak-scaling` say how far in scale the model has been checked
// (the largest published GPU count of the system and collective) and which points are nearest;
// `accept` judges cross-domain checks beyond that range against a reference result instead of
// the unchecked expected value alone.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "collbench/core/dtype.hpp"
#include "collbench/model/estimate.hpp"
#include "collbench/model/system_profile.hpp"

namespace collbench::model {

struct PublishedPoint {
  std::string collective;  // as collbench names it (allreduce, ...)
  std::string algo = "auto";
  Dtype dtype = Dtype::float32;
  std::vector<int> domain_sizes;  // the placement: GPUs per scale-up domain
  std::uint64_t bytes = 0;        // nccl-tests S
  double measured_busbw_gbps = 0.0;
  std::string source;
  std::string note;  // what the source does not state, what the point is (optional)

  [[nodiscard]] int gpus() const;
};

struct PublishedPoints {
  std::string system;  // the system profile these points were measured on
  std::vector<PublishedPoint> points;
  std::string path;  // where they were loaded from ("" when parsed from text)
};

// Parses points text; every problem is an InputError naming ORIGIN, the line and the key.
PublishedPoints parse_published_points(std::string_view yaml_text, const std::string& origin);

// profiles/published/<system>.yaml from the first profile directory that has it; an empty set
// (system = name, no points) when none ships.
PublishedPoints load_published_points(const std::string& system);

// A point evaluated by the model: its estimate (nullopt when the model does not cover it) and
// measured / expected busbw.
struct CheckedPoint {
  const PublishedPoint* point = nullptr;
  std::optional<Estimate> estimate;
  double measured_over_expected = 0.0;  // 0 without an estimate
  double measured_over_bound = 0.0;
};
CheckedPoint check_point(const SystemProfile& system, const PublishedPoint& point);

// How far the model has been checked for `collective` on a system: the largest published GPU
// count (0 when nothing is published), the largest one where the model's expected value held
// (measured >= `confirm` x expected and not above the bound: 0 when none did), and the published
// points nearest to `gpus` (in log2 of the GPU count; at most two: the nearest at or below and the
// nearest above).
inline constexpr double kConfirmsExpected = 0.8;  // the shipped fabric checks' fraction_of_expected
struct CheckedRange {
  int largest_gpus = 0;
  int confirmed_gpus = 0;
  std::vector<const PublishedPoint*> nearest;
};
CheckedRange checked_range(const SystemProfile& system, const PublishedPoints& points, std::string_view collective,
                           int gpus, double confirm = kConfirmsExpected);

// One line for model output and reports: "gb200-nvl72 allreduce: published points up to 1440
// GPUs, expected held (>= 0.8 of expected) up to 72; nearest to 256: ..." or "not checked ...".
std::string checked_range_line(const SystemProfile& system, const PublishedPoints& points, std::string_view collective,
                               int gpus);

}  // namespace collbench::model
