// Two-sample comparison statistics for performance gates and reports: the Mann-Whitney U test
// (exact null distribution for small tie-free samples, normal approximation with tie and
// continuity correction otherwise), the Hodges-Lehmann shift estimate with Moses'
// distribution-free confidence interval, Benjamini-Hochberg adjusted p-values, a seeded
// percentile bootstrap for ratios of a statistic, and repetition blocking (per-block medians of
// a long run of per-iteration samples). The method is documented in docs/gate.md. Pure C++.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace collbench::stats {

// ---- normal distribution -------------------------------------------------------------------

// Standard normal CDF, Phi(z) = erfc(-z / sqrt 2) / 2 (erfc keeps the far tails accurate).
double normal_cdf(double z);
// Upper tail 1 - Phi(z), computed without cancellation.
double normal_sf(double z);
// Phi^-1(p) for p in (0, 1): Wichura's AS 241 (PPND16), relative accuracy about 1e-16.
double normal_quantile(double p);

// ---- Mann-Whitney U ------------------------------------------------------------------------

// Number of arrangements of m x-values and n y-values (no ties) with U = u, for u = 0..m*n:
// the coefficients of the Gaussian binomial [m+n choose m]_q. Their sum is C(m+n, m).
std::vector<double> mann_whitney_null_counts(std::size_t m, std::size_t n);

// Exact P(U <= u) under H0 for tie-free samples of sizes m and n (u may be fractional only
// with ties, which the exact distribution does not cover; it is floored here).
double mann_whitney_exact_cdf(double u, std::size_t m, std::size_t n);

// Samples up to this size on both sides, without ties, use the exact null distribution.
inline constexpr std::size_t kMannWhitneyExactMaxN = 50;

struct MannWhitney {
  std::size_t n_x = 0, n_y = 0;
  // U_x = #{(i, j): x_i > y_j} + #{(i, j): x_i == y_j} / 2; U_x + U_y = n_x n_y.
  double u = 0.0;
  double p_value = 1.0;  // one-sided, H1: x is stochastically greater than y
  bool exact = false;    // exact null distribution (false: normal approximation)
  bool ties = false;     // any value shared between or within the samples
  double z = 0.0;        // the normal deviate (approximation only; 0 when exact)
};

// One-sided Mann-Whitney U test of H1 "x tends to be larger than y". Empty samples give
// p = 1. Exact when both sizes are <= kMannWhitneyExactMaxN and there are no ties; otherwise
// z = (U - mn/2 - 1/2) / sigma with sigma^2 = mn/12 ((N+1) - sum(t^3 - t) / (N(N-1))).
MannWhitney mann_whitney_greater(std::span<const double> x, std::span<const double> y);

// ---- Hodges-Lehmann ------------------------------------------------------------------------

struct ShiftEstimate {
  double shift = 0.0;   // median of the m*n differences x_i - y_j
  double ci_low = 0.0;  // Moses' interval: order statistics D_(k) and D_(mn+1-k)
  double ci_high = 0.0;
  double confidence = 0.0;  // coverage actually achieved by the integer k (>= the requested
                            // one when reachable; lower when the samples are too small)
  std::size_t k = 0;        // 1-based rank of the lower bound among the sorted differences
  bool exact = false;       // k from the exact null distribution of U
};

// Hodges-Lehmann estimate of the shift of x relative to y (x - y) with a two-sided
// distribution-free confidence interval at `confidence` (Moses 1953; Hollander & Wolfe,
// "Nonparametric Statistical Methods", section 4.3). nullopt when either sample is empty.
std::optional<ShiftEstimate> hodges_lehmann(std::span<const double> x, std::span<const double> y, double confidence);

// The k of Moses' interval: the largest k >= 1 with P(U <= k - 1) <= (1 - confidence) / 2
// (exact), or round(mn/2 - z sqrt(mn(m+n+1)/12)) with z = Phi^-1((1 + confidence) / 2)
// (normal approximation), clamped to [1, ceil(mn/2)].
std::size_t moses_k(std::size_t m, std::size_t n, double confidence, bool exact);

// ---- Student's t and Welch's test ------------------------------------------------------------

