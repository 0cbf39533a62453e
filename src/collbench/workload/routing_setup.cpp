// Setting up the MoE routing generator (routing.hpp): the configuration checked (InputError naming
// the setting), expert popularity, the fast selection pass's threshold and the replica slots.
// Routing the tokens is routing.cpp.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>

#include "collbench/core/error.hpp"
#include "collbench/workload/expected.hpp"
#include "collbench/workload/routing.hpp"

namespace collbench::workload {
namespace {

constexpr double kNoLimit = std::numeric_limits<double>::infinity();
constexpr double kTwoPi = 6.283185307179586476925286766559;

// Standard normal z_e of expert e (Box-Muller, cosine branch), per (seed, layer).
double standard_normal(std::uint64_t seed, int layer, int expert_idx) {
  std::uint64_t h = hash_combine(stream_key(Stream::popularity, seed), static_cast<std::uint64_t>(layer));
  h = hash_combine(h, static_cast<std::uint64_t>(expert_idx));
  const double u1 = uniform_pos01(h);
  const double u2 = uniform_pos01(mix64(h + kGoldenGamma));
  return std::sqrt(-2.0 * std::log(u1)) * std::cos(kTwoPi * u2);
}

// Keys the fast selection pass should expect below its starting threshold: enough that it
// rarely has to fall back (fewer than k keys below it: a Poisson tail beyond ~4 standard
// deviations), few enough that most experts cost one hash and one compare. Measured on
// DeepSeek-V3 shapes, more keys per group for group-limited routing only made it slower.
double fast_pass_keys(const RoutingConfig& c) {
  const double k = c.top_k;
  return k + 4.0 * std::sqrt(k) + 2.0;
}

// Time t of the exponential race at which `keys` experts are expected to have arrived:
// sum_e 1 - exp(-w_e t) = keys (P(x_e < t) = 1 - exp(-w_e t)). Infinite when keys >= E.
double fast_threshold(const std::vector<double>& weights, double keys) {
  if (keys >= static_cast<double>(weights.size()) - 0.5) return kNoLimit;
  auto arrivals = [&](double t) {
    double sum = 0.0;
    for (const double w : weights) sum += -std::expm1(-w * t);
    return sum;
  };
  double lo = 0.0;
  double hi = 1.0;
  while (arrivals(hi) < keys) hi *= 2.0;
  for (int it = 0; it < 100; ++it) {
    const double mid = 0.5 * (lo + hi);
    (arrivals(mid) < keys ? lo : hi) = mid;
  }
  return hi;
}

// The model's shape: ranks, experts, top-k and the expert groups a token may use.
void check_shape(const RoutingConfig& config) {
  const auto& s = config.settings;
  const int n = config.num_ranks;
  const int num_experts = config.num_experts;
  const int k = config.top_k;
  if (n < 1) throw InputError(fmt::format("routing: num_ranks must be >= 1, got {}", n));
  if (num_experts < 1) throw InputError(fmt::format("routing: num_experts must be >= 1, got {}", num_experts));
  if (k < 1 || k > num_experts || k > kMaxTopK) {
    throw InputError(
        fmt::format("routing: top_k {} must lie in [1, min(num_experts = {}, {})]", k, num_experts, kMaxTopK));
  }
  if (config.num_expert_groups < 1 || num_experts % config.num_expert_groups != 0) {
    throw InputError(fmt::format("routing: {} experts do not split into {} equal expert groups", num_experts,
                                 config.num_expert_groups));
  }
  if (s.groups_per_token < 0 || s.groups_per_token > config.num_expert_groups) {
    throw InputError(fmt::format("routing: groups_per_token {} must lie in [0 (unlimited), num_expert_groups = {}]",
                                 s.groups_per_token, config.num_expert_groups));
  }
  const int group_size = num_experts / config.num_expert_groups;
  if (s.groups_per_token > 0 && s.groups_per_token * group_size < k) {
    throw InputError(fmt::format("routing: groups_per_token {} x {} experts per group < top_k {}", s.groups_per_token,
                                 group_size, k));
  }
}

// The EP group size (the setting, else every rank), checked against the experts and the ranks.
int checked_ep_size(const RoutingConfig& config) {
  const int n = config.num_ranks;
  const int num_experts = config.num_experts;
  const int ep = config.settings.ep_size > 0 ? config.settings.ep_size : n;
  if (ep > num_experts || num_experts % ep != 0) {
    // The hint names a valid ep_size: the largest that divides both the experts and the ranks.
    const int valid = std::gcd(n, num_experts);
    throw InputError(fmt::format(
        "routing: ep_size {} does not divide the {} experts into whole experts per rank; {} experts cover at most {} "
        "ranks per EP group, so run several EP groups at once (set ep_size, e.g. {} for {} groups of {})",
        ep, num_experts, num_experts, num_experts, valid, n / valid, valid));
  }
  if (n % ep != 0) {
    throw InputError(fmt::format("routing: {} ranks do not form whole EP groups of ep_size {}", n, ep));
  }
  return ep;
}

// Replicas, popularity and tokens per rank.
void check_settings(const RoutingConfig& config, int ep) {
  const auto& s = config.settings;
  const int n = config.num_ranks;
  const int num_experts = config.num_experts;
  if (s.num_redundant_experts < 0 || s.num_redundant_experts % ep != 0 || s.num_redundant_experts > num_experts ||
      (s.num_redundant_experts > 0 && ep < 2)) {
    throw InputError(
        fmt::format("routing: redundant_experts {} must be a multiple of ep_size {}, at most num_experts "
                    "{}, and needs ep_size >= 2",
                    s.num_redundant_experts, ep, num_experts));
  }
  if (s.popularity == Popularity::one_hot_rank && (s.hot_rank_idx < 0 || s.hot_rank_idx >= ep)) {
    throw InputError(
        fmt::format("routing: hot_rank {} must be a rank within the EP group [0, {})", s.hot_rank_idx, ep));
  }
  if (s.popularity == Popularity::one_hot_rank && !(s.hot_factor > 0.0)) {
    throw InputError("routing: hot_factor must be > 0");
  }
  if (!(s.sigma >= 0.0) || !(s.zipf_s >= 0.0)) throw InputError("routing: sigma and zipf_s must be >= 0");
  const int t = config.tokens_per_rank;
  if (t < 0) throw InputError(fmt::format("routing: tokens per rank must be >= 0, got {}", t));
  if (s.tokens == TokenDistribution::linear && t - (n - 1) < 0) {
    throw InputError(fmt::format("routing: tokens 'linear' gives T - rank = {} - {} < 0 on the last rank; use T >= {}",
                                 t, n - 1, n - 1));
  }
  if (s.tokens == TokenDistribution::uniform) {
    const int lo = s.min_tokens >= 0 ? s.min_tokens : t - t / 2;
    const int hi = s.max_tokens >= 0 ? s.max_tokens : t + t / 2;
    if (lo > hi) throw InputError(fmt::format("routing: min_tokens {} > max_tokens {}", lo, hi));
  }
}

// 1 / w_e of every expert; InputError when a weight is too small to sample.
std::vector<double> inverse_weights(const std::vector<double>& weights) {
  std::vector<double> inv(weights.size());
  for (std::size_t e = 0; e < weights.size(); ++e) {
    if (!(weights[e] > 0.0) || !std::isfinite(1.0 / weights[e])) {
      throw InputError(
          fmt::format("routing: expert {} has popularity {:g}: the skew is too extreme to sample (lower "
                      "sigma, zipf_s or hot_factor)",
                      e, weights[e]));
    }
    inv[e] = 1.0 / weights[e];
  }
  return inv;
}

// The local ranks holding each expert, home first. Home rank e / experts_per_rank; then each of
// the R hottest experts gets one replica, placed greedily (EPLB style) on the rank with the least
// expected load that has a free slot and does not hold the expert yet; each replica then takes
// an equal share of the expert's tokens. A hot expert that fits nowhere (the only free slots are
// on ranks holding it) stays unreplicated and the slot stays empty: filling it with a colder
// expert would only add load.
std::vector<std::vector<std::int32_t>> expert_holders(const std::vector<double>& weights, int ep, int per_rank,
                                                      int redundant) {
  const int num_experts = static_cast<int>(weights.size());
  std::vector<std::vector<std::int32_t>> holders(static_cast<std::size_t>(num_experts));
  std::vector<double> load(static_cast<std::size_t>(ep), 0.0);
  for (int e = 0; e < num_experts; ++e) {
    holders[e].push_back(e / per_rank);
    load[e / per_rank] += weights[e];
  }
  if (redundant == 0) return holders;
  std::vector<int> hottest(static_cast<std::size_t>(num_experts));
  std::iota(hottest.begin(), hottest.end(), 0);
  std::stable_sort(hottest.begin(), hottest.end(), [&](int a, int b) { return weights[a] > weights[b]; });
  std::vector<int> free_slots(static_cast<std::size_t>(ep), redundant / ep);
  for (int i = 0; i < redundant; ++i) {
    const int e = hottest[i];
    const double share_after = weights[e] / static_cast<double>(holders[e].size() + 1);
    int best = -1;
    for (int r = 0; r < ep; ++r) {
      if (free_slots[r] == 0 || std::find(holders[e].begin(), holders[e].end(), r) != holders[e].end()) continue;
      if (best < 0 || load[r] < load[best]) best = r;
    }
    if (best < 0) continue;  // every rank with a free slot already holds e
    const double share_before = weights[e] / static_cast<double>(holders[e].size());
    for (const auto r : holders[e]) load[r] -= share_before - share_after;
    holders[e].push_back(best);
    load[best] += share_after;
    --free_slots[best];
  }
  return holders;
}

}  // namespace

std::vector<double> expert_popularity(const RoutingSettings& s, int num_experts, int ep_size, double sigma) {
  std::vector<double> w(static_cast<std::size_t>(num_experts), 1.0);
  switch (s.popularity) {
    case Popularity::uniform:
      break;
    case Popularity::lognormal:
      for (int e = 0; e < num_experts; ++e) w[e] = std::exp(sigma * standard_normal(s.seed, s.layer, e));
      break;
    case Popularity::zipf: {
      // A seeded random permutation: experts ordered by a hash of (seed, layer, e).
      const std::uint64_t base =
          hash_combine(stream_key(Stream::permutation, s.seed), static_cast<std::uint64_t>(s.layer));
      std::vector<std::pair<std::uint64_t, int>> order(static_cast<std::size_t>(num_experts));
      for (int e = 0; e < num_experts; ++e) order[e] = {hash_combine(base, static_cast<std::uint64_t>(e)), e};
      std::sort(order.begin(), order.end());
      for (int pos = 0; pos < num_experts; ++pos) w[order[pos].second] = std::pow(pos + 1.0, -s.zipf_s);
      break;
    }
    case Popularity::one_hot_rank: {
      const int experts_per_rank = num_experts / std::max(1, ep_size);
      for (int e = 0; e < num_experts; ++e) {
        if (experts_per_rank > 0 && e / experts_per_rank == s.hot_rank_idx) w[e] = s.hot_factor;
      }
      break;
    }
  }
  const double total = std::accumulate(w.begin(), w.end(), 0.0);
  for (auto& x : w) x /= total;
  return w;
}

RoutingGenerator::RoutingGenerator(const RoutingConfig& config) : config_(config) {
  const auto& s = config_.settings;
  check_shape(config_);
  ep_size_ = checked_ep_size(config_);
  check_settings(config_, ep_size_);
  // Popularity; an imbalance target picks sigma first.
  if (s.popularity == Popularity::lognormal) {
    sigma_ = s.imbalance ? sigma_for_imbalance(*s.imbalance, config_, config_.rows) : s.sigma;
  }
  weights_ = expert_popularity(s, config_.num_experts, ep_size_, sigma_);
  inv_weights_ = inverse_weights(weights_);
  fast_threshold_ = fast_threshold(weights_, fast_pass_keys(config_));
  const auto holders = expert_holders(weights_, ep_size_, experts_per_rank(), s.num_redundant_experts);
  replica_offsets_.assign(holders.size() + 1, 0);
  for (std::size_t e = 0; e < holders.size(); ++e) {
    replica_offsets_[e + 1] = replica_offsets_[e] + static_cast<std::int32_t>(holders[e].size());
    replica_ranks_.insert(replica_ranks_.end(), holders[e].begin(), holders[e].end());
  }
}

}  // namespace collbench::workload
