// Closed forms, exact expected loads (exponential-race integral) and the sigma search.
#include "collbench/workload/expected.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <numeric>

#include "collbench/core/error.hpp"

namespace collbench::workload {

double expected_destination_ranks(int num_experts, int ep_size, int top_k) {
  if (num_experts < 1 || ep_size < 1 || num_experts % ep_size != 0 || top_k < 1 || top_k > num_experts) {
    throw InputError(fmt::format("expected_destination_ranks: need E % P == 0 and 1 <= k <= E (E={}, P={}, k={})",
                                 num_experts, ep_size, top_k));
  }
  const int off_rank = num_experts - num_experts / ep_size;  // experts not on a given rank
  double miss = 1.0;                                         // C(E - E/P, k) / C(E, k)
  for (int i = 0; i < top_k; ++i) {
    miss *= off_rank - i <= 0 ? 0.0 : static_cast<double>(off_rank - i) / static_cast<double>(num_experts - i);
  }
  return ep_size * (1.0 - miss);
}

double expected_rows_per_token(int num_experts, int ep_size, int top_k, RowConvention convention) {
  if (convention == RowConvention::copy) return top_k;
  return expected_destination_ranks(num_experts, ep_size, top_k);
}

double expected_dispatch_bytes_per_rank(int tokens_per_rank, int num_experts, int ep_size, int top_k,
                                        RowConvention convention, std::int64_t bytes_per_row) {
  return static_cast<double>(tokens_per_rank) * expected_rows_per_token(num_experts, ep_size, top_k, convention) *
         static_cast<double>(bytes_per_row);
}

namespace {

// One DP step: adds an expert that has arrived with probability b to the distribution q of
// arrival counts, truncated to the states 0..k-1 (mass reaching k never returns).
inline void add_bernoulli(double* q, int k, double b) {
  for (int n = k - 1; n >= 1; --n) q[n] = q[n] * (1.0 - b) + q[n - 1] * b;
  q[0] *= 1.0 - b;
}

// tau: expected number of arrivals by time tau equals k (sum_j 1 - exp(-w_j tau) = k), for
// normalised weights w.
double race_time_of_k_arrivals(const std::vector<double>& w, int k) {
  auto expected_arrivals = [&](double t) {
    double s = 0.0;
    for (const double x : w) s += -std::expm1(-x * t);
    return s;
  };
  double lo = 1e-300;
  double hi = 1.0;
  while (expected_arrivals(hi) < k) hi *= 2.0;
  for (int it = 0; it < 200 && hi / lo > 1.0 + 1e-12; ++it) {
    const double mid = std::sqrt(lo * hi);
    (expected_arrivals(mid) < k ? lo : hi) = mid;
  }
  return hi;
}

// Blocks A: one per rank (dedup) or one per expert (copy), contiguous runs of `size` experts,
// with their rates lambda_A.
struct RaceBlocks {
  int count = 0;
  int size = 0;
  std::vector<double> lambda;
};

RaceBlocks race_blocks(const std::vector<double>& w, int ep_size, RowConvention convention) {
  const int num_experts = static_cast<int>(w.size());
  RaceBlocks blocks;
  blocks.count = convention == RowConvention::dedup ? ep_size : num_experts;
  blocks.size = num_experts / blocks.count;
  blocks.lambda.assign(static_cast<std::size_t>(blocks.count), 0.0);
  for (int e = 0; e < num_experts; ++e) blocks.lambda[e / blocks.size] += w[e];
  return blocks;
}

// The first k states of the arrival counts at one t of the blocks before block blk (prefix at
// blk) and of the blocks from blk on (suffix at blk), k values per entry; b: every expert's
// arrival probability by t.
struct RaceCounts {
  std::size_t stride = 0;
  std::vector<double> prefix;
  std::vector<double> suffix;

  RaceCounts(const RaceBlocks& blocks, int k)
      : stride(static_cast<std::size_t>(k)),
        prefix((static_cast<std::size_t>(blocks.count) + 1) * stride),
        suffix((static_cast<std::size_t>(blocks.count) + 1) * stride) {}

