// Two-sample comparison statistics (see compare.hpp and docs/gate.md for the method).
#include "collbench/stats/compare.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <numbers>
#include <numeric>
#include <random>

#include "collbench/stats/summary.hpp"

namespace collbench::stats {

// ---- normal distribution -------------------------------------------------------------------

double normal_cdf(double z) {
  return 0.5 * std::erfc(-z / std::sqrt(2.0));
}

double normal_sf(double z) {
  return 0.5 * std::erfc(z / std::sqrt(2.0));
}

namespace {

// c[0] + c[1] r + ... + c[7] r^7 by Horner's rule.
double polynomial(const std::array<double, 8>& c, double r) {
  double v = c[7];
  for (std::size_t i = 7; i-- > 0;) v = v * r + c[i];
  return v;
}

// Wichura (1988), Algorithm AS 241 (PPND16): numerator and denominator coefficients, lowest
// power first, of the rational approximations in the central region |p - 0.5| <= 0.425 (in
// r = 0.180625 - q^2), the intermediate tail r = sqrt(-log(min(p, 1 - p))) <= 5 (in r - 1.6)
// and the far tail (in r - 5).
constexpr std::array<double, 8> kCentralNum{
    3.3871328727963666080e+0, 1.3314166789178437745e+2, 1.9715909503065514427e+3, 1.3731693765509461125e+4,
    4.5921953931549871457e+4, 6.7265770927008700853e+4, 3.3430575583588128105e+4, 2.5090809287301226727e+3};
constexpr std::array<double, 8> kCentralDen{1.0,
                                            4.2313330701600911252e+1,
                                            6.8718700749205790830e+2,
                                            5.3941960214247511077e+3,
                                            2.1213794301586595867e+4,
                                            3.9307895800092710610e+4,
                                            2.8729085735721942674e+4,
                                            5.2264952788528545610e+3};
constexpr std::array<double, 8> kTailNum{
    1.42343711074968357734e+0, 4.63033784615654529590e+0, 5.76949722146069140550e+0, 3.64784832476320460504e+0,
    1.27045825245236838258e+0, 2.41780725177450611770e-1, 2.27238449892691845833e-2, 7.74545014278341407640e-4};
constexpr std::array<double, 8> kTailDen{1.0,
                                         2.05319162663775882187e+0,
                                         1.67638483018380384940e+0,
                                         6.89767334985100004550e-1,
                                         1.48103976427480074590e-1,
                                         1.51986665636164571966e-2,
                                         5.47593808499534494600e-4,
                                         1.05075007164441684324e-9};
constexpr std::array<double, 8> kFarNum{6.65790464350110377720e+0, 5.46378491116411436990e+0, 1.78482653991729133580e+0,
                                        2.96560571828504891230e-1, 2.65321895265761230930e-2, 1.24266094738807843860e-3,
                                        2.71155556874348757815e-5, 2.01033439929228813265e-7};
constexpr std::array<double, 8> kFarDen{1.0,
                                        5.99832206555887937690e-1,
                                        1.36929880922735805310e-1,
                                        1.48753612908506148525e-2,
                                        7.86869131145613259100e-4,
                                        1.84631831751005468180e-5,
                                        1.42151175831644588870e-7,
                                        2.04426310338993978564e-15};

}  // namespace

double normal_quantile(double p) {
  if (!(p > 0.0 && p < 1.0)) {
    if (p == 0.0) return -std::numeric_limits<double>::infinity();
    if (p == 1.0) return std::numeric_limits<double>::infinity();
    return std::numeric_limits<double>::quiet_NaN();
  }
  const double q = p - 0.5;
  if (std::fabs(q) <= 0.425) {
    const double r = 0.180625 - q * q;
    return q * polynomial(kCentralNum, r) / polynomial(kCentralDen, r);
  }
  const double r = std::sqrt(-std::log(q < 0.0 ? p : 1.0 - p));
  const double value = r <= 5.0 ? polynomial(kTailNum, r - 1.6) / polynomial(kTailDen, r - 1.6)
                                : polynomial(kFarNum, r - 5.0) / polynomial(kFarDen, r - 5.0);
  return q < 0.0 ? -value : value;
}

// ---- Mann-Whitney U ------------------------------------------------------------------------

// Count arrangements by the largest of the m+n (distinct) values: if it is an x it exceeds all
// n y's and adds n to U, leaving m-1 and n values; if it is a y it adds nothing, leaving m and
// n-1. So c(u; m, n) = c(u - n; m - 1, n) + c(u; m, n - 1), with c(0; 0, n) = c(0; m, 0) = 1.
// Only additions of non-negative numbers: the small tail counts (which p-values need) carry
// no cancellation error. Rolling over n keeps one vector per m'.
std::vector<double> mann_whitney_null_counts(std::size_t m, std::size_t n) {
  const std::size_t max_u = m * n;
  // f[a][u] = c(u; a, b) for the current b.
  std::vector<std::vector<double>> f(m + 1, std::vector<double>(max_u + 1, 0.0));
  for (std::size_t a = 0; a <= m; ++a) f[a][0] = 1.0;  // b = 0: every x exceeds nothing
  for (std::size_t b = 1; b <= n; ++b) {
    // a ascending: f[a - 1] already holds c(.; a - 1, b); f[a] still holds c(.; a, b - 1).
    for (std::size_t a = 1; a <= m; ++a) {
      for (std::size_t u = max_u + 1; u-- > b;) f[a][u] += f[a - 1][u - b];
    }
  }
  return f[m];
}

double mann_whitney_exact_cdf(double u, std::size_t m, std::size_t n) {
  if (u < 0.0) return 0.0;
  const auto counts = mann_whitney_null_counts(m, n);
  const double total = std::accumulate(counts.begin(), counts.end(), 0.0);  // C(m+n, m)
  const auto last = static_cast<std::size_t>(std::min(std::floor(u), static_cast<double>(m * n)));
  double below = 0.0;
  for (std::size_t k = 0; k <= last; ++k) below += counts[k];
  return std::min(1.0, below / total);
}

namespace {

// U_x and the tie structure of the pooled sample: sum over tie groups of t^3 - t.
struct RankSums {
  double u = 0.0;
  double tie_term = 0.0;
  bool ties = false;
};

RankSums rank_sums(std::span<const double> x, std::span<const double> y) {
  // Pool, sort, assign mid-ranks; U_x = R_x - m(m+1)/2, which counts x > y pairs plus half
  // of the x == y pairs.
  std::vector<std::pair<double, bool>> pooled;  // (value, is_x)
  pooled.reserve(x.size() + y.size());
  for (double v : x) pooled.emplace_back(v, true);
  for (double v : y) pooled.emplace_back(v, false);
  std::sort(pooled.begin(), pooled.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  RankSums out;
  double rank_sum_x = 0.0;
  std::size_t i = 0;
  while (i < pooled.size()) {
    std::size_t j = i + 1;
    while (j < pooled.size() && pooled[j].first == pooled[i].first) ++j;
    const auto t = static_cast<double>(j - i);
    const double mid_rank = (static_cast<double>(i + 1) + static_cast<double>(j)) / 2.0;
    for (std::size_t k = i; k < j; ++k) {
      if (pooled[k].second) rank_sum_x += mid_rank;
    }
    if (t > 1.0) {
      out.ties = true;
      out.tie_term += t * t * t - t;
    }
    i = j;
  }
  const auto m = static_cast<double>(x.size());
  out.u = rank_sum_x - m * (m + 1.0) / 2.0;
  return out;
}

}  // namespace

MannWhitney mann_whitney_greater(std::span<const double> x, std::span<const double> y) {
  MannWhitney r;
  r.n_x = x.size();
  r.n_y = y.size();
  if (x.empty() || y.empty()) return r;
  const RankSums rs = rank_sums(x, y);
  r.u = rs.u;
  r.ties = rs.ties;
  const auto m = static_cast<double>(x.size());
  const auto n = static_cast<double>(y.size());
  if (!rs.ties && x.size() <= kMannWhitneyExactMaxN && y.size() <= kMannWhitneyExactMaxN) {
    // P(U >= u) = P(U <= mn - u): the null distribution is symmetric about mn/2, and the
    // lower tail is summed from the small counts.
    r.exact = true;
    r.p_value = mann_whitney_exact_cdf(m * n - rs.u, x.size(), y.size());
    return r;
  }
  // Normal approximation. Under H0, E[U] = mn/2 and, with tie groups of sizes t,
  // Var[U] = mn/12 ((N+1) - sum(t^3 - t) / (N(N-1))), N = m + n. The continuity correction
  // subtracts 1/2 because U moves in steps of (at least) 1/2 and we want P(U >= u).
  const double big_n = m + n;
  const double variance = m * n / 12.0 * ((big_n + 1.0) - rs.tie_term / (big_n * (big_n - 1.0)));
  if (!(variance > 0.0)) {
    r.p_value = 1.0;  // every value equal: no evidence either way
    return r;
  }
  r.z = (rs.u - m * n / 2.0 - 0.5) / std::sqrt(variance);
  r.p_value = std::min(1.0, normal_sf(r.z));
  return r;
}

// ---- Hodges-Lehmann ------------------------------------------------------------------------

std::size_t moses_k(std::size_t m, std::size_t n, double confidence, bool exact) {
  const std::size_t mn = m * n;
  if (mn == 0) return 0;
  const double tail = (1.0 - confidence) / 2.0;
  const std::size_t k_max = (mn + 1) / 2;  // the interval cannot be narrower than the median
  std::size_t k = 1;
  if (exact) {
    // Largest k with P(U <= k - 1) <= tail, from the cumulative counts. The tolerance keeps
    // exact ties such as 2/20 <= (1 - 0.8)/2 from failing on the rounding of 1 - 0.8.
    const auto counts = mann_whitney_null_counts(m, n);
    const double total = std::accumulate(counts.begin(), counts.end(), 0.0);
    double cumulative = 0.0;
    for (std::size_t j = 1; j <= k_max; ++j) {
      cumulative += counts[j - 1];  // P(U <= j - 1) x total
      if (cumulative / total <= tail * (1.0 + 1e-9))
        k = j;
      else
        break;
    }
    return k;
  }
  const double z = normal_quantile(1.0 - tail);
  const auto md = static_cast<double>(m);
  const auto nd = static_cast<double>(n);
  const double c = std::round(md * nd / 2.0 - z * std::sqrt(md * nd * (md + nd + 1.0) / 12.0));
  return static_cast<std::size_t>(std::clamp(c, 1.0, static_cast<double>(k_max)));
}

std::optional<ShiftEstimate> hodges_lehmann(std::span<const double> x, std::span<const double> y, double confidence) {
  if (x.empty() || y.empty()) return std::nullopt;
  std::vector<double> diffs;
  diffs.reserve(x.size() * y.size());
  for (double xi : x) {
    for (double yj : y) diffs.push_back(xi - yj);
  }
  std::sort(diffs.begin(), diffs.end());
  ShiftEstimate e;
  e.shift = percentile_sorted(diffs, 0.5);
  // U(delta) = #{x_i - delta > y_j} = #{D > delta}. The level-(1 - c) test accepts delta when
  // k <= U(delta) <= mn - k, i.e. when at least k differences lie above delta and at least k
  // at or below it: D_(k) <= delta < D_(mn + 1 - k).
  const bool tie_free = [&] {
    std::vector<double> pooled(x.begin(), x.end());
    pooled.insert(pooled.end(), y.begin(), y.end());
    std::sort(pooled.begin(), pooled.end());
    return std::adjacent_find(pooled.begin(), pooled.end()) == pooled.end();
  }();
  e.exact = tie_free && x.size() <= kMannWhitneyExactMaxN && y.size() <= kMannWhitneyExactMaxN;
  e.k = moses_k(x.size(), y.size(), confidence, e.exact);
  const std::size_t mn = diffs.size();
  e.ci_low = diffs[e.k - 1];
  e.ci_high = diffs[mn - e.k];
  // Coverage of the chosen k: 1 - 2 P(U <= k - 1).
  if (e.exact) {
    e.confidence = 1.0 - 2.0 * mann_whitney_exact_cdf(static_cast<double>(e.k) - 1.0, x.size(), y.size());
  } else {
    const auto md = static_cast<double>(x.size());
    const auto nd = static_cast<double>(y.size());
    const double sigma = std::sqrt(md * nd * (md + nd + 1.0) / 12.0);
    e.confidence = 1.0 - 2.0 * normal_cdf((static_cast<double>(e.k) - 0.5 - md * nd / 2.0) / sigma);
  }
  return e;
}

// ---- Student's t and Welch's test ------------------------------------------------------------

double student_t_sf(double t, int df) {
  if (df < 1) return std::numeric_limits<double>::quiet_NaN();
  if (t < 0.0) return 1.0 - student_t_sf(-t, df);
  // A(t | df) = P(|T| < t). With theta = atan(t / sqrt(df)), s = sin, c2 = cos^2:
  // odd df:  A = 2/pi (theta + s cos (1 + 2/3 c2 + 2.4/(3.5) c2^2 + ... up to c2^((df-3)/2)))
  // even df: A = s (1 + 1/2 c2 + 1.3/(2.4) c2^2 + ... up to c2^((df-2)/2))
  const double theta = std::atan(t / std::sqrt(static_cast<double>(df)));
  const double s = std::sin(theta);
  const double c = std::cos(theta);
  const double c2 = c * c;
  double sum = 1.0;
  double term = 1.0;
  double a = 0.0;
  if (df % 2 == 1) {
    for (int j = 2; j <= df - 2; j += 2) {  // term_j = term_{j-2} x j / (j + 1) x c2
      term *= static_cast<double>(j) / static_cast<double>(j + 1) * c2;
      sum += term;
    }
    a = 2.0 / std::numbers::pi * (theta + (df > 1 ? s * c * sum : 0.0));
  } else {
    for (int j = 1; j <= df - 3; j += 2) {  // term_j = term_{j-2} x j / (j + 1) x c2
      term *= static_cast<double>(j) / static_cast<double>(j + 1) * c2;
      sum += term;
    }
    a = s * sum;
  }
  return std::clamp((1.0 - a) / 2.0, 0.0, 0.5);
}

double student_t_quantile_upper(double tail, int df) {
  if (!(tail > 0.0 && tail < 1.0) || df < 1) return std::numeric_limits<double>::quiet_NaN();
  if (tail > 0.5) return -student_t_quantile_upper(1.0 - tail, df);
  double lo = 0.0;
  double hi = 1.0;
  while (student_t_sf(hi, df) > tail && hi < 1e12) hi *= 2.0;
  for (int i = 0; i < 200 && hi - lo > 1e-13 * hi; ++i) {
    const double mid = (lo + hi) / 2.0;
    (student_t_sf(mid, df) > tail ? lo : hi) = mid;
  }
  return (lo + hi) / 2.0;
}

namespace {

struct MeanVar {
  double mean = 0.0;
  double var = 0.0;  // sample variance (n - 1)
};

MeanVar mean_var(std::span<const double> v) {
  MeanVar out;
  out.mean = std::accumulate(v.begin(), v.end(), 0.0) / static_cast<double>(v.size());
  double ss = 0.0;
  for (double x : v) ss += (x - out.mean) * (x - out.mean);
  out.var = ss / static_cast<double>(v.size() - 1);
  return out;
}

}  // namespace

std::optional<Welch> welch_test(std::span<const double> x, std::span<const double> y, double confidence) {
  if (x.size() < 2 || y.size() < 2) return std::nullopt;
  Welch w;
  w.n_x = x.size();
  w.n_y = y.size();
  const auto m = static_cast<double>(x.size());
  const auto n = static_cast<double>(y.size());
  const MeanVar a = mean_var(x);
  const MeanVar b = mean_var(y);
  w.shift = a.mean - b.mean;
  w.pooled_sd = std::sqrt(((m - 1.0) * a.var + (n - 1.0) * b.var) / (m + n - 2.0));
  const double vx = a.var / m;
  const double vy = b.var / n;
  w.se = std::sqrt(vx + vy);
  if (!(w.se > 0.0)) {
    w.df_welch = m + n - 2.0;
    w.df = static_cast<int>(w.df_welch);
    w.p_greater = w.shift > 0.0 ? 0.0 : 1.0;
    w.p_less = w.shift < 0.0 ? 0.0 : 1.0;
    w.ci_low = w.ci_high = w.shift;
    return w;
  }
  w.df_welch = (vx + vy) * (vx + vy) / (vx * vx / (m - 1.0) + vy * vy / (n - 1.0));
  w.df = std::max(1, static_cast<int>(std::floor(w.df_welch + 1e-9)));
  w.t = w.shift / w.se;
  w.p_greater = student_t_sf(w.t, w.df);
  w.p_less = student_t_sf(-w.t, w.df);
  const double q = student_t_quantile_upper((1.0 - confidence) / 2.0, w.df);
  w.ci_low = w.shift - q * w.se;
  w.ci_high = w.shift + q * w.se;
  return w;
}

// ---- multiple testing ----------------------------------------------------------------------

std::vector<double> benjamini_hochberg(std::span<const double> p_values) {
  const std::size_t m = p_values.size();
  std::vector<std::size_t> order(m);
  std::iota(order.begin(), order.end(), std::size_t{0});
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return p_values[a] < p_values[b]; });
  std::vector<double> q(m, 1.0);
  double running_min = 1.0;
  // From the largest p down: q_(i) = min(q_(i+1), m p_(i) / i).
  for (std::size_t rank = m; rank >= 1; --rank) {
    const std::size_t idx = order[rank - 1];
    const double candidate = p_values[idx] * static_cast<double>(m) / static_cast<double>(rank);
    running_min = std::min(running_min, candidate);
    q[idx] = std::min(1.0, running_min);
  }
  return q;
}

