// Gate statistics (stats/compare.hpp) against values worked by hand in the comments (and
// cross-checked with scipy.stats 1.10: mannwhitneyu, norm.ppf).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <numeric>
#include <vector>

#include "collbench/stats/compare.hpp"

using namespace collbench::stats;

// ---- normal distribution -------------------------------------------------------------------

TEST(GateNormal, QuantileKnownValues) {
  EXPECT_NEAR(normal_quantile(0.975), 1.959963984540054, 1e-14);
  EXPECT_NEAR(normal_quantile(0.3), -0.5244005127080409, 1e-14);
  EXPECT_NEAR(normal_quantile(1e-10), -6.361340902404056, 1e-12);  // the far-tail branch
  EXPECT_DOUBLE_EQ(normal_quantile(0.5), 0.0);
  EXPECT_TRUE(std::isinf(normal_quantile(0.0)) && normal_quantile(0.0) < 0);
  EXPECT_TRUE(std::isnan(normal_quantile(1.5)));
}

TEST(GateNormal, QuantileInvertsCdfInEveryRegion) {
  for (double p : {1e-300, 1e-20, 1e-8, 0.001, 0.02, 0.07, 0.075, 0.2, 0.5, 0.6, 0.9, 0.925, 0.99, 0.999999}) {
    const double z = normal_quantile(p);
    EXPECT_NEAR(normal_cdf(z) / p, 1.0, 1e-12) << p;
    EXPECT_NEAR(normal_sf(-z) / p, 1.0, 1e-12) << p;
  }
}

// ---- Mann-Whitney U ------------------------------------------------------------------------

TEST(GateMannWhitney, NullCountsAreGaussianBinomialCoefficients) {
  // m = n = 2: arrangements of xxyy by U = #(x above y): yyxx 4, yxyx 3, yxxy 2, xyyx 2,
  // xyxy 1, xxyy 0 -> counts 1, 1, 2, 1, 1 (sum C(4,2) = 6).
  EXPECT_EQ(mann_whitney_null_counts(2, 2), (std::vector<double>{1, 1, 2, 1, 1}));
  // m = n = 3: partitions of u into at most 3 parts of size at most 3.
  EXPECT_EQ(mann_whitney_null_counts(3, 3), (std::vector<double>{1, 1, 2, 3, 3, 3, 3, 2, 1, 1}));
  // Sums are C(m+n, m); the distribution is symmetric.
  const auto c = mann_whitney_null_counts(10, 7);
  EXPECT_DOUBLE_EQ(std::accumulate(c.begin(), c.end(), 0.0), 19448.0);  // C(17, 7)
  for (std::size_t u = 0; u < c.size(); ++u) EXPECT_EQ(c[u], c[c.size() - 1 - u]);
}

TEST(GateMannWhitney, ExactSmallSampleByHand) {
  // x = {3, 5, 7}, y = {1, 2, 4}: x > y pairs: 3 beats 1, 2 (2); 5 beats all (3); 7 beats all
  // (3): U = 8 of mn = 9. P(U >= 8) = P(U <= 1) = (1 + 1) / C(6, 3) = 2/20 = 0.1.
  const std::vector<double> x{3, 5, 7}, y{1, 2, 4};
  const auto r = mann_whitney_greater(x, y);
  EXPECT_DOUBLE_EQ(r.u, 8.0);
  EXPECT_TRUE(r.exact);
  EXPECT_FALSE(r.ties);
  EXPECT_NEAR(r.p_value, 0.1, 1e-15);
  // The other direction: U_y = 9 - 8 = 1, P(U >= 1) = 1 - P(U = 0) = 19/20.
  const auto other = mann_whitney_greater(y, x);
  EXPECT_DOUBLE_EQ(other.u, 1.0);
  EXPECT_NEAR(other.p_value, 0.95, 1e-15);
}

TEST(GateMannWhitney, CompleteSeparationOfTenRepetitions) {
  // Every current block above every baseline block: U = 100, p = 1 / C(20, 10) = 1/184756.
  std::vector<double> x, y;
  for (int i = 0; i < 10; ++i) {
    x.push_back(20.0 + i);
    y.push_back(1.0 + i);
  }
  const auto r = mann_whitney_greater(x, y);
  EXPECT_DOUBLE_EQ(r.u, 100.0);
  EXPECT_NEAR(r.p_value * 184756.0, 1.0, 1e-12);
  // Benjamini-Hochberg over 500 cases can reach alpha = 0.05 (needs p <= 1e-4), which five
  // repetitions a side cannot: their smallest p is 1 / C(10, 5) = 1/252.
  const std::vector<double> x5(x.begin(), x.begin() + 5), y5(y.begin(), y.begin() + 5);
  EXPECT_NEAR(mann_whitney_greater(x5, y5).p_value, 1.0 / 252.0, 1e-15);
}