  void fill(const std::vector<double>& b, const RaceBlocks& blocks, int k) {
    std::fill(prefix.begin(), prefix.begin() + static_cast<std::ptrdiff_t>(stride), 0.0);
    prefix[0] = 1.0;
    for (int blk = 0; blk < blocks.count; ++blk) {
      double* q = prefix.data() + (blk + 1) * stride;
      std::copy_n(prefix.data() + blk * stride, stride, q);
      for (int e = blk * blocks.size; e < (blk + 1) * blocks.size; ++e) add_bernoulli(q, k, b[e]);
    }
    double* last = suffix.data() + static_cast<std::size_t>(blocks.count) * stride;
    std::fill(last, last + stride, 0.0);
    last[0] = 1.0;
    for (int blk = blocks.count - 1; blk >= 0; --blk) {
      double* q = suffix.data() + blk * stride;
      std::copy_n(suffix.data() + (blk + 1) * stride, stride, q);
      for (int e = blk * blocks.size; e < (blk + 1) * blocks.size; ++e) add_bernoulli(q, k, b[e]);
    }
  }

  // F = P(fewer than k arrivals outside blk) = sum_a prefix(a) * P(suffix count <= k-1-a);
  // `cumulative`: scratch of k values.
  [[nodiscard]] double fewer_than_k_outside(int blk, int k, std::vector<double>& cumulative) const {
    const double* pre = prefix.data() + blk * stride;
    const double* suf = suffix.data() + (blk + 1) * stride;
    double running = 0.0;
    for (int m = 0; m < k; ++m) cumulative[m] = running += suf[m];
    double f = 0.0;
    for (int a = 0; a < k; ++a) f += pre[a] * cumulative[k - 1 - a];
    return f;
  }
};

// P(hit A) of every block. Trapezoid rule in x = ln t over [ln tau - 25, ln tau + 6]: the
// integrand lambda t exp(-lambda t) F(t) is smooth in x; below the range it is < lambda t, above
// it F(t) has vanished (the tail term exp(-lambda t_hi) F(t_hi) covers the case where it cannot,
// e.g. fewer than k other experts).
std::vector<double> race_hit_probabilities(const std::vector<double>& w, const RaceBlocks& blocks, int k, double tau) {
  const int num_experts = static_cast<int>(w.size());
  constexpr int kPoints = 384;
  const double x_lo = std::log(tau) - 25.0;
  const double x_hi = std::log(tau) + 6.0;
  const double h = (x_hi - x_lo) / (kPoints - 1);
  std::vector<double> acc(static_cast<std::size_t>(blocks.count), 0.0);
  RaceCounts counts(blocks, k);
  std::vector<double> b(static_cast<std::size_t>(num_experts));
  std::vector<double> cumulative(counts.stride);
  for (int i = 0; i < kPoints; ++i) {
    const double t = std::exp(x_lo + h * i);
    for (int e = 0; e < num_experts; ++e) b[e] = -std::expm1(-w[e] * t);
    counts.fill(b, blocks, k);
    const double weight = (i == 0 || i == kPoints - 1) ? 0.5 * h : h;
    for (int blk = 0; blk < blocks.count; ++blk) {
      const double f = counts.fewer_than_k_outside(blk, k, cumulative);
      const double lt = blocks.lambda[blk] * t;
      acc[blk] += weight * lt * std::exp(-lt) * f;
      if (i == kPoints - 1) acc[blk] += std::exp(-lt) * f;  // tail beyond t_hi (F non-increasing)
    }
  }
  return acc;
}

}  // namespace

std::vector<double> expected_rank_rows_per_token(std::span<const double> weights, int ep_size, int top_k,
                                                 RowConvention convention) {
  const int num_experts = static_cast<int>(weights.size());
  if (ep_size < 1 || num_experts % ep_size != 0 || top_k < 1 || top_k > num_experts) {
    throw InputError(fmt::format("expected_rank_rows_per_token: need E % P == 0 and 1 <= k <= E (E={}, P={}, k={})",
                                 num_experts, ep_size, top_k));
  }
  const int per_rank = num_experts / ep_size;
  const int k = top_k;
  std::vector<double> out(static_cast<std::size_t>(ep_size), 0.0);
  if (k == num_experts) {  // every expert is chosen
    for (auto& x : out) x = convention == RowConvention::copy ? per_rank : 1.0;
    return out;
  }
  const double total = std::accumulate(weights.begin(), weights.end(), 0.0);
  std::vector<double> w(weights.begin(), weights.end());
  for (auto& x : w) x /= total;

  const RaceBlocks blocks = race_blocks(w, ep_size, convention);
  const double tau = race_time_of_k_arrivals(w, k);
  const std::vector<double> acc = race_hit_probabilities(w, blocks, k, tau);
  for (int blk = 0; blk < blocks.count; ++blk) out[(blk * blocks.size) / per_rank] += std::min(1.0, acc[blk]);
  return out;
}

namespace {

// Per-rank expected receive rows of the whole configuration, from per-token shares of one EP
// group and the tokens each EP group sends.
double imbalance_from_shares(const RoutingGenerator& shape, const std::vector<double>& shares) {
  const int ep = shape.ep_size();
  double max_load = 0.0;
  double sum_load = 0.0;
  for (int g = 0; g < shape.num_ep_groups(); ++g) {
    double tokens = 0.0;
    for (int r = g * ep; r < (g + 1) * ep; ++r) tokens += shape.num_tokens(r);
    for (int r = 0; r < ep; ++r) {
      max_load = std::max(max_load, tokens * shares[r]);
      sum_load += tokens * shares[r];
    }
  }
  const double mean = sum_load / shape.num_ranks();
  return mean > 0.0 ? max_load / mean : 1.0;
}

// A generator with the same shape and tokens but no imbalance target (so constructing it does
// not recurse into the sigma search).
RoutingConfig without_target(const RoutingConfig& config, double sigma) {
  RoutingConfig c = config;
  c.settings.popularity = Popularity::lognormal;
  c.settings.imbalance.reset();
  c.settings.sigma = sigma;
  return c;
}

bool group_limited(const RoutingConfig& c) {
  return c.settings.groups_per_token > 0 && c.settings.groups_per_token < c.num_expert_groups;
}

// Calibration sample for group-limited routing, in tokens routed within one EP group.
constexpr int kCalibrationTokens = 1 << 15;

// Expected rows per token received by each local rank of an EP group at this sigma.
//
// Unlimited routing: exact (expected_rank_rows_per_token). Group-limited routing has no closed
// form, so the calibration tokens are routed twice with the same random numbers, with and
// without the limit, and the unlimited routing serves as a control variate:
//   share_r = exact_unlimited_r + (limited_r - unlimited_r) / tokens.
// Both routings agree on most tokens, so the difference is far less noisy than the limited
// counts alone (whose noise would inflate the max and bias the imbalance upwards).
std::vector<double> shares_for_sigma(const RoutingConfig& config, const RoutingGenerator& shape, double sigma,
                                     RowConvention convention) {
  const int ep = shape.ep_size();
  RoutingSettings s = config.settings;
  s.popularity = Popularity::lognormal;
  auto shares =
      expected_rank_rows_per_token(expert_popularity(s, config.num_experts, ep, sigma), ep, config.top_k, convention);
  if (!group_limited(config)) return shares;
  RoutingConfig c = without_target(config, sigma);
  c.num_ranks = ep;
  c.iteration = 0;
  c.tokens_per_rank = (kCalibrationTokens + ep - 1) / ep;
  c.settings.tokens = TokenDistribution::fixed;
  c.settings.ep_size = ep;
  c.settings.num_redundant_experts = 0;
  const auto limited = RoutingGenerator(c).counts_matrices().rows(convention).receive_rows();
  c.settings.groups_per_token = 0;
  const auto unlimited = RoutingGenerator(c).counts_matrices().rows(convention).receive_rows();
  const double tokens = static_cast<double>(c.tokens_per_rank) * ep;
  for (int r = 0; r < ep; ++r) shares[r] += static_cast<double>(limited[r] - unlimited[r]) / tokens;
  return shares;
}

// Bisection for f(sigma) = target on [lo, hi] with f(lo) < target <= f(hi), to a relative
// width `tolerance` (I - 1 grows about linearly in sigma, so 1e-3 in sigma is 1e-3 in I - 1).
template <class F>
double bisect(F&& f, double target, double lo, double hi, double tolerance) {
  while (hi - lo > tolerance * std::max(0.01, hi)) {
    const double mid = 0.5 * (lo + hi);
    (f(mid) < target ? lo : hi) = mid;
  }
  return 0.5 * (lo + hi);
}

constexpr double kMaxSigma = 16.0;

// Unlimited routing, exact: double the bracket until it holds the target, then bisect; -1 when
// the target lies beyond kMaxSigma.
template <class F>
double unlimited_sigma(F&& imbalance, double target) {
  double lo = 0.0;
  double hi = 0.25;
  while (hi <= kMaxSigma && imbalance(hi) < target) {
    lo = hi;
    hi *= 2.0;
  }
  return hi <= kMaxSigma ? bisect(imbalance, target, lo, hi, 1e-6) : -1.0;
}

// Group-limited: the limit changes the imbalance (much at EP8, where a group is a rank; little
// at EP64), so search again on the calibrated estimate. Each evaluation routes the calibration
// sample twice, so use secant steps on I - 1 (about proportional to sigma), starting from `start`
// (the unlimited answer); bisection takes over if they do not settle. `unreachable()` is the
// error beyond kMaxSigma.
template <class F, class E>
double limited_sigma(F&& imbalance, double target, double start, E&& unreachable) {
  const double tolerance = 1e-3 * target;
  double s0 = start;
  double f0 = imbalance(s0);
  double lo = 0.0;   // largest sigma seen below the target
  double hi = -1.0;  // smallest sigma seen at or above it
  auto note = [&](double sigma, double f) {
    if (f < target) {
      lo = std::max(lo, sigma);
    } else {
      hi = hi < 0.0 ? sigma : std::min(hi, sigma);
    }
  };
  note(s0, f0);
  if (std::abs(f0 - target) <= tolerance) return s0;
  double s1 = f0 > 1.0 + 1e-9 ? s0 * (target - 1.0) / (f0 - 1.0) : 2.0 * s0;
  s1 = std::clamp(s1, s0 / 4.0, std::min(kMaxSigma, s0 * 4.0));
  for (int step = 0; step < 8; ++step) {
    const double f1 = imbalance(s1);
    note(s1, f1);
    if (std::abs(f1 - target) <= tolerance) return s1;
    double next = f1 != f0 ? s1 + (target - f1) * (s1 - s0) / (f1 - f0) : -1.0;
    if (!(next > lo) || (hi >= 0.0 && !(next < hi))) next = hi >= 0.0 ? 0.5 * (lo + hi) : 2.0 * s1;
    if (next > kMaxSigma) throw unreachable();
    s0 = s1;
    f0 = f1;
    s1 = next;
  }
  while (hi < 0.0) {  // every point so far is below the target: grow until one is not
    if (s1 > kMaxSigma) throw unreachable();
    note(s1, imbalance(s1));
    s1 *= 1.5;
  }
  return bisect(imbalance, target, lo, hi, 1e-3);
}

}  // namespace

double expected_imbalance(const RoutingConfig& config, double sigma, RowConvention convention) {
  const RoutingGenerator shape(without_target(config, 0.0));
  return imbalance_from_shares(shape, shares_for_sigma(config, shape, sigma, convention));
}

double sigma_for_imbalance(double target_imbalance, const RoutingConfig& config, RowConvention convention) {
  if (!(target_imbalance >= 1.0) || !std::isfinite(target_imbalance)) {
    throw InputError(fmt::format("imbalance {} must be a ratio max/mean >= 1", target_imbalance));
  }
  const RoutingGenerator shape(without_target(config, 0.0));
  auto imbalance = [&](double sigma) {
    return imbalance_from_shares(shape, shares_for_sigma(config, shape, sigma, convention));
  };
  // The token distribution alone (uniform popularity) sets the floor.
  RoutingConfig unlimited = config;
  unlimited.settings.groups_per_token = 0;
  auto imbalance_unlimited = [&](double sigma) {
    return imbalance_from_shares(shape, shares_for_sigma(unlimited, shape, sigma, convention));
  };
  const double at_zero = imbalance_unlimited(0.0);
  if (target_imbalance <= at_zero) {
    if (target_imbalance < at_zero - 1e-9) {
      throw InputError(
          fmt::format("imbalance {:.4g} is below {:.4g}, what uniform popularity already gives with "
                      "tokens '{}'",
                      target_imbalance, at_zero, to_string(config.settings.tokens)));
    }
    return 0.0;
  }
  auto unreachable = [&]() {
    const std::string why = convention == RowConvention::dedup
                                ? "; with dedup rows a rank receives a token at most once, so I <= ranks / "
                                  "destinations per token"
                                : "";
    return InputError(
        fmt::format("imbalance {:.4g} is not reachable with log-normal popularity (sigma <= {}) on EP "
                    "groups of {} ranks{}",
                    target_imbalance, kMaxSigma, shape.ep_size(), why));
  };
  const double sigma_unlimited = unlimited_sigma(imbalance_unlimited, target_imbalance);
  if (!group_limited(config)) {
    if (sigma_unlimited < 0.0) throw unreachable();
    return sigma_unlimited;
  }
  return limited_sigma(imbalance, target_imbalance, sigma_unlimited > 0.0 ? sigma_unlimited : 0.25, unreachable);
}

}  // namespace collbench::workload
