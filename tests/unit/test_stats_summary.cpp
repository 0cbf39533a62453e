// Summary statistics against hand-computed values.
#include <gtest/gtest.h>

#include <cmath>

#include "collbench/stats/summary.hpp"

using namespace collbench::stats;

TEST(Percentile, LinearInterpolationLikeNumpy) {
  const std::vector<double> v{1, 2, 3, 4, 5, 6, 7, 8, 9, 10};
  // numpy.percentile(v, 50) = 5.5; 5 -> 1.45; 95 -> 9.55; 99 -> 9.91
  EXPECT_DOUBLE_EQ(percentile_sorted(v, 0.50), 5.5);
  EXPECT_DOUBLE_EQ(percentile_sorted(v, 0.05), 1.45);
  EXPECT_DOUBLE_EQ(percentile_sorted(v, 0.95), 9.55);
  EXPECT_NEAR(percentile_sorted(v, 0.99), 9.91, 1e-12);
  EXPECT_DOUBLE_EQ(percentile_sorted(v, 0.0), 1);
  EXPECT_DOUBLE_EQ(percentile_sorted(v, 1.0), 10);
}

TEST(Summary, HandComputed) {
  const std::vector<double> v{4, 1, 3, 2, 10};  // unsorted on purpose
  const auto s = summarize(v);
  EXPECT_EQ(s.samples, 5u);
  EXPECT_DOUBLE_EQ(s.p50, 3);
  EXPECT_DOUBLE_EQ(s.min, 1);
  EXPECT_DOUBLE_EQ(s.max, 10);
  EXPECT_DOUBLE_EQ(s.mean, 4);
  // sample stdev: sum of squares (0+9+1+4+36)=50 -> sqrt(50/4)
  EXPECT_DOUBLE_EQ(s.stdev, std::sqrt(12.5));
  EXPECT_DOUBLE_EQ(s.cv, std::sqrt(12.5) / 4);
}

TEST(MedianCi, OrderStatistics) {
  // n = 100: 50 -+ 1.96*10/2 = 40.2 / 59.8 -> indices 40 and 60
  const auto ci = median_ci_indices(100);
  EXPECT_EQ(ci.low, 40u);
  EXPECT_EQ(ci.high, 60u);
  // tiny samples clamp to the ends
  const auto c3 = median_ci_indices(3);
  EXPECT_EQ(c3.low, 0u);
  EXPECT_EQ(c3.high, 2u);
}

TEST(MedianCi, RelativeHalfWidth) {
  std::vector<double> v(100);
  for (std::size_t i = 0; i < v.size(); ++i) v[i] = 100.0 + static_cast<double>(i) * 0.01;
  const auto s = summarize(v);
  // sorted[40] = 100.40, sorted[60] = 100.60, median 100.495
  EXPECT_DOUBLE_EQ(s.ci95_low, 100.40);
  EXPECT_DOUBLE_EQ(s.ci95_high, 100.60);
  EXPECT_NEAR(s.relative_ci_half_width(), 0.1 / 100.495, 1e-12);
  EXPECT_TRUE(std::isinf(summarize(std::vector<double>{5}).relative_ci_half_width()));
}

TEST(Summary, Empty) {
  const auto s = summarize(std::vector<double>{});
  EXPECT_EQ(s.samples, 0u);
  EXPECT_EQ(s.p50, 0);
}
