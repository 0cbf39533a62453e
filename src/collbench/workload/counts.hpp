// What a counts matrix means for the links: receive-load imbalance and Gini, domain-level
// (rack-level) counts for a placement, rows per link class (self, in-domain, off-domain), and
// the expert grouping that makes group-limited routing a domain limit. Pure functions; no
// hardware needed.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "collbench/core/placement.hpp"
#include "collbench/workload/routing.hpp"

namespace collbench::workload {

struct LoadStats {
  double mean_rows = 0.0;  // over all ranks
  std::int64_t max_rows = 0;
  int hottest_rank_idx = -1;  // lowest index among the ranks with max_rows
  double imbalance = 1.0;     // I = max / mean (1 when everything is zero)
  double gini = 0.0;          // 0 = perfectly even, (n-1)/n = everything on one rank
};

// Statistics of per-rank loads, e.g. CountsMatrix::receive_rows(). Gini coefficient:
// G = sum_i sum_j |x_i - x_j| / (2 n^2 mean), computed from the sorted loads as
// G = 2 sum_i i x_(i) / (n sum x) - (n + 1) / n with i = 1..n.
LoadStats load_stats(std::span<const std::int64_t> loads);
double gini(std::span<const double> loads);

// Domain-level counts: num_domains x num_domains, [src domain][dst domain] = rows between them
// (self rows included in the diagonal). The matrix must have placement.num_ranks() ranks.
CountsMatrix domain_counts(const CountsMatrix& ranks, const Placement& placement);

// Rows per rank and link class. Self rows never touch a link; in-domain rows use the scale-up
// fabric (NVLink), off-domain rows the scale-out NIC. Multiply by bytes per row for bytes.
struct LinkClassRows {
  std::vector<std::int64_t> send_self, send_in_domain, send_off_domain;
  std::vector<std::int64_t> recv_self, recv_in_domain, recv_off_domain;
};
LinkClassRows link_class_rows(const CountsMatrix& ranks, const Placement& placement);

// Expert groups that coincide with domains: with experts placed contiguously, the EP group's
// ranks rack-major and every domain holding the same number of its ranks, expert group d =
// the experts of the EP group's d-th domain, so `groups_per_token = M` limits each token to M
// domains (DeepSeek-V3's node-limited routing). Returns the number of domains per EP group;
// InputError when some EP group does not split evenly into whole domains.
int expert_groups_for_domains(const Placement& placement, int ep_size, int num_experts);

}  // namespace collbench::workload