TEST(GateMannWhitney, NormalApproximationWithTiesByHand) {
  // x = {2, 3, 4, 5}, y = {1, 2, 2, 3}. U_x counts x > y plus half of the ties:
  // 2: beats 1, ties 2, 2 -> 2; 3: beats 1, 2, 2, ties 3 -> 3.5; 4 -> 4; 5 -> 4. U = 13.5.
  // Tie groups: {2, 2, 2} (t = 3), {3, 3} (t = 2): sum(t^3 - t) = 24 + 6 = 30, N = 8.
  // Var = 16/12 (9 - 30/56) = 11.2857142857; z = (13.5 - 8 - 0.5) / 3.35942 = 1.48835;
  // p = 1 - Phi(1.48835) = 0.0683291 (scipy: mannwhitneyu(..., 'greater', 'asymptotic')).
  const std::vector<double> x{2, 3, 4, 5}, y{1, 2, 2, 3};
  const auto r = mann_whitney_greater(x, y);
  EXPECT_DOUBLE_EQ(r.u, 13.5);
  EXPECT_FALSE(r.exact);
  EXPECT_TRUE(r.ties);
  EXPECT_NEAR(r.z, 5.0 / std::sqrt(16.0 / 12.0 * (9.0 - 30.0 / 56.0)), 1e-12);
  EXPECT_NEAR(r.p_value, 0.06832912386907375, 1e-12);
}

TEST(GateMannWhitney, IdenticalSamplesGiveNoEvidence) {
  const std::vector<double> x{1.0, 1.1, 1.2, 1.3, 1.4};
  const auto r = mann_whitney_greater(x, x);
  EXPECT_DOUBLE_EQ(r.u, 12.5);  // mn / 2
  EXPECT_GT(r.p_value, 0.5);
  const std::vector<double> flat{2, 2, 2};
  EXPECT_DOUBLE_EQ(mann_whitney_greater(flat, flat).p_value, 1.0);  // zero variance
  EXPECT_DOUBLE_EQ(mann_whitney_greater({}, x).p_value, 1.0);
}

TEST(GateMannWhitney, LargeSamplesUseTheNormalApproximation) {
  std::vector<double> x, y;
  for (int i = 0; i < 60; ++i) {
    x.push_back(i + 0.5);
    y.push_back(i);
  }
  const auto r = mann_whitney_greater(x, y);
  EXPECT_FALSE(r.exact);
  // U = sum over x_i = i + 0.5 of (i + 1) = 60 * 61 / 2 = 1830; mu = 1800;
  // sigma = sqrt(3600 * 121 / 12) = 190.526; z = 29.5 / 190.526 = 0.154834.
  EXPECT_DOUBLE_EQ(r.u, 1830.0);
  EXPECT_NEAR(r.z, 29.5 / std::sqrt(3600.0 * 121.0 / 12.0), 1e-12);
  EXPECT_NEAR(r.p_value, normal_sf(r.z), 1e-15);
}

// ---- Hodges-Lehmann ------------------------------------------------------------------------

TEST(GateHodgesLehmann, ShiftAndMosesIntervalByHand) {
  // x = {3, 5, 7}, y = {1, 2, 4}: differences x_i - y_j:
  //   3-1 = 2, 3-2 = 1, 3-4 = -1, 5-1 = 4, 5-2 = 3, 5-4 = 1, 7-1 = 6, 7-2 = 5, 7-4 = 3
  //   sorted: -1, 1, 1, 2, 3, 3, 4, 5, 6 -> HL shift = the 5th = 3.
  // 80% interval: tail 0.1; P(U <= 0) = 1/20, P(U <= 1) = 2/20 <= 0.1, P(U <= 2) = 4/20 > 0.1
  // -> k = 2: [D_(2), D_(8)] = [1, 5], coverage 1 - 2 x 2/20 = 0.8.
  const std::vector<double> x{3, 5, 7}, y{1, 2, 4};
  const auto e = hodges_lehmann(x, y, 0.8);
  ASSERT_TRUE(e.has_value());
  EXPECT_DOUBLE_EQ(e->shift, 3.0);
  EXPECT_EQ(e->k, 2u);
  EXPECT_TRUE(e->exact);
  EXPECT_DOUBLE_EQ(e->ci_low, 1.0);
  EXPECT_DOUBLE_EQ(e->ci_high, 5.0);
  EXPECT_NEAR(e->confidence, 0.8, 1e-12);
  // 95% is out of reach with 3 + 3 values: even k = 1 (the whole range [-1, 6]) covers only
  // 1 - 2 x 1/20 = 0.9, and says so.
  const auto wide = hodges_lehmann(x, y, 0.95);
  EXPECT_EQ(wide->k, 1u);
  EXPECT_DOUBLE_EQ(wide->ci_low, -1.0);
  EXPECT_DOUBLE_EQ(wide->ci_high, 6.0);
  EXPECT_NEAR(wide->confidence, 0.9, 1e-12);
  EXPECT_FALSE(hodges_lehmann({}, y, 0.95).has_value());
}

