// Robust summary statistics over per-iteration samples: percentiles (linear interpolation
// between order statistics, numpy's default), mean, stdev, CV and a distribution-free 95%
// confidence interval of the median from order statistics. Pure C++.
#pragma once

#include <cstddef>
#include <span>
#include <vector>

namespace collbench::stats {

struct Summary {
  std::size_t samples = 0;
  double p50 = 0, p5 = 0, p95 = 0, p99 = 0;
  double min = 0, max = 0, mean = 0, stdev = 0, cv = 0;
  double ci95_low = 0, ci95_high = 0;  // of the median

  // Relative half-width of the median's CI: (high - low) / 2 / p50 (infinite when undefined).
  [[nodiscard]] double relative_ci_half_width() const;
};

// q in [0, 1]; `sorted` ascending and non-empty.
double percentile_sorted(std::span<const double> sorted, double q);

// Indices (0-based, into the sorted sample) of the order statistics bounding a 95% CI of the
// median: j = floor(n/2 - 1.96 sqrt(n)/2), k = ceil(n/2 + 1.96 sqrt(n)/2) (normal approximation
// to the binomial), clamped to [0, n-1].
struct CiIndices {
  std::size_t low;
  std::size_t high;
};
CiIndices median_ci_indices(std::size_t n);

Summary summarize(std::span<const double> samples);

}  // namespace collbench::stats