// P(T > t) for Student's t with an integer number of degrees of freedom `df` >= 1, from the
// closed forms of Abramowitz & Stegun 26.7.3 (odd df) and 26.7.4 (even df) in theta =
// atan(t / sqrt(df)): no series to truncate, exact to rounding.
double student_t_sf(double t, int df);
// The t with P(T > t) = tail (0 < tail < 1), by bisection on student_t_sf.
double student_t_quantile_upper(double tail, int df);

struct Welch {
  std::size_t n_x = 0, n_y = 0;
  double shift = 0.0;      // mean(x) - mean(y)
  double se = 0.0;         // sqrt(s_x^2 / m + s_y^2 / n)
  double t = 0.0;          // shift / se (0 when se is 0)
  double df_welch = 0.0;   // Welch-Satterthwaite degrees of freedom
  int df = 0;              // floor(df_welch), at least 1: the t distribution used (conservative)
  double p_greater = 1.0;  // one-sided, H1: mean(x) > mean(y)
  double p_less = 1.0;     // one-sided, H1: mean(x) < mean(y)
  double ci_low = 0.0;     // shift -/+ t_{(1+c)/2, df} se
  double ci_high = 0.0;
  double pooled_sd = 0.0;  // sqrt(((m-1) s_x^2 + (n-1) s_y^2) / (m + n - 2))
};

// Welch's two-sample t-test (unequal variances) of x against y with a two-sided interval of the
// shift at `confidence`. The degrees of freedom are rounded down to an integer (a smaller df gives
// larger p-values and a wider interval, so the rounding never overstates significance). nullopt
// when either sample has fewer than 2 values. Zero spread on both sides: p = 0 in the direction of
// a non-zero shift, 1 otherwise, and the interval is the shift itself.
std::optional<Welch> welch_test(std::span<const double> x, std::span<const double> y, double confidence);

// ---- multiple testing ----------------------------------------------------------------------

// Benjamini-Hochberg adjusted p-values (q-values) in the input order:
// q_(i) = min_{j >= i} min(1, m p_(j) / j) over the ascending order p_(1) <= ... <= p_(m).
// Rejecting every hypothesis with q <= alpha controls the false discovery rate at alpha.
std::vector<double> benjamini_hochberg(std::span<const double> p_values);

// ---- bootstrap -----------------------------------------------------------------------------

struct Interval {
  double low = 0.0;
  double high = 0.0;
};

using Statistic = std::function<double(std::span<const double>)>;

// Median of an unsorted sample (mean of the two middle values for even sizes); 0 when empty.
double median(std::span<const double> values);

// Percentile-bootstrap confidence interval of statistic(a) / statistic(b): each resample draws
// |a| values from a and |b| from b with replacement; the interval is the (1 - c)/2 and
// (1 + c)/2 percentiles of the resampled ratios. Reproducible for a given seed on every
// platform (mt19937_64 with a fixed draw). nullopt when either sample is empty or resamples < 1.
std::optional<Interval> bootstrap_ratio_ci(std::span<const double> a, std::span<const double> b,
                                           const Statistic& statistic = median, double confidence = 0.95,
                                           int resamples = 2000, std::uint64_t seed = 1);

// ---- repetition blocking -------------------------------------------------------------------

struct Blocking {
  std::vector<double> medians;  // one per block, in time order; empty when not enough samples
  std::string reason;           // why it is empty
};

// Splits `samples` (in time order) into `repetitions` consecutive blocks of near-equal size
// (block b holds samples [floor(b n / R), floor((b+1) n / R))) and returns each block's
// median. Fewer than repetitions x min_block_samples samples give no medians and a reason.
Blocking block_medians(std::span<const double> samples, int repetitions, int min_block_samples);

// Robust pooled scale of two samples: 1.4826 x the median of the absolute deviations of every
// value from its own sample's median. 1.4826 = 1 / Phi^-1(3/4) makes it estimate the standard
// deviation of normal data; unlike the pooled standard deviation, one disturbed block (a
// warm-up transient, a daemon waking up) does not inflate it. 0 when both samples are empty.
double pooled_mad_scale(std::span<const double> x, std::span<const double> y);

}  // namespace collbench::stats
