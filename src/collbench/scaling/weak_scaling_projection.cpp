// Weak-scaling projections: the calibration point of each group, the projected points at the
// requested rank counts with their prediction intervals, and the warning for far extrapolations
// (method: docs/report.md). The measured side of the report is in weak_scaling.cpp.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <set>

#include "collbench/scaling/weak_scaling_detail.hpp"

namespace collbench::scaling {

ProjectedInterval projected_interval(double pct_bound, const Interval& rel, double k,
                                     std::optional<double> efficiency) {
  ProjectedInterval out;
  const double low = pct_bound * std::max(0.0, 1.0 - k * (1.0 - rel.low));
  const double high = pct_bound * (1.0 + k * (rel.high - 1.0));
  out.unclipped_high = high;
  out.clipped = high > 100.0;
  out.pct_bound = Interval{std::min(low, 100.0), std::min(high, 100.0)};
  if (efficiency && pct_bound > 0.0) {
    const double scale = *efficiency / pct_bound;
    out.efficiency = Interval{out.pct_bound.low * scale, out.pct_bound.high * scale};
  }
  return out;
}

double interpolate_efficiency(int n_lo, double eff_lo, int n_hi, double eff_hi, int n) {
  if (n_hi <= n_lo) return eff_hi;
  const double t = std::log2(static_cast<double>(n) / n_lo) / std::log2(static_cast<double>(n_hi) / n_lo);
  return eff_lo + t * (eff_hi - eff_lo);
}

namespace weak_scaling_detail {

using record::CaseRecord;

namespace {

std::string group_label(const WeakScalingGroup& g) {
  return fmt::format("{} {} {} {}B/rank {} {} {}", g.collective, g.algo, g.dtype, g.bytes_per_rank, g.scope, g.backend,
                     g.in_place ? "in-place" : "out-of-place");
}

// What a projection of one group is calibrated on.
struct Calibration {
  const MeasuredPoint* point;       // the calibration point
  double eff;                       // its efficiency against the bound
  std::optional<Interval> rel_eff;  // relative interval, widened by the extrapolation
  int largest_measured;
  const CaseRecord* reference;  // N0, or null
};

void set_interval(ProjectedPoint& pp, const Calibration& cal) {
  if (!cal.rel_eff) {
    pp.notes.push_back("no prediction interval: the calibration point has fewer than two samples");
    return;
  }
  const ProjectedInterval iv = projected_interval(pp.pct_bound, *cal.rel_eff, pp.widening, pp.efficiency);
  pp.pct_bound_pi = iv.pct_bound;
  pp.pi = iv.efficiency;
  pp.interval_clipped = iv.clipped;
  if (iv.clipped) {
    pp.notes.push_back(
        fmt::format("prediction interval clipped at the bound: the widened calibration spread reached {:.1f}% of the "
                    "bound (% bound at most 100, E(N) at most bound_busbw(N) / busbw(N0))",
                    iv.unclipped_high));
  }
}

// The projection of group g to n ranks; nullopt (with a note) when the model has no bound there.
std::optional<ProjectedPoint> project_to(int n, WeakScalingGroup& g, const Calibration& cal, const Systems& systems,
                                         const WeakScalingOptions& opt, std::vector<Far>& far) {
  const MeasuredPoint& lm = *cal.point;
  ProjectedPoint pp;
  pp.num_ranks = n;
  pp.system = systems.projection->name;
  const int ranks_per_domain = *std::max_element(lm.domain_sizes.begin(), lm.domain_sizes.end());
  pp.domain_sizes = projected_domain_sizes(n, ranks_per_domain, opt.packing);
  if (pp.domain_sizes.empty()) {
    g.notes.push_back(no_full_packing_note(n, ranks_per_domain));
    return std::nullopt;
  }
  pp.packing = packing_string_of(pp.domain_sizes);
  pp.packing_rule = std::string(to_string(opt.packing));
  pp.uneven = uneven(pp.domain_sizes);
  pp.notes.push_back(packing_note(pp, ranks_per_domain, opt.packing));
  std::string why;
  const auto est =
      estimate_for(*systems.projection, g.collective, g.algo, g.dtype, g.bytes_per_rank, g.scope, pp.domain_sizes, why);
  if (!est || est->bound_time_us <= 0.0) {
    g.notes.push_back(fmt::format("no projection at N={}: {}", n, est ? "the bound time is 0" : why));
    return std::nullopt;
  }
  pp.bound_time_us = est->bound_time_us;
  pp.bound_busbw_gbps = est->bound_busbw_gbps;
  pp.projected_time_us = est->bound_time_us / cal.eff;
  pp.projected_busbw_gbps = est->bound_busbw_gbps * cal.eff;
  pp.pct_bound = 100.0 * cal.eff;
  pp.extrapolation = static_cast<double>(n) / lm.num_ranks;
  pp.widening = 1.0 + std::log2(std::max(1.0, pp.extrapolation));
  if (cal.reference) {
    const CaseRecord& r0 = *cal.reference;
    pp.efficiency =
        opt.metric == Metric::busbw ? pp.projected_busbw_gbps / r0.busbw_gbps : r0.time_us->p50 / pp.projected_time_us;
  } else {
    pp.notes.push_back("no E(N): the group has no reference point");
  }
  set_interval(pp, cal);
  const double beyond_largest = static_cast<double>(n) / cal.largest_measured;
  if (beyond_largest > opt.extrapolation_warn_factor) {
    pp.extrapolation_warning = true;
    const std::string w = fmt::format(
        "{}: projecting to N={} is {:.3g}x the largest measured N={} (more than {:g}x): model only, the "
        "model's bound carries the projection, the measurements only calibrate it",
        group_label(g), n, beyond_largest, cal.largest_measured, opt.extrapolation_warn_factor);
    pp.notes.push_back(w);
    far.push_back({n, cal.largest_measured, beyond_largest});
  }
  return pp;
}

// The calibration point: the largest measured N, or --calibrate-at's (nullptr with a note when
// the group has no point there).
const MeasuredPoint* calibration_point(WeakScalingGroup& g, const WeakScalingOptions& opt) {
  if (!opt.calibrate_at) {
    // The largest N that is not an anomaly.
    const auto it = std::find_if(g.measured.rbegin(), g.measured.rend(), [](const auto& m) { return !m.anomaly; });
    if (it == g.measured.rend()) {
      g.notes.push_back("no projection: every measured point of this group is an anomaly (--anomaly-below)");
      return nullptr;
    }
    return &*it;
  }
  const auto at = std::find_if(g.measured.begin(), g.measured.end(),
                               [&](const auto& m) { return m.num_ranks == *opt.calibrate_at; });
  if (at == g.measured.end() || at->anomaly) {
    g.notes.push_back(fmt::format("no projection: --calibrate-at {}: {} in this group", *opt.calibrate_at,
                                  at == g.measured.end() ? fmt::format("no point at N={}", *opt.calibrate_at)
                                                         : std::string("that point is an anomaly (--anomaly-below)")));
    return nullptr;
  }
  return &*at;
}

// A measured point a projection may be calibrated on: its efficiency against the bound and the
// relative interval of that efficiency.
struct Anchor {
  const MeasuredPoint* point;
  double eff;
  std::optional<Interval> rel;
};

std::vector<Anchor> anchors_of(const WeakScalingGroup& g) {
  std::vector<Anchor> out;
  for (const auto& m : g.measured) {
    if (m.anomaly || !m.pct_bound || *m.pct_bound <= 0.0) continue;
    const double eff = *m.pct_bound / 100.0;
    std::optional<Interval> rel;
    if (m.pct_bound_ci) rel = Interval{m.pct_bound_ci->low / 100.0 / eff, m.pct_bound_ci->high / 100.0 / eff};
    out.push_back({&m, eff, rel});
  }
  return out;
}

// The calibration of a projection to N at or below the largest anchor: between two measured
// points, their efficiencies interpolated linearly in log2 N (interpolate_efficiency); below the
// smallest, the smallest's (nothing is extrapolated downwards). Beyond the largest the caller
// keeps the largest's.
Calibration calibration_within(int n, const std::vector<Anchor>& anchors, const Calibration& largest,
                               std::string& note) {
  Calibration cal = largest;
  const auto above =
      std::find_if(anchors.begin(), anchors.end(), [n](const Anchor& a) { return a.point->num_ranks > n; });
  if (above == anchors.begin()) {
    cal.point = above->point;
    cal.eff = above->eff;
    cal.rel_eff = above->rel;
    note = fmt::format(
        "below the smallest measured N={}: its efficiency {:.3f} of the bound is carried down (no "
        "extrapolation below the measured range)",
        above->point->num_ranks, above->eff);
    return cal;
  }
  const Anchor& lo = *(above - 1);
  const Anchor& hi = *above;
  cal.point = hi.point;
  cal.eff = interpolate_efficiency(lo.point->num_ranks, lo.eff, hi.point->num_ranks, hi.eff, n);
  cal.rel_eff.reset();
  if (lo.rel && hi.rel) {
    cal.rel_eff = Interval{std::min(lo.rel->low, hi.rel->low), std::max(lo.rel->high, hi.rel->high)};
  }
  note = fmt::format(
      "interpolated between measured N={} ({:.3f} of the bound) and N={} ({:.3f}), linear in log2 N: "
      "{:.3f}",
      lo.point->num_ranks, lo.eff, hi.point->num_ranks, hi.eff, cal.eff);
  return cal;
}

}  // namespace

void add_projections(WeakScalingGroup& g, const CaseRecord* reference, const WeakScalingReport& rep,
                     const Systems& systems, const WeakScalingOptions& opt, std::vector<Far>& far) {
  const int largest_measured = g.measured.back().num_ranks;
  const MeasuredPoint* at = calibration_point(g, opt);
  if (at == nullptr) return;
  const auto& lm = *at;
  g.calibration_ranks = lm.num_ranks;
  if (lm.pct_bound) {
    g.calibration_efficiency = *lm.pct_bound / 100.0;
    if (lm.pct_bound_ci) g.calibration_ci = Interval{lm.pct_bound_ci->low / 100.0, lm.pct_bound_ci->high / 100.0};
  }
  std::vector<int> wanted;
  for (int n : rep.requested_ranks) {
    const bool have =
        std::any_of(g.measured.begin(), g.measured.end(), [n](const auto& m) { return m.num_ranks == n; });
    if (opt.calibrate_at ? n > lm.num_ranks : !have && n > 0) wanted.push_back(n);
  }
  if (!systems.projection || wanted.empty()) return;
  if (!g.calibration_efficiency) {
    g.notes.push_back(fmt::format("no projection: no bound at the calibration point N={} to calibrate on ({})",
                                  lm.num_ranks,
                                  systems.bounds ? "the model does not cover this case"
                                                 : "the records carry no model and no --system was given"));
    return;
  }
  Calibration cal{&lm, *g.calibration_efficiency, std::nullopt, largest_measured, reference};
  if (g.calibration_ci) cal.rel_eff = Interval{g.calibration_ci->low / cal.eff, g.calibration_ci->high / cal.eff};
  const std::vector<Anchor> anchors = anchors_of(g);
  for (int n : wanted) {
    // Within the measured range (and without --calibrate-at) the neighbouring points calibrate N.
    std::string method = "extrapolated from the largest measured N";
    std::string note;
    Calibration use = cal;
    if (!opt.calibrate_at && n < lm.num_ranks && !anchors.empty()) {
      use = calibration_within(n, anchors, cal, note);
      method = note.starts_with("interpolated") ? "interpolated" : "nearest measured";
    } else if (opt.calibrate_at) {
      method = fmt::format("calibrated at N={} (--calibrate-at)", lm.num_ranks);
    }
    if (auto pp = project_to(n, g, use, systems, opt, far)) {
      pp->method = method;
      if (!note.empty()) pp->notes.push_back(note);
      g.projected.push_back(std::move(*pp));
    }
  }
}

// One warning for the report (each projected point also carries its own note and flag).
void warn_far_projections(WeakScalingReport& rep, const std::vector<Far>& far, const WeakScalingOptions& opt) {
  if (far.empty()) return;
  std::set<int> ns, largest;
  double worst = 0.0;
  for (const auto& f : far) {
    ns.insert(f.n);
    largest.insert(f.largest);
    worst = std::max(worst, f.factor);
  }
  rep.warnings.push_back(fmt::format(
      "projections to N={} extrapolate more than {:g}x beyond the largest measured N ({}; up to {:.3g}x, {} "
      "projected point(s)): the model's bound carries them, the measurements only calibrate it",
      fmt::join(ns, ", "), opt.extrapolation_warn_factor, fmt::join(largest, ", "), worst, far.size()));
}

}  // namespace weak_scaling_detail
}  // namespace collbench::scaling
