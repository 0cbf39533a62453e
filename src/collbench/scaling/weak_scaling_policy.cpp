// The weak-scaling report's policies: how projected points are packed into domains (--packing),
// which measured points are anomalies (--anomaly-below) and the reference point of E(N) (--base).
#include <fmt/format.h>

#include <algorithm>

#include "collbench/core/error.hpp"
#include "collbench/core/names.hpp"
#include "collbench/core/placement.hpp"
#include "collbench/model/estimate.hpp"
#include "collbench/scaling/weak_scaling_detail.hpp"

namespace collbench::scaling {

Packing parse_packing(std::string_view name) {
  if (name == "full") return Packing::full;
  if (name == "even") return Packing::even;
  if (name == "partial") return Packing::partial;
  throw InputError(unknown_name_message("--packing", name, {"full", "even", "partial"}));
}

std::string_view to_string(Packing p) {
  switch (p) {
    case Packing::full:
      return "full";
    case Packing::even:
      return "even";
    case Packing::partial:
      return "partial";
  }
  return "full";
}

std::vector<int> projected_domain_sizes(int n, int m, Packing packing) {
  if (n <= 0 || m <= 0) return {};
  if (packing == Packing::partial) return placement_from_ranks_per_domain(n, m).domain_sizes;
  if (packing == Packing::full && n % m != 0) return {};
  // even: the fewest equal domains of at most m ranks (N/D for the smallest D >= ceil(N/m) that
  // divides N), as long as they keep at least half of m. Domains of different sizes would shrink
  // NCCL's NVLS team to their gcd (1,024 as 4x69+11x68: a team of 1 and half the NVLS-tree
  // bound), an artefact of the spread; only when no such equal split exists are the sizes spread
  // to differ by one.
  const int fewest = (n + m - 1) / m;
  for (int domains = fewest; n / domains >= (m + 1) / 2; ++domains) {
    if (n % domains == 0) return std::vector<int>(static_cast<std::size_t>(domains), n / domains);
  }
  std::vector<int> sizes(static_cast<std::size_t>(fewest), n / fewest);
  for (int d = 0; d < n % fewest; ++d) ++sizes[static_cast<std::size_t>(d)];
  return sizes;
}

namespace weak_scaling_detail {

std::string packing_string_of(const std::vector<int>& sizes) {
  Placement p;
  p.domain_sizes = sizes;
  return model::packing_string(p);
}

bool uneven(const std::vector<int>& sizes) {
  return !sizes.empty() &&
         *std::min_element(sizes.begin(), sizes.end()) != *std::max_element(sizes.begin(), sizes.end());
}

std::string packing_note(const ProjectedPoint& pp, int m, Packing packing) {
  const int smallest = *std::min_element(pp.domain_sizes.begin(), pp.domain_sizes.end());
  switch (packing) {
    case Packing::full:
      return fmt::format("packing {}: whole domains of {} ranks (--packing full)", pp.packing, m);
    case Packing::even:
      return fmt::format("packing {}: {} ranks spread evenly over {} domains of at most {} (--packing even)",
                         pp.packing, pp.num_ranks, pp.domain_sizes.size(), m);
    case Packing::partial:
      if (!pp.uneven) return fmt::format("packing {}: whole domains of {} ranks (--packing partial)", pp.packing, m);
      return fmt::format(
          "packing {}: whole domains of {} and a partial last domain of {} (--packing partial); its {} ranks' NICs "
          "carry the largest off-domain share, so the bound is lower than on whole domains",
          pp.packing, m, smallest, smallest);
  }
  return {};
}

std::string no_full_packing_note(int n, int m) {
  const int below = n / m * m;
  const int above = below + m;
  return fmt::format(
      "no projection at N={}: {} ranks do not fill domains of {} (whole domains: N={}{}); pass --packing even ({}) or "
      "--packing partial ({})",
      n, n, m, below > 0 ? fmt::format("{} or ", below) : "", above,
      packing_string_of(projected_domain_sizes(n, m, Packing::even)),
      packing_string_of(projected_domain_sizes(n, m, Packing::partial)));
}

void check_anomaly_option(const WeakScalingOptions& opt) {
  if (opt.anomaly_below_pct && (*opt.anomaly_below_pct < 0.0 || *opt.anomaly_below_pct > 100.0)) {
    throw InputError(fmt::format("--anomaly-below {:g}: expected a percentage of the bound from 0 (off) to 100",
                                 *opt.anomaly_below_pct));
  }
}

double anomaly_threshold(const WeakScalingOptions& opt, const record::CaseRecord& r) {
  if (opt.anomaly_below_pct) return *opt.anomaly_below_pct;
  return r.backend == "mpi" ? 0.0 : kDefaultAnomalyBelowPct;
}

void flag_anomaly(MeasuredPoint& m, double threshold) {
  if (threshold <= 0.0 || !m.pct_bound || *m.pct_bound >= threshold) return;
  // The bound has no latency term: a latency-bound size is far below it by nature. It is an
  // anomaly only when it is as far below the expected value (which adds the latencies) too.
  if (m.pct_expected && *m.pct_expected >= threshold) return;
  m.anomaly = true;
  m.notes.push_back(fmt::format(
      "anomaly: {:.1f}% of the bound{}, below the {:g}% threshold (--anomaly-below): left out of projection "
      "calibration; a point this far below its bound points at the fabric or the run (collbench locate)",
      *m.pct_bound, m.pct_expected ? fmt::format(" and {:.1f}% of the expected value", *m.pct_expected) : "",
      threshold));
}

// Measurements faster than their bound: the profile (or its calibration) is wrong for them.
void warn_beyond_bound(WeakScalingReport& rep) {
  std::vector<std::string> beyond;
  for (const auto& g : rep.groups) {
    for (const auto& m : g.measured) {
      if (m.pct_bound && *m.pct_bound > 100.0) {
        beyond.push_back(
            fmt::format("{} {} B/rank at N={} ({:.0f}%)", g.collective, g.bytes_per_rank, m.num_ranks, *m.pct_bound));
      }
    }
  }
  if (beyond.empty()) return;
  rep.warnings.push_back(fmt::format(
      "{} measured point(s) beat their analytic bound (% bound > 100): {}{}; the system profile does not describe "
      "this machine (recalibrate cpu-local on a quiet machine, or check --system)",
      beyond.size(),
      fmt::join(beyond.begin(), beyond.begin() + static_cast<std::ptrdiff_t>(std::min<std::size_t>(beyond.size(), 5)),
                "; "),
      beyond.size() > 5 ? ", ..." : ""));
}

void warn_anomalies(WeakScalingReport& rep) {
  std::vector<std::string> found;
  for (const auto& g : rep.groups) {
    for (const auto& m : g.measured) {
      if (m.anomaly)
        found.push_back(fmt::format("{} {} B/rank at N={} ({:.1f}%)", g.collective, g.bytes_per_rank, m.num_ranks,
                                    m.pct_bound.value_or(0.0)));
    }
  }
  if (found.empty()) return;
  rep.warnings.push_back(fmt::format(
      "{} measured point(s) below {:g}% of their bound are flagged as anomalies and left out of calibration: {}{}",
      found.size(), rep.anomaly_below_pct.value_or(kDefaultAnomalyBelowPct),
      fmt::join(found.begin(), found.begin() + static_cast<std::ptrdiff_t>(std::min<std::size_t>(found.size(), 5)),
                "; "),
      found.size() > 5 ? ", ..." : ""));
}

std::optional<std::size_t> base_index(const std::vector<int>& ranks, int base) {
  const auto it = std::find(ranks.begin(), ranks.end(), base);
  if (it == ranks.end()) return std::nullopt;
  return static_cast<std::size_t>(it - ranks.begin());
}

void check_base_found(const WeakScalingReport& rep) {
  if (!rep.base) return;
  std::vector<int> measured;
  for (const auto& g : rep.groups) {
    if (g.reference_ranks == *rep.base) return;
    for (const auto& m : g.measured) measured.push_back(m.num_ranks);
  }
  std::sort(measured.begin(), measured.end());
  measured.erase(std::unique(measured.begin(), measured.end()), measured.end());
  throw InputError(fmt::format("--base {}: no group has a measured point at N={} with a positive {}; measured N: {}",
                               *rep.base, *rep.base, to_string(rep.metric), fmt::join(measured, ", ")));
}

}  // namespace weak_scaling_detail
}  // namespace collbench::scaling
