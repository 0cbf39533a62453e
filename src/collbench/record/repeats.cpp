// A case measured in repeats: the record's time_us, `repeats` object and stop reason from each
// repeat's own statistics (record.hpp; docs/measurement.md "Repeats").
#include "collbench/stats/repeats.hpp"

#include <algorithm>
#include <map>
#include <set>
#include <vector>

#include "collbench/core/units.hpp"
#include "collbench/record/jsonl.hpp"
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

namespace {

// Whether the run header's configuration lists some case more than once (a run that measured
// repetitions on purpose; run and sweep measure a repeated case once).
bool measured_repetitions(const ResultFile& file) {
  if (!file.header || !file.header->config.is_object()) return false;
  const auto it = file.header->config.find("cases");
  if (it == file.header->config.end() || !it->is_array()) return false;
  std::set<std::string> seen;
  for (const auto& c : *it) {
    if (!seen.insert(c.dump()).second) return true;
  }
  return false;
}

// The repetitions of one case key (in file order) as one record.
CaseRecord merged(std::vector<CaseRecord>& reps) {
  CaseRecord out = reps.front();
  std::vector<RepeatPart> parts;
  out.samples_us.clear();
  out.iterations = 0;
  out.samples_dropped = 0;
  out.wrong_total = 0;
  out.per_rank.reset();  // per repetition only; not merged
  for (auto& r : reps) {
    out.iterations += r.iterations;
    out.samples_dropped += r.samples_dropped;
    out.wrong_total += r.wrong_total;
    out.checked = out.checked && r.checked;
    if (r.status != "ok" && out.status == "ok") {
      out.status = r.status;
      out.reason = r.reason;
    }
    if (r.status != "ok" || !r.time_us) continue;
    parts.push_back({*r.time_us, r.iterations, r.samples_us.size(), r.stop_reason});
    out.samples_us.insert(out.samples_us.end(), r.samples_us.begin(), r.samples_us.end());
  }
  if (parts.empty()) return out;
  const double factor = out.algbw_gbps > 0.0 ? out.busbw_gbps / out.algbw_gbps : 0.0;
  out.time_us = combined_time(parts);
  out.stop_reason = combined_stop_reason(parts);
  if (parts.size() >= 2) out.repeats = repeats_of(parts);
  out.algbw_gbps = gbps(static_cast<double>(out.bytes), out.time_us->p50);
  out.busbw_gbps = out.algbw_gbps * factor;
  return out;
}

}  // namespace

ResultFile group_repetitions(ResultFile file, std::size_t& grouped) {
  grouped = 0;
  if (!measured_repetitions(file)) return file;
  std::map<std::string, std::vector<CaseRecord>> by_key;
  std::vector<std::string> order;  // keys in order of first appearance
  for (auto& r : file.cases) {
    auto& reps = by_key[r.case_key];
    if (reps.empty()) order.push_back(r.case_key);
    reps.push_back(std::move(r));
  }
  file.cases.clear();
  for (const auto& key : order) {
    auto& reps = by_key[key];
    if (reps.size() > 1) ++grouped;
    file.cases.push_back(reps.size() == 1 ? std::move(reps.front()) : merged(reps));
  }
  return file;
}

std::string combined_stop_reason(const std::vector<RepeatPart>& parts) {
  for (const auto& p : parts) {
    if (p.stop_reason != "converged") return p.stop_reason;
  }
  return parts.empty() ? std::string() : std::string("converged");
}

}  // namespace collbench::record