// ---- bootstrap -----------------------------------------------------------------------------

double median(std::span<const double> values) {
  if (values.empty()) return 0.0;
  std::vector<double> v(values.begin(), values.end());
  const std::size_t mid = v.size() / 2;
  std::nth_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(mid), v.end());
  const double upper = v[mid];
  if (v.size() % 2 == 1) return upper;
  const double lower = *std::max_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(mid));
  return (lower + upper) / 2.0;
}

std::optional<Interval> bootstrap_ratio_ci(std::span<const double> a, std::span<const double> b,
                                           const Statistic& statistic, double confidence, int resamples,
                                           std::uint64_t seed) {
  if (a.empty() || b.empty() || resamples < 1) return std::nullopt;
  std::mt19937_64 rng(seed);  // its output sequence is fixed by the standard
  // Index draw: rng() % n. std::uniform_int_distribution differs between standard libraries;
  // the modulo bias is below n / 2^64, far under any bootstrap resolution.
  auto resample = [&rng](std::span<const double> from, std::vector<double>& into) {
    into.resize(from.size());
    for (auto& v : into) v = from[static_cast<std::size_t>(rng() % from.size())];
  };
  std::vector<double> ratios;
  ratios.reserve(static_cast<std::size_t>(resamples));
  std::vector<double> ra, rb;
  for (int i = 0; i < resamples; ++i) {
    resample(a, ra);
    resample(b, rb);
    const double ratio = statistic(ra) / statistic(rb);
    if (std::isfinite(ratio)) ratios.push_back(ratio);
  }
  if (ratios.empty()) return std::nullopt;
  std::sort(ratios.begin(), ratios.end());
  const double tail = (1.0 - confidence) / 2.0;
  return Interval{percentile_sorted(ratios, tail), percentile_sorted(ratios, 1.0 - tail)};
}