TEST(GateHodgesLehmann, EvenNumberOfDifferencesAveragesTheMiddlePair) {
  // x = {10, 20}, y = {1, 2}: differences 9, 8, 19, 18 -> sorted 8, 9, 18, 19 -> (9 + 18) / 2.
  const auto e = hodges_lehmann(std::vector<double>{10, 20}, std::vector<double>{1, 2}, 0.5);
  EXPECT_DOUBLE_EQ(e->shift, 13.5);
}

TEST(GateHodgesLehmann, MosesKForTenRepetitions) {
  // m = n = 10, 95%: the exact lower tail gives P(U <= 23) = 0.02163 <= 0.025 <
  // P(U <= 24) = 0.02621, so k = 24 (the tabled critical value U = 23, plus one). The normal
  // approximation: round(50 - 1.95996 sqrt(100 x 21 / 12)) = round(24.07) = 24.
  EXPECT_EQ(moses_k(10, 10, 0.95, true), 24u);
  EXPECT_EQ(moses_k(10, 10, 0.95, false), 24u);
  EXPECT_NEAR(mann_whitney_exact_cdf(23, 10, 10), 0.02162852627248912, 1e-14);
  EXPECT_NEAR(mann_whitney_exact_cdf(24, 10, 10), 0.026212951135551756, 1e-14);
}

TEST(GateHodgesLehmann, RecoversAPureShift) {
  const std::vector<double> y{1.0, 1.3, 0.9, 1.1, 1.05, 0.95, 1.2, 1.15, 0.85, 1.02};
  std::vector<double> x(y.size());
  std::transform(y.begin(), y.end(), x.begin(), [](double v) { return v + 0.7; });
  const auto e = hodges_lehmann(x, y, 0.95);
  EXPECT_NEAR(e->shift, 0.7, 1e-12);
  EXPECT_LE(e->ci_low, 0.7);
  EXPECT_GE(e->ci_high, 0.7);
  EXPECT_GE(e->confidence, 0.95);
}

// ---- Benjamini-Hochberg --------------------------------------------------------------------

TEST(GateBenjaminiHochberg, SmallExampleByHand) {
  // Sorted: 0.005, 0.01, 0.03, 0.04 -> m p / i = 0.02, 0.02, 0.04, 0.04; running minimum
  // from the top leaves them; back in input order: 0.02, 0.04, 0.04, 0.02.
  const std::vector<double> p{0.01, 0.04, 0.03, 0.005};
  const auto q = benjamini_hochberg(p);
  ASSERT_EQ(q.size(), 4u);
  EXPECT_NEAR(q[0], 0.02, 1e-15);
  EXPECT_NEAR(q[1], 0.04, 1e-15);
  EXPECT_NEAR(q[2], 0.04, 1e-15);
  EXPECT_NEAR(q[3], 0.02, 1e-15);
}

TEST(GateBenjaminiHochberg, TheOriginalPapersExample) {
  // Benjamini & Hochberg (1995), section 4: 15 p-values; at q* = 0.05 the first four are
  // rejected. m p_(i) / i: 0.0015, 0.003, 0.0095, 0.035625, 0.0603, 0.0695, 0.063857, 0.0645,
  // 0.0765, 0.486, ...; the running minimum from the top makes q_(6) = q_(7) = 0.063857.
  const std::vector<double> p{0.0001, 0.0004, 0.0019, 0.0095, 0.0201, 0.0278, 0.0298, 0.0344,
                              0.0459, 0.3240, 0.4262, 0.5719, 0.6528, 0.7590, 1.000};
  const auto q = benjamini_hochberg(p);
  EXPECT_NEAR(q[3], 0.035625, 1e-12);
  EXPECT_NEAR(q[4], 0.0603, 1e-12);
  EXPECT_NEAR(q[5], 0.0298 * 15 / 7, 1e-12);
  EXPECT_NEAR(q[6], 0.0298 * 15 / 7, 1e-12);
  EXPECT_DOUBLE_EQ(q[14], 1.0);
  EXPECT_EQ(std::count_if(q.begin(), q.end(), [](double v) { return v <= 0.05; }), 4);
  EXPECT_TRUE(benjamini_hochberg({}).empty());
}

