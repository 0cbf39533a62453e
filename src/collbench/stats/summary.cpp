// Summary statistics.
#include "collbench/stats/summary.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>

namespace collbench::stats {

double Summary::relative_ci_half_width() const {
  if (samples < 2 || p50 <= 0.0) return std::numeric_limits<double>::infinity();
  return (ci95_high - ci95_low) / 2.0 / p50;
}

double percentile_sorted(std::span<const double> sorted, double q) {
  if (sorted.empty()) return 0.0;
  const double pos = q * static_cast<double>(sorted.size() - 1);
  const auto lo = static_cast<std::size_t>(std::floor(pos));
  const auto hi = std::min(lo + 1, sorted.size() - 1);
  const double frac = pos - static_cast<double>(lo);
  return sorted[lo] + (sorted[hi] - sorted[lo]) * frac;
}

CiIndices median_ci_indices(std::size_t n) {
  if (n == 0) return {0, 0};
  const double half = static_cast<double>(n) / 2.0;
  const double spread = 1.96 * std::sqrt(static_cast<double>(n)) / 2.0;
  const double lo = std::floor(half - spread);
  const double hi = std::ceil(half + spread);
  const auto last = static_cast<double>(n - 1);
  return {static_cast<std::size_t>(std::clamp(lo, 0.0, last)), static_cast<std::size_t>(std::clamp(hi, 0.0, last))};
}

Summary summarize(std::span<const double> samples) {
  Summary s;
  s.samples = samples.size();
  if (samples.empty()) return s;
  std::vector<double> sorted(samples.begin(), samples.end());
  std::sort(sorted.begin(), sorted.end());
  s.min = sorted.front();
  s.max = sorted.back();
  s.p50 = percentile_sorted(sorted, 0.50);
  s.p5 = percentile_sorted(sorted, 0.05);
  s.p95 = percentile_sorted(sorted, 0.95);
  s.p99 = percentile_sorted(sorted, 0.99);
  s.mean = std::accumulate(sorted.begin(), sorted.end(), 0.0) / static_cast<double>(sorted.size());
  if (sorted.size() > 1) {
    double ss = 0.0;
    for (double v : sorted) ss += (v - s.mean) * (v - s.mean);
    s.stdev = std::sqrt(ss / static_cast<double>(sorted.size() - 1));
  }
  s.cv = s.mean > 0.0 ? s.stdev / s.mean : 0.0;
  const auto ci = median_ci_indices(sorted.size());
  s.ci95_low = sorted[ci.low];
  s.ci95_high = sorted[ci.high];
  return s;
}

}  // namespace collbench::stats
