// Exact-order-statistic bootstrap of medians (see median_bootstrap.hpp).
#include "collbench/stats/median_bootstrap.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <vector>

#include "collbench/core/error.hpp"
#include "collbench/stats/summary.hpp"

namespace collbench::stats {

namespace {

// Draws built on mt19937_64's raw output only (its sequence is fixed by the standard), so that
// a seed gives the same intervals with every standard library; std::gamma_distribution and
// friends are implementation-defined.
double uniform_open01(std::mt19937_64& rng) {
  return (static_cast<double>(rng() >> 11) + 0.5) * 0x1.0p-53;  // in (0, 1)
}

double standard_normal(std::mt19937_64& rng) {  // Box-Muller
  const double u1 = uniform_open01(rng);
  const double u2 = uniform_open01(rng);
  return std::sqrt(-2.0 * std::log(u1)) * std::cos(6.283185307179586 * u2);
}

// Gamma(shape, 1) for shape >= 1 (Marsaglia and Tsang, ACM TOMS 26(3), 2000).
double gamma_draw(double shape, std::mt19937_64& rng) {
  const double d = shape - 1.0 / 3.0;
  const double c = 1.0 / std::sqrt(9.0 * d);
  for (;;) {
    const double x = standard_normal(rng);
    double v = 1.0 + c * x;
    if (v <= 0.0) continue;
    v = v * v * v;
    const double u = uniform_open01(rng);
    if (std::log(u) < 0.5 * x * x + d - d * v + d * std::log(v)) return d * v;
  }
}

double beta_draw(double a, double b, std::mt19937_64& rng) {
  const double x = gamma_draw(a, rng);
  const double y = gamma_draw(b, rng);
  return x / (x + y);
}

}  // namespace

double resampled_median(std::span<const double> sorted, std::mt19937_64& rng) {
  const std::size_t n = sorted.size();
  if (n == 1) return sorted[0];
  const auto index_of = [n](double u) {
    const auto i = static_cast<std::size_t>(std::floor(u * static_cast<double>(n)));
    return i < n ? i : n - 1;
  };
  const std::size_t k = (n + 1) / 2;  // 1-based rank of the (lower) median
  const double u_k = beta_draw(static_cast<double>(k), static_cast<double>(n - k + 1), rng);
  if (n % 2 == 1) return sorted[index_of(u_k)];
  // Even n: the sample median (numpy's, as stats::summarize uses) averages the k-th and
  // (k+1)-th values. Given U_(k) = u, U_(k+1) is the minimum of the n - k uniforms above u:
  // u + (1 - u) x Beta(1, n - k), and 1 - V^(1/b) ~ Beta(1, b) for V uniform.
  const double v = uniform_open01(rng);
  const double u_k1 = u_k + (1.0 - u_k) * (1.0 - std::pow(v, 1.0 / static_cast<double>(n - k)));
  return 0.5 * (sorted[index_of(u_k)] + sorted[index_of(u_k1)]);
}

namespace {

std::vector<double> sorted_copy(std::span<const double> v) {
  std::vector<double> s(v.begin(), v.end());
  std::sort(s.begin(), s.end());
  return s;
}

Interval percentile_interval(std::vector<double>& draws, double confidence) {
  std::sort(draws.begin(), draws.end());
  const double alpha = 1.0 - confidence;
  return Interval{stats::percentile_sorted(draws, alpha / 2.0), stats::percentile_sorted(draws, 1.0 - alpha / 2.0)};
}

}  // namespace

void check_bootstrap_args(double confidence, int resamples) {
  if (!(confidence > 0.0 && confidence < 1.0))
    throw InputError(fmt::format("confidence {} must be in (0, 1)", confidence));
  if (resamples < 10) throw InputError(fmt::format("{} bootstrap resamples are too few (at least 10)", resamples));
}

std::uint64_t mix_seed(std::uint64_t seed, std::uint64_t a, std::uint64_t b, std::uint64_t c) {
  std::uint64_t z = seed;
  for (std::uint64_t v : {a, b, c}) {
    z += 0x9e3779b97f4a7c15ULL + v;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    z ^= z >> 31;
  }
  return z;
}

std::optional<Interval> bootstrap_median_ci(std::span<const double> samples, double confidence, int resamples,
                                            std::uint64_t seed) {
  check_bootstrap_args(confidence, resamples);
  if (samples.size() < 2) return std::nullopt;
  const auto sorted = sorted_copy(samples);
  std::mt19937_64 rng(seed);
  std::vector<double> draws(static_cast<std::size_t>(resamples));
  for (auto& d : draws) d = resampled_median(sorted, rng);
  return percentile_interval(draws, confidence);
}

std::optional<Interval> bootstrap_median_ratio_ci(std::span<const double> numerator,
                                                  std::span<const double> denominator, double confidence, int resamples,
                                                  std::uint64_t seed) {
  check_bootstrap_args(confidence, resamples);
  if (numerator.size() < 2 || denominator.size() < 2) return std::nullopt;
  const auto num = sorted_copy(numerator);
  const auto den = sorted_copy(denominator);
  std::mt19937_64 rng(seed);
  std::vector<double> draws;
  draws.reserve(static_cast<std::size_t>(resamples));
  for (int i = 0; i < resamples; ++i) {
    const double a = resampled_median(num, rng);
    const double b = resampled_median(den, rng);
    if (b > 0.0) draws.push_back(a / b);
  }
  if (draws.size() < static_cast<std::size_t>(resamples) / 2) return std::nullopt;  // mostly zero times
  return percentile_interval(draws, confidence);
}
}  // namespace collbench::stats
