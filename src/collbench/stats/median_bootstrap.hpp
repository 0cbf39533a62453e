// Bootstrap confidence intervals of a median and of a ratio of medians, drawn exactly from the order
// statistics (O(1) per resample), reproducible for a seed with every standard library. The
// weak-scaling report's intervals (docs/report.md). Pure C++.
#pragma once

#include <cstdint>
#include <optional>
#include <random>
#include <span>

#include "collbench/stats/compare.hpp"

namespace collbench::stats {

// The median of one bootstrap resample of `sorted` (ascending, non-empty), drawn exactly without
// materialising the resample: resampling n values with replacement and taking the median is the
// same as taking sorted[floor(n U_(k))], where U_(k) is the k-th order statistic of n uniforms
// (Beta(k, n-k+1)); even n averages the k-th and (k+1)-th (U_(k+1) = U_(k) + (1 - U_(k)) x
// Beta(1, n-k)). O(1) per resample instead of O(n): a report over 1,024-rank files with 1,000
// samples per case needs thousands of intervals (bootstrap_ratio_ci materialises each
// resample and is kept for general statistics). Draws use only mt19937_64's raw output, so a
// seed gives the same interval with every standard library.
double resampled_median(std::span<const double> sorted, std::mt19937_64& rng);

// Percentile-bootstrap confidence interval of the median of `samples`; nullopt with fewer than
// two samples. `seed` makes it reproducible.
std::optional<Interval> bootstrap_median_ci(std::span<const double> samples, double confidence, int resamples,
                                            std::uint64_t seed);

// Percentile-bootstrap confidence interval of median(numerator) / median(denominator), each
// sample set resampled independently; nullopt unless both hold two or more samples.
std::optional<Interval> bootstrap_median_ratio_ci(std::span<const double> numerator,
                                                  std::span<const double> denominator, double confidence, int resamples,
                                                  std::uint64_t seed);

// InputError unless confidence is in (0, 1) and there are at least 10 resamples.
void check_bootstrap_args(double confidence, int resamples);

// splitmix64 over (seed, a, b, c): independent, reproducible seeds for each interval of a report.
std::uint64_t mix_seed(std::uint64_t seed, std::uint64_t a, std::uint64_t b, std::uint64_t c);

}  // namespace collbench::stats
