// Bounds for irregular exchanges (all-to-all-v, MoE dispatch/combine) from a per-(source,
// destination) bytes matrix and a placement: bytes per link class, in-domain vs off-domain,
// and the worst rank. (The MoE volumes themselves come from the workload layer,
// collbench/workload/expected.hpp.) Pure, no I/O.
#pragma once

#include <algorithm>
#include <cstdint>
#include <utility>
#include <vector>

#include "collbench/core/placement.hpp"
#include "collbench/model/estimate.hpp"
#include "collbench/model/system_profile.hpp"

namespace collbench::model {

// bytes[src * n + dst]: what rank src sends to rank dst in one exchange (n = placement ranks).
struct TrafficMatrix {
  int num_ranks = 0;
  std::vector<std::uint64_t> bytes;

  [[nodiscard]] std::uint64_t at(int src, int dst) const {
    return bytes[static_cast<std::size_t>(src) * static_cast<std::size_t>(num_ranks) + static_cast<std::size_t>(dst)];
  }
};

// Per-rank traffic split by link class; self traffic is a local copy and uses no link.
struct RankTraffic {
  std::uint64_t send_in_domain = 0;
  std::uint64_t recv_in_domain = 0;
  std::uint64_t send_off_domain = 0;
  std::uint64_t recv_off_domain = 0;
  std::uint64_t send_total = 0;  // including self
  std::uint64_t recv_total = 0;  // including self
  int send_peers = 0;            // other ranks this rank sends a non-zero block to
  int recv_peers = 0;            // other ranks that send this rank a non-zero block
};

struct TrafficSummary {
  std::vector<RankTraffic> per_rank;
  std::uint64_t bytes_in_domain = 0;      // sum over pairs in the same domain (self excluded)
  std::uint64_t bytes_off_domain = 0;     // sum over pairs in different domains
  std::uint64_t bytes_max_rank = 0;       // max over ranks of send or recv total (nccl-tests S)
  std::uint64_t bytes_logical_total = 0;  // sum of all entries (DeepEP-style total)
  int hottest_rank = 0;                   // the rank that sets the bound
};

TrafficSummary summarize_traffic(const TrafficMatrix& matrix, const Placement& placement);

// The same summary from a matrix given by its entries: bytes(src, dst) for dst in
// [first(src), first(src) + width), every other entry 0 (a block-diagonal matrix in O(n x width)
// instead of n x n). `domain` holds every rank's domain.
template <class First, class Bytes>
TrafficSummary summarize_traffic_entries(const std::vector<int>& domain, int width, First first, Bytes bytes) {
  const int n = static_cast<int>(domain.size());
  TrafficSummary s;
  s.per_rank.resize(domain.size());
  for (int src = 0; src < n; ++src) {
    auto& from = s.per_rank[static_cast<std::size_t>(src)];
    for (int dst = first(src); dst < first(src) + width; ++dst) {
      const std::uint64_t b = bytes(src, dst);
      auto& to = s.per_rank[static_cast<std::size_t>(dst)];
      from.send_total += b;
      to.recv_total += b;
      s.bytes_logical_total += b;
      if (src == dst) continue;
      if (b > 0) {
        ++from.send_peers;
        ++to.recv_peers;
      }
      const bool same = domain[static_cast<std::size_t>(src)] == domain[static_cast<std::size_t>(dst)];
      (same ? from.send_in_domain : from.send_off_domain) += b;
      (same ? to.recv_in_domain : to.recv_off_domain) += b;
      (same ? s.bytes_in_domain : s.bytes_off_domain) += b;
    }
  }
  for (const auto& r : s.per_rank) s.bytes_max_rank = std::max({s.bytes_max_rank, r.send_total, r.recv_total});
  return s;
}

struct TrafficEstimate {
  Estimate estimate;  // bytes convention: bytes_max_rank; busbw factor (n-1)/n
  TrafficSummary traffic;
};

// The MoE kernel's resources (system.ep_kernel; expected only, docs/model.md "MoE kernel
// resources"). SM cap: the kernel's SMs move every row of a rank, self included, at most
// sms x per-SM rate, so T_sm = max(send_total, recv_total) / (sms x r_sm) (0 without an SM cap).
// Per-peer cost: T_peer = max(send_peers, recv_peers) x t_peer.
double kernel_sm_time_s(const EpKernel& kernel, const RankTraffic& rank);
double kernel_peer_time_s(const EpKernel& kernel, const RankTraffic& rank);

// Bound = max over ranks of max(off-domain send or recv / B_out, in-domain send or recv / B_up)
// (the two link classes run concurrently); expected uses the calibrated rates plus one hop of
// latency per link class used and the launch latency; with `ep_kernel` a rank's expected time is
//   max(in / e_up, off / e_out, T_sm) + T_peer
// (the link classes and the SMs work concurrently, the per-peer costs add). InputError when the matrix and the
// placement disagree in size.
TrafficEstimate estimate_from_traffic(const SystemProfile& system, const TrafficMatrix& matrix,
                                      const Placement& placement);
// The same from the matrix's summary (summarize_traffic, or a family's own summary of it).
TrafficEstimate estimate_from_summary(const SystemProfile& system, TrafficSummary summary, const Placement& placement);

}  // namespace collbench::model
