// Fabric terms: the exact expected maximum of balls into bins for static ECMP, and when the
// taper and the collisions apply (only to jobs whose traffic crosses the spine).
#include "collbench/model/fabric.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <mutex>
#include <stdexcept>
#include <utility>
#include <vector>

namespace collbench::model {
namespace {

constexpr int kMaxEcmpCount = 1024;

// log(k!) for k = 0..n.
std::vector<double> log_factorials(int n) {
  std::vector<double> out(static_cast<std::size_t>(n) + 1, 0.0);
  for (int k = 2; k <= n; ++k) out[k] = out[k - 1] + std::log(static_cast<double>(k));
  return out;
}

// P(every one of `bins` bins holds <= cap of `balls` balls thrown uniformly). Bins are filled
// one after another: given r balls not in the earlier bins, each lands in the next of the k
// remaining bins with probability 1/k, independently (a binomial count).
double prob_max_at_most(int balls, int bins, int cap, const std::vector<double>& lf) {
  std::vector<double> remaining(static_cast<std::size_t>(balls) + 1, 0.0);
  remaining[balls] = 1.0;
  for (int k = bins; k >= 2; --k) {
    std::vector<double> next(remaining.size(), 0.0);
    const double log_in = std::log(1.0 / k);
    const double log_out = std::log(1.0 - 1.0 / k);
    for (int r = 0; r <= balls; ++r) {
      if (remaining[r] == 0.0) continue;
      for (int j = 0; j <= std::min(cap, r); ++j) {
        const double log_pmf = lf[r] - lf[j] - lf[r - j] + j * log_in + (r - j) * log_out;
        next[r - j] += remaining[r] * std::exp(log_pmf);
      }
    }
    remaining.swap(next);
  }
  double p = 0.0;  // the last bin takes every ball left
  for (int r = 0; r <= std::min(cap, balls); ++r) p += remaining[r];
  return std::min(p, 1.0);
}

}  // namespace

double ecmp_expected_max_load(int flows, int uplinks) {
  if (flows < 1 || uplinks < 1 || flows > kMaxEcmpCount || uplinks > kMaxEcmpCount) {
    throw std::invalid_argument("ecmp_expected_max_load: flows and uplinks must be in [1, 1024]");
  }
  if (uplinks == 1) return flows;
  const std::vector<double> lf = log_factorials(flows);
  const int least = (flows + uplinks - 1) / uplinks;  // P(max <= c) = 0 below ceil(f/u)
  double expected = least;
  double previous = 1.0;
  for (int cap = least; cap < flows; ++cap) {
    const double tail = 1.0 - prob_max_at_most(flows, uplinks, cap, lf);
    // Once small, the tail falls faster than geometrically: stop below 1e-12, or at the rounding
    // floor (a small tail that no longer falls), where the rest of the sum is below 1e-9.
    if (tail < 1e-12 || (tail < 1e-6 && tail >= previous)) break;
    expected += tail;
    previous = tail;
  }
  return expected;
}

double ecmp_rate_factor(int flows, int uplinks) {
  // Every estimate of a case asks again: keep each (flows, uplinks) once per process.
  static std::mutex mutex;
  static std::map<std::pair<int, int>, double> cache;
  const std::lock_guard<std::mutex> lock(mutex);
  const auto key = std::make_pair(flows, uplinks);
  if (const auto it = cache.find(key); it != cache.end()) return it->second;
  const int ideal = (flows + uplinks - 1) / uplinks;
  const double factor = ideal / ecmp_expected_max_load(flows, uplinks);
  cache.emplace(key, factor);
  return factor;
}

bool crosses_spine(const ScaleOut& s, int num_domains) {
  return num_domains > 1 && (s.leaf_domains == 0 || num_domains > s.leaf_domains);
}

double scale_out_line_rate(const ScaleOut& s, int num_domains) {
  const double nics = s.nics_per_gpu * s.nic_bytes_per_s;
  // Without a stated leaf span the taper applies to every job, as it always did.
  if (s.leaf_domains > 0 && !crosses_spine(s, num_domains)) return nics;
  return nics / s.oversubscription;
}

double scale_out_routing_factor(const ScaleOut& s, int num_domains) {
  if (s.routing != Routing::ecmp || !crosses_spine(s, num_domains)) return 1.0;
  return ecmp_rate_factor(s.ecmp_flows > 0 ? s.ecmp_flows : s.ecmp_uplinks, s.ecmp_uplinks);
}

}  // namespace collbench::model
