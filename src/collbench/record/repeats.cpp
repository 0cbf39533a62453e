// A case measured in repeats: the record's time_us, `repeats` object and stop reason from each
// repeat's own statistics (record.hpp; docs/measurement.md "Repeats").
#include "collbench/stats/repeats.hpp"

#include <algorithm>
#include <vector>

#include "collbench/record/record.hpp"
#include "collbench/stats/compare.hpp"

namespace collbench::record {
namespace {

// The median over repeats of one statistic.
double median_of(const std::vector<RepeatPart>& parts, double TimeStats::*field) {
  std::vector<double> v;
  v.reserve(parts.size());
  for (const auto& p : parts) v.push_back(p.time.*field);
  return stats::median(v);
}

}  // namespace

TimeStats combined_time(const std::vector<RepeatPart>& parts) {
  TimeStats t;
  if (parts.empty()) return t;
  for (double TimeStats::*f : {&TimeStats::p50, &TimeStats::p5, &TimeStats::p95, &TimeStats::p99, &TimeStats::mean,
                               &TimeStats::stdev, &TimeStats::cv, &TimeStats::ci95_low, &TimeStats::ci95_high}) {
    t.*f = median_of(parts, f);
  }
  const auto by = [](double TimeStats::*f) {
    return [f](const RepeatPart& a, const RepeatPart& b) { return a.time.*f < b.time.*f; };
  };
  t.min = std::min_element(parts.begin(), parts.end(), by(&TimeStats::min))->time.min;
  t.max = std::max_element(parts.begin(), parts.end(), by(&TimeStats::max))->time.max;
  return t;
}

Repeats repeats_of(const std::vector<RepeatPart>& parts) {
  Repeats r;
  r.k = static_cast<int>(parts.size());
  std::vector<double> within;
  for (const auto& p : parts) {
    r.p50_us.push_back(p.time.p50);
    r.ci95_low_us.push_back(p.time.ci95_low);
    r.ci95_high_us.push_back(p.time.ci95_high);
    r.iterations.push_back(p.iterations);
    r.samples_kept.push_back(p.samples_kept);
    r.stop_reason.push_back(p.stop_reason);
    within.push_back(p.time.p50 > 0.0 ? 100.0 * (p.time.ci95_high - p.time.ci95_low) / 2.0 / p.time.p50 : 0.0);
  }
  const stats::RepeatSpread s = stats::repeat_spread(r.p50_us);
  r.spread_pct = s.spread_pct;
  r.sd_log = s.sd_log;
  r.between_low_us = s.low;
  r.between_high_us = s.high;
  r.between_confidence = s.confidence;
  r.within_ci_pct = stats::median(within);
  return r;
}

std::string combined_stop_reason(const std::vector<RepeatPart>& parts) {
  for (const auto& p : parts) {
    if (p.stop_reason != "converged") return p.stop_reason;
  }
  return parts.empty() ? std::string() : std::string("converged");
}

}  // namespace collbench::record
