// Between-repeat statistics (see repeats.hpp).
#include "collbench/stats/repeats.hpp"

#include <algorithm>
#include <cmath>
#include <vector>

#include "collbench/stats/compare.hpp"

namespace collbench::stats {

double order_statistic_coverage(std::size_t k, std::size_t j) {
  if (j == 0 || 2 * j > k + 1) return 0.0;
  // P(B <= j - 1) = sum_{i < j} C(k, i) / 2^k, accumulated with C(k, i + 1) = C(k, i) (k - i) / (i + 1).
  double binom = 1.0;
  double below = 0.0;
  for (std::size_t i = 0; i < j; ++i) {
    below += binom;
    binom = binom * static_cast<double>(k - i) / static_cast<double>(i + 1);
  }
  return 1.0 - 2.0 * below / std::pow(2.0, static_cast<double>(k));
}

RepeatSpread repeat_spread(std::span<const double> medians, double confidence) {
  RepeatSpread r;
  r.k = medians.size();
  if (r.k == 0) return r;
  std::vector<double> sorted(medians.begin(), medians.end());
  std::sort(sorted.begin(), sorted.end());
  r.median = median(sorted);
  r.spread_pct = r.median > 0.0 ? 100.0 * (sorted.back() - sorted.front()) / r.median : 0.0;
  if (r.k >= 2 && sorted.front() > 0.0) {
    double mean = 0.0;
    for (double v : sorted) mean += std::log(v);
    mean /= static_cast<double>(r.k);
    double ss = 0.0;
    for (double v : sorted) ss += (std::log(v) - mean) * (std::log(v) - mean);
    r.sd_log = std::sqrt(ss / static_cast<double>(r.k - 1));
  }
  std::size_t j = 1;
  while (order_statistic_coverage(r.k, j + 1) >= confidence) ++j;
  r.low = sorted[j - 1];
  r.high = sorted[r.k - j];
  r.confidence = order_statistic_coverage(r.k, j);
  return r;
}

}  // namespace collbench::stats
