// Load statistics and placement-level views of counts matrices.
#include "collbench/workload/counts.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <numeric>

#include "collbench/core/error.hpp"

namespace collbench::workload {

double gini(std::span<const double> loads) {
  const auto n = loads.size();
  if (n == 0) return 0.0;
  std::vector<double> sorted(loads.begin(), loads.end());
  std::sort(sorted.begin(), sorted.end());
  double sum = 0.0;
  double weighted = 0.0;
  for (std::size_t i = 0; i < n; ++i) {
    sum += sorted[i];
    weighted += static_cast<double>(i + 1) * sorted[i];
  }
  if (sum <= 0.0) return 0.0;
  const auto nd = static_cast<double>(n);
  return 2.0 * weighted / (nd * sum) - (nd + 1.0) / nd;
}

LoadStats load_stats(std::span<const std::int64_t> loads) {
  LoadStats s;
  if (loads.empty()) return s;
  std::int64_t total = 0;
  for (std::size_t r = 0; r < loads.size(); ++r) {
    total += loads[r];
    if (s.hottest_rank_idx < 0 || loads[r] > s.max_rows) {
      s.max_rows = loads[r];
      s.hottest_rank_idx = static_cast<int>(r);
    }
  }
  s.mean_rows = static_cast<double>(total) / static_cast<double>(loads.size());
  s.imbalance = s.mean_rows > 0.0 ? static_cast<double>(s.max_rows) / s.mean_rows : 1.0;
  std::vector<double> as_double(loads.begin(), loads.end());
  s.gini = gini(as_double);
  return s;
}

namespace {

void check_ranks(const CountsMatrix& m, const Placement& placement) {
  if (placement.num_ranks() != m.num_ranks) {
    throw InputError(
        fmt::format("counts matrix has {} ranks but the placement {}", m.num_ranks, placement.num_ranks()));
  }
}

std::string sizes_text(const std::vector<int>& sizes) {
  std::vector<std::string> parts;
  for (const int s : sizes) parts.push_back(std::to_string(s));
  return join(parts, ",");
}

}  // namespace

CountsMatrix domain_counts(const CountsMatrix& ranks, const Placement& placement) {
  check_ranks(ranks, placement);
  CountsMatrix out;
  out.num_ranks = placement.num_domains();
  out.rows.assign(static_cast<std::size_t>(out.num_ranks) * out.num_ranks, 0);
  std::vector<int> domain(static_cast<std::size_t>(ranks.num_ranks));
  for (int r = 0; r < ranks.num_ranks; ++r) domain[r] = placement.domain_of(r);
  for (int s = 0; s < ranks.num_ranks; ++s) {
    for (int d = 0; d < ranks.num_ranks; ++d) {
      out.rows[static_cast<std::size_t>(domain[s]) * out.num_ranks + domain[d]] += ranks.at(s, d);
    }
  }
  return out;
}

LinkClassRows link_class_rows(const CountsMatrix& ranks, const Placement& placement) {
  check_ranks(ranks, placement);
  const auto n = static_cast<std::size_t>(ranks.num_ranks);
  LinkClassRows c;
  for (auto* v :
       {&c.send_self, &c.send_in_domain, &c.send_off_domain, &c.recv_self, &c.recv_in_domain, &c.recv_off_domain}) {
    v->assign(n, 0);
  }
  std::vector<int> domain(n);
  for (int r = 0; r < ranks.num_ranks; ++r) domain[r] = placement.domain_of(r);
  for (int s = 0; s < ranks.num_ranks; ++s) {
    for (int d = 0; d < ranks.num_ranks; ++d) {
      const std::int64_t rows = ranks.at(s, d);
      if (rows == 0) continue;
      if (s == d) {
        c.send_self[s] += rows;
        c.recv_self[d] += rows;
      } else if (domain[s] == domain[d]) {
        c.send_in_domain[s] += rows;
        c.recv_in_domain[d] += rows;
      } else {
        c.send_off_domain[s] += rows;
        c.recv_off_domain[d] += rows;
      }
    }
  }
  return c;
}

int expert_groups_for_domains(const Placement& placement, int ep_size, int num_experts) {
  const int n = placement.num_ranks();
  if (ep_size < 1 || n % ep_size != 0) {
    throw InputError(fmt::format("{} ranks do not form whole EP groups of {}", n, ep_size));
  }
  int domains_per_group = -1;
  for (int first = 0; first < n; first += ep_size) {
    // Walk the EP group's ranks; each domain must contribute the same contiguous share.
    std::vector<int> sizes;
    int current = -1;
    for (int r = first; r < first + ep_size; ++r) {
      const int d = placement.domain_of(r);
      if (d != current) {
        sizes.push_back(0);
        current = d;
      }
      ++sizes.back();
    }
    const bool even = std::all_of(sizes.begin(), sizes.end(), [&](int s) { return s == sizes.front(); });
    const int count = static_cast<int>(sizes.size());
    if (!even || (domains_per_group >= 0 && count != domains_per_group) || num_experts % count != 0) {
      throw InputError(
          fmt::format("EP group of ranks [{}, {}) does not split into equal whole domains (domain sizes {}); "
                      "expert groups cannot follow domains",
                      first, first + ep_size, sizes_text(placement.domain_sizes)));
    }
    domains_per_group = count;
  }
  return domains_per_group;
}

}  // namespace collbench::workload
