// Bounds for irregular exchanges (all-to-all-v, MoE dispatch/combine) from a per-(source,
// destination) bytes matrix and a placement: bytes per link class, in-domain vs off-domain,
// and the worst rank. (The MoE volumes themselves come from the workload layer,
// collbench/workload/expected.hpp.) Pure, no I/O.
#pragma once

#include <cstdint>
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

struct TrafficEstimate {
  Estimate estimate;  // bytes convention: bytes_max_rank; busbw factor (n-1)/n
  TrafficSummary traffic;
};

// Bound = max over ranks of max(off-domain send or recv / B_out, in-domain send or recv / B_up)
// (the two link classes run concurrently); expected uses the calibrated rates plus one hop of
// latency per link class used and the launch latency. InputError when the matrix and the
// placement disagree in size.
TrafficEstimate estimate_from_traffic(const SystemProfile& system, const TrafficMatrix& matrix,
                                      const Placement& placement);

}  // namespace collbench::model
