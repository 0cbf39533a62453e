// Traffic-matrix bounds (MoE harness, all-to-all-v).
#include "collbench/model/traffic.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <string>

#include "collbench/core/error.hpp"
#include "collbench/core/units.hpp"
#include "collbench/model/bounds.hpp"

namespace collbench::model {

TrafficSummary summarize_traffic(const TrafficMatrix& matrix, const Placement& placement) {
  const int n = matrix.num_ranks;
  if (n <= 0 || matrix.bytes.size() != static_cast<std::size_t>(n) * static_cast<std::size_t>(n)) {
    throw InputError(fmt::format("traffic matrix: expected {} x {} entries, got {}", n, n, matrix.bytes.size()));
  }
  if (placement.num_ranks() != n) {
    throw InputError(fmt::format("traffic matrix has {} ranks but the placement {} has {}", n,
                                 packing_string(placement), placement.num_ranks()));
  }
  std::vector<int> domain(static_cast<std::size_t>(n));
  for (int r = 0; r < n; ++r) domain[static_cast<std::size_t>(r)] = placement.domain_of(r);
  return summarize_traffic_entries(
      domain, n, [](int) { return 0; }, [&matrix](int src, int dst) { return matrix.at(src, dst); });
}

double kernel_sm_time_s(const EpKernel& kernel, const RankTraffic& rank) {
  const double cap = kernel.sm_bytes_per_s();
  if (cap <= 0.0) return 0.0;
  return static_cast<double>(std::max(rank.send_total, rank.recv_total)) / cap;
}

double kernel_peer_time_s(const EpKernel& kernel, const RankTraffic& rank) {
  return std::max(rank.send_peers, rank.recv_peers) * kernel.per_peer_s;
}

namespace {

// The achievable rates of the two link classes (expected only).
struct ExpectedRates {
  double up = 0.0;
  double out = 0.0;
};

ExpectedRates expected_rates(const SystemProfile& system) {
  ExpectedRates e{system.scale_up.bytes_per_s * system.efficiency.scale_up,
                  system.scale_out.per_gpu_bytes_per_s() * system.efficiency.scale_out};
  if (system.memory_copy_bytes_per_s) {
    e.up = std::min(e.up, *system.memory_copy_bytes_per_s);
    e.out = std::min(e.out, *system.memory_copy_bytes_per_s);
  }
  return e;
}

// One rank's expected transfer time: link classes (and the kernel's SMs) concurrently, then the
// kernel's per-peer costs.
double rank_expected_s(const SystemProfile& system, const ExpectedRates& e, const RankTraffic& x) {
  const double in_bytes = static_cast<double>(std::max(x.send_in_domain, x.recv_in_domain));
  const double off_bytes = static_cast<double>(std::max(x.send_off_domain, x.recv_off_domain));
  double t = std::max(transfer_time_s(in_bytes, e.up), transfer_time_s(off_bytes, e.out));
  if (system.ep_kernel)
    t = std::max(t, kernel_sm_time_s(*system.ep_kernel, x)) + kernel_peer_time_s(*system.ep_kernel, x);
  return t;
}

std::string kernel_note(const SystemProfile& system, const TrafficSummary& t) {
  if (!system.ep_kernel) return "";
  const EpKernel& k = *system.ep_kernel;
  const auto& hot = t.per_rank[static_cast<std::size_t>(t.hottest_rank)];
  std::string s = "; ep_kernel:";
  if (k.sms > 0) s += fmt::format(" {} SMs x {:.4g} GB/s,", k.sms, k.per_sm_bytes_per_s / 1e9);
  return s + fmt::format(" {:.4g} us x {} peers (expected only)", k.per_peer_s * 1e6,
                         std::max(hot.send_peers, hot.recv_peers));
}

}  // namespace

TrafficEstimate estimate_from_traffic(const SystemProfile& system, const TrafficMatrix& matrix,
                                      const Placement& placement) {
  return estimate_from_summary(system, summarize_traffic(matrix, placement), placement);
}

TrafficEstimate estimate_from_summary(const SystemProfile& system, TrafficSummary summary, const Placement& placement) {
  TrafficEstimate out;
  out.traffic = std::move(summary);
  const auto& t = out.traffic;
  const double b_up = system.scale_up.bytes_per_s;
  const double b_out = system.scale_out.per_gpu_bytes_per_s();
  const ExpectedRates rates = expected_rates(system);

  // Each rank's NVLink and NIC run concurrently, each direction separately: the rank finishes
  // when its busiest (link, direction) does, and the exchange when its slowest rank does.
  double bound_s = 0.0;
  double expected_transfer_s = 0.0;
  double wire = 0.0;
  bool any_off = false;
  bool any_in = false;
  for (std::size_t r = 0; r < t.per_rank.size(); ++r) {
    const auto& x = t.per_rank[r];
    const double in_bytes = static_cast<double>(std::max(x.send_in_domain, x.recv_in_domain));
    const double off_bytes = static_cast<double>(std::max(x.send_off_domain, x.recv_off_domain));
    any_in = any_in || in_bytes > 0.0;
    any_off = any_off || off_bytes > 0.0;
    const double rank_bound = std::max(transfer_time_s(in_bytes, b_up), transfer_time_s(off_bytes, b_out));
    if (rank_bound > bound_s) {
      bound_s = rank_bound;
      out.traffic.hottest_rank = static_cast<int>(r);
    }
    expected_transfer_s = std::max(expected_transfer_s, rank_expected_s(system, rates, x));
    wire = std::max(wire, static_cast<double>(
                              std::max(x.send_in_domain + x.send_off_domain, x.recv_in_domain + x.recv_off_domain)));
  }
  double latency_s = system.launch_latency_s;
  if (any_off) {
    latency_s += system.scale_out.hop_latency_s;
  } else if (any_in) {
    latency_s += system.scale_up.hop_latency_s;
  }

  const int n = static_cast<int>(t.per_rank.size());
  const double bytes = static_cast<double>(t.bytes_max_rank);
  Estimate& e = out.estimate;
  e.system = system.name;
  e.bound_time_us = bound_s * 1e6;
  e.bound_algbw_gbps = gbps(bytes, e.bound_time_us);
  e.bound_busbw_gbps = e.bound_algbw_gbps * collbench::busbw_factor(BusbwRule::n_minus_1_over_n, n);
  e.expected_time_us = (expected_transfer_s + latency_s) * 1e6;
  e.expected_algbw_gbps = gbps(bytes, e.expected_time_us);
  e.expected_busbw_gbps = e.expected_algbw_gbps * collbench::busbw_factor(BusbwRule::n_minus_1_over_n, n);
  e.wire_bytes_per_rank = wire;
  e.algo_modelled = "traffic-matrix";
  e.busbw_ranks = n;
  e.bound_margin = system.calibrated ? system.calibrated->margin : 0.0;
  e.note = fmt::format("rank {} sets the bound; {:.1f}% of bytes cross domains ({}){}", t.hottest_rank,
                       t.bytes_in_domain + t.bytes_off_domain > 0
                           ? 100.0 * static_cast<double>(t.bytes_off_domain) /
                                 static_cast<double>(t.bytes_in_domain + t.bytes_off_domain)
                           : 0.0,
                       packing_string(placement), kernel_note(system, t));
  return out;
}

}  // namespace collbench::model
