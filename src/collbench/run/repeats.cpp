// Repeats of a case merged into its record (see repeats.hpp).
#include "collbench/run/repeats.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <string>
#include <utility>

#include "collbench/core/error.hpp"
#include "collbench/core/units.hpp"
#include "collbench/stats/compare.hpp"
#include "collbench/stats/summary.hpp"

namespace collbench::run {
namespace {

// Element r of each repeat's per-rank vector `field`, combined by `combine(values, weights)`.
template <class Combine>
std::vector<double> per_rank(const std::vector<RepeatResult>& repeats, std::vector<double> Measurement::*field,
                             const Combine& combine) {
  std::size_t ranks = 0;
  for (const auto& r : repeats) ranks = std::max(ranks, (r.m.*field).size());
  std::vector<double> out(ranks, 0.0);
  for (std::size_t rank = 0; rank < ranks; ++rank) {
    std::vector<double> values, weights;
    for (const auto& r : repeats) {
      if (rank >= (r.m.*field).size()) continue;
      values.push_back((r.m.*field)[rank]);
      weights.push_back(static_cast<double>(r.m.iterations));
    }
    out[rank] = combine(values, weights);
  }
  return out;
}

double weighted_mean(const std::vector<double>& v, const std::vector<double>& w) {
  double sum = 0.0, total = 0.0;
  for (std::size_t i = 0; i < v.size(); ++i) {
    sum += v[i] * w[i];
    total += w[i];
  }
  return total > 0.0 ? sum / total : 0.0;
}

double largest(const std::vector<double>& v, const std::vector<double>& /*weights*/) {
  return v.empty() ? 0.0 : *std::max_element(v.begin(), v.end());
}

double median_of(const std::vector<double>& v, const std::vector<double>& /*weights*/) {
  return stats::median(v);
}

}  // namespace

void validate_repeats(const plan::Sweep& sweep, int k) {
  if (k < 1) throw InputError(fmt::format("--repeats {}: must be at least 1 (1 = measure each case once)", k));
  if (k == 1) return;
  for (const auto& c : sweep.cases) {
    if (!c.overlap.empty()) {
      throw InputError(fmt::format(
          "--repeats {} with --overlap {}: overlap mode is measured once per case; drop --repeats or --overlap", k,
          c.overlap));
    }
  }
}

RepeatResult keep_repeat(Measurement m, std::size_t keep) {
  RepeatResult r;
  r.part.time = record::TimeStats::from(stats::summarize(m.samples_us));
  r.part.iterations = m.iterations;
  r.part.stop_reason = m.stop_reason;
  r.samples_total = m.samples_us.size();
  if (m.samples_us.size() > keep) m.samples_us.resize(keep);
  m.samples_us.shrink_to_fit();
  r.part.samples_kept = m.samples_us.size();
  r.m = std::move(m);
  return r;
}

Measurement merge_repeats(const std::vector<RepeatResult>& repeats) {
  Measurement out;
  if (repeats.empty()) return out;
  out.shape = repeats.front().m.shape;
  out.checked = true;
  std::vector<record::RepeatPart> parts;
  std::map<std::string, std::vector<double>> side;
  for (const auto& r : repeats) {
    parts.push_back(r.part);
    out.samples_us.insert(out.samples_us.end(), r.m.samples_us.begin(), r.m.samples_us.end());
    out.iterations += r.m.iterations;
    out.checked = out.checked && r.m.checked;
    if (out.wrong_by_rank.size() < r.m.wrong_by_rank.size()) out.wrong_by_rank.resize(r.m.wrong_by_rank.size(), 0);
    for (std::size_t i = 0; i < r.m.wrong_by_rank.size(); ++i) out.wrong_by_rank[i] += r.m.wrong_by_rank[i];
    if (out.domain_samples_us.size() < r.m.domain_samples_us.size())
      out.domain_samples_us.resize(r.m.domain_samples_us.size());
    for (std::size_t d = 0; d < r.m.domain_samples_us.size(); ++d) {
      auto& into = out.domain_samples_us[d];
      into.insert(into.end(), r.m.domain_samples_us[d].begin(), r.m.domain_samples_us[d].end());
    }
    for (const auto& [op, us] : r.m.side_us) side[op].push_back(us);
  }
  for (const auto& [op, values] : side) out.side_us[op] = stats::median(values);
  out.stop_reason = record::combined_stop_reason(parts);
  out.rank_mean_us = per_rank(repeats, &Measurement::rank_mean_us, weighted_mean);
  out.rank_wait_us = per_rank(repeats, &Measurement::rank_wait_us, weighted_mean);
  out.rank_max_us = per_rank(repeats, &Measurement::rank_max_us, largest);
  out.rank_p50_us = per_rank(repeats, &Measurement::rank_p50_us, median_of);
  return out;
}

void apply_repeats(record::CaseRecord& rec, const std::vector<RepeatResult>& repeats, double busbw_factor) {
  std::vector<record::RepeatPart> parts;
  std::size_t total = 0;
  for (const auto& r : repeats) {
    parts.push_back(r.part);
    total += r.samples_total;
  }
  rec.time_us = record::combined_time(parts);
  rec.repeats = record::repeats_of(parts);
  rec.samples_dropped = total - std::min(total, rec.samples_us.size());
  rec.algbw_gbps = gbps(static_cast<double>(rec.bytes), rec.time_us->p50);
  rec.busbw_gbps = rec.algbw_gbps * busbw_factor;
}

}  // namespace collbench::run
