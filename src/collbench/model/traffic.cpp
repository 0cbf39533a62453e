// Traffic-matrix bounds (MoE harness, all-to-all-v).
#include "collbench/model/traffic.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

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
  TrafficSummary s;
  s.per_rank.resize(static_cast<std::size_t>(n));
  std::vector<int> domain(static_cast<std::size_t>(n));
  for (int r = 0; r < n; ++r) domain[static_cast<std::size_t>(r)] = placement.domain_of(r);
  for (int src = 0; src < n; ++src) {
    for (int dst = 0; dst < n; ++dst) {
      const std::uint64_t b = matrix.at(src, dst);
      auto& from = s.per_rank[static_cast<std::size_t>(src)];
      auto& to = s.per_rank[static_cast<std::size_t>(dst)];
      from.send_total += b;
      to.recv_total += b;
      s.bytes_logical_total += b;
      if (src == dst) continue;
      if (domain[static_cast<std::size_t>(src)] == domain[static_cast<std::size_t>(dst)]) {
        from.send_in_domain += b;
        to.recv_in_domain += b;
        s.bytes_in_domain += b;
      } else {
        from.send_off_domain += b;
        to.recv_off_domain += b;
        s.bytes_off_domain += b;
      }
    }
  }
  for (const auto& r : s.per_rank) s.bytes_max_rank = std::max({s.bytes_max_rank, r.send_total, r.recv_total});
  return s;
}

TrafficEstimate estimate_from_traffic(const SystemProfile& system, const TrafficMatrix& matrix,
                                      const Placement& placement) {
  TrafficEstimate out;
  out.traffic = summarize_traffic(matrix, placement);
  const auto& t = out.traffic;
  const double b_up = system.scale_up.bytes_per_s;
  const double b_out = system.scale_out.per_gpu_bytes_per_s();
  double e_up = b_up * system.efficiency.scale_up;
  double e_out = b_out * system.efficiency.scale_out;
  if (system.memory_copy_bytes_per_s) {
    e_up = std::min(e_up, *system.memory_copy_bytes_per_s);
    e_out = std::min(e_out, *system.memory_copy_bytes_per_s);
  }

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
    expected_transfer_s =
        std::max(expected_transfer_s, std::max(transfer_time_s(in_bytes, e_up), transfer_time_s(off_bytes, e_out)));
    wire = std::max(wire, static_cast<double>(
                              std::max(x.send_in_domain + x.send_off_domain, x.recv_in_domain + x.recv_off_domain)));
  }
  double latency_s = system.launch_latency_s;
  if (any_off) {
    latency_s += system.scale_out.hop_latency_s;
  } else if (any_in) {
    latency_s += system.scale_up.hop_latency_s;
  }

  const int n = matrix.num_ranks;
  const double bytes = static_cast<double>(t.bytes_max_rank);
  Estimate& e = out.estimate;
  e.system = system.name;
  e.bound_time_us = bound_s * 1e6;
  e.bound_algbw_gbps = gbps(bytes, e.bound_time_us);
  e.bound_busbw_gbps = e.bound_algbw_gbps * gather_scatter_busbw_factor(n);
  e.expected_time_us = (expected_transfer_s + latency_s) * 1e6;
  e.expected_algbw_gbps = gbps(bytes, e.expected_time_us);
  e.expected_busbw_gbps = e.expected_algbw_gbps * gather_scatter_busbw_factor(n);
  e.wire_bytes_per_rank = wire;
  e.algo_modelled = "traffic-matrix";
  e.busbw_ranks = n;
  e.bound_margin = system.calibrated ? system.calibrated->margin : 0.0;
  e.note = fmt::format("rank {} sets the bound; {:.1f}% of bytes cross domains ({})", t.hottest_rank,
                       t.bytes_in_domain + t.bytes_off_domain > 0
                           ? 100.0 * static_cast<double>(t.bytes_off_domain) /
                                 static_cast<double>(t.bytes_in_domain + t.bytes_off_domain)
                           : 0.0,
                       packing_string(placement));
  return out;
}

}  // namespace collbench::model