// ---- bootstrap -----------------------------------------------------------------------------

TEST(GateBootstrap, RatioOfMediansIsReproducibleAndCoversTheTruth) {
  std::vector<double> a, b;
  for (int i = 0; i < 40; ++i) {
    const double wobble = 1.0 + 0.05 * std::sin(1.7 * i);
    a.push_back(2.0 * wobble);
    b.push_back(1.0 * (1.0 + 0.05 * std::cos(2.3 * i)));
  }
  const auto ci = bootstrap_ratio_ci(a, b, median, 0.95, 2000, 7);
  ASSERT_TRUE(ci.has_value());
  EXPECT_LT(ci->low, 2.0 * 1.01);
  EXPECT_GT(ci->high, 2.0 * 0.99);
  EXPECT_GT(ci->low, 1.8);
  EXPECT_LT(ci->high, 2.2);
  const auto again = bootstrap_ratio_ci(a, b, median, 0.95, 2000, 7);
  EXPECT_DOUBLE_EQ(again->low, ci->low);
  EXPECT_DOUBLE_EQ(again->high, ci->high);
  const auto other_seed = bootstrap_ratio_ci(a, b, median, 0.95, 2000, 8);
  EXPECT_NE(other_seed->low, ci->low);
}

TEST(GateBootstrap, ConstantSamplesAndOtherStatistics) {
  const std::vector<double> a{3, 3, 3}, b{1.5, 1.5};
  const auto ci = bootstrap_ratio_ci(a, b);
  EXPECT_DOUBLE_EQ(ci->low, 2.0);
  EXPECT_DOUBLE_EQ(ci->high, 2.0);
  const auto mean = [](std::span<const double> v) {
    return std::accumulate(v.begin(), v.end(), 0.0) / static_cast<double>(v.size());
  };
  const auto by_mean = bootstrap_ratio_ci(a, b, mean, 0.9, 100, 1);
  EXPECT_DOUBLE_EQ(by_mean->low, 2.0);
  EXPECT_FALSE(bootstrap_ratio_ci({}, b).has_value());
  EXPECT_FALSE(bootstrap_ratio_ci(a, b, median, 0.95, 0).has_value());
}

// ---- repetition blocking -------------------------------------------------------------------

TEST(GateBlocking, ConsecutiveBlocksAndTheirMedians) {
  std::vector<double> s(20);
  std::iota(s.begin(), s.end(), 1.0);     // 1..20
  const auto b = block_medians(s, 4, 5);  // {1..5}, {6..10}, {11..15}, {16..20}
  EXPECT_EQ(b.medians, (std::vector<double>{3, 8, 13, 18}));
  EXPECT_TRUE(b.reason.empty());
  // n = 10, R = 3: boundaries floor(b n / R) = 0, 3, 6, 10 -> {1,2,3} {4,5,6} {7,8,9,10}.
  const std::vector<double> ten(s.begin(), s.begin() + 10);
  EXPECT_EQ(block_medians(ten, 3, 3).medians, (std::vector<double>{2, 5, 8.5}));
}

TEST(GateBlocking, TooFewSamplesSayWhy) {
  const std::vector<double> s(37, 1.0);
  const auto b = block_medians(s, 10, 5);
  EXPECT_TRUE(b.medians.empty());
  EXPECT_NE(b.reason.find("37 sample"), std::string::npos) << b.reason;
  EXPECT_NE(b.reason.find("need 50"), std::string::npos) << b.reason;
}

TEST(GateBlocking, RobustScaleIgnoresOneDisturbedBlock) {
  // x = {1, 2, 3}: median 2, deviations 1, 0, 1; y = {10, 10, 13}: median 10, deviations
  // 0, 0, 3. Pooled {0, 0, 0, 1, 1, 3}: median 0.5 -> 1.4826 x 0.5.
  EXPECT_NEAR(pooled_mad_scale(std::vector<double>{1, 2, 3}, std::vector<double>{10, 10, 13}), 0.7413011, 1e-6);
  // One warm-up block 4x slower barely moves it.
  const std::vector<double> steady{1.00, 1.01, 0.99, 1.00, 1.02, 0.98, 1.00, 1.01, 0.99, 1.00};
  std::vector<double> disturbed = steady;
  disturbed[0] = 4.0;
  EXPECT_LT(pooled_mad_scale(disturbed, steady), 0.02);
}