// ---- repetition blocking -------------------------------------------------------------------

Blocking block_medians(std::span<const double> samples, int repetitions, int min_block_samples) {
  Blocking out;
  const auto r = static_cast<std::size_t>(std::max(repetitions, 1));
  const auto per_block = static_cast<std::size_t>(std::max(min_block_samples, 1));
  const std::size_t n = samples.size();
  if (n < r * per_block) {
    out.reason = fmt::format("{} sample(s); {} repetitions x {} samples need {}", n, r, per_block, r * per_block);
    return out;
  }
  out.medians.reserve(r);
  for (std::size_t b = 0; b < r; ++b) {
    const std::size_t begin = b * n / r;
    const std::size_t end = (b + 1) * n / r;
    out.medians.push_back(median(samples.subspan(begin, end - begin)));
  }
  return out;
}

double pooled_mad_scale(std::span<const double> x, std::span<const double> y) {
  std::vector<double> deviations;
  deviations.reserve(x.size() + y.size());
  for (const auto sample : {x, y}) {
    const double center = median(sample);
    for (double v : sample) deviations.push_back(std::fabs(v - center));
  }
  // 1 / Phi^-1(0.75): for normal data the median absolute deviation is 0.6745 sigma.
  constexpr double kNormalConsistency = 1.482602218505602;
  return kNormalConsistency * median(deviations);
}

}  // namespace collbench::stats
