// Statistics of a case measured in k repeats (run --repeats k, docs/measurement.md "Repeats"):
// the headline median of the repeat medians, the spread between repeats, and a distribution-free
// interval of the launch-to-launch median from the repeat medians' order statistics. Pure C++.
#pragma once

#include <cstddef>
#include <span>

namespace collbench::stats {

struct RepeatSpread {
  std::size_t k = 0;
  double median = 0.0;      // median of the repeat medians (mean of the middle two for even k)
  double spread_pct = 0.0;  // 100 (max - min) / median
  double sd_log = 0.0;      // sample standard deviation (k - 1) of ln(median_i): a between-repeat CV
  // Interval [m_(j), m_(k+1-j)] of the sorted repeat medians with the largest j whose coverage of
  // the median of the repeat distribution, 1 - 2 P(Binomial(k, 1/2) <= j - 1), is at least the
  // requested confidence; j = 1 (min to max) when no j reaches it, with the lower coverage it has.
  double low = 0.0, high = 0.0;
  double confidence = 0.0;  // the coverage achieved
};

// The spread of k >= 1 repeat medians (k = 0: all zero).
RepeatSpread repeat_spread(std::span<const double> medians, double confidence = 0.95);

// 1 - 2 P(Binomial(k, 1/2) <= j - 1): coverage of [m_(j), m_(k+1-j)] for the median.
double order_statistic_coverage(std::size_t k, std::size_t j);

}  // namespace collbench::stats
