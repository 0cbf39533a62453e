// Weak-scaling analysis: grouping across rank counts, E(N) with bootstrap intervals, % of bound
// and stragglers (method: docs/report.md). The model projections with their prediction intervals
// are in weak_scaling_projection.cpp.
#include "collbench/scaling/weak_scaling.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <functional>
#include <map>
#include <tuple>

#include "collbench/core/error.hpp"
#include "collbench/core/names.hpp"
#include "collbench/model/published.hpp"
#include "collbench/record/nccltests_convert.hpp"
#include "collbench/scaling/weak_scaling_detail.hpp"
#include "collbench/stats/median_bootstrap.hpp"
#include "collbench/stats/summary.hpp"

namespace collbench::scaling {

using record::CaseRecord;
using weak_scaling_detail::measured;
using weak_scaling_detail::resolve_systems;
using weak_scaling_detail::Systems;
namespace wsd = weak_scaling_detail;

// ---- options -----------------------------------------------------------------------------------

Metric parse_metric(std::string_view name) {
  if (name == "busbw") return Metric::busbw;
  if (name == "time") return Metric::time;
  throw InputError(unknown_name_message("--metric", name, {"busbw", "time"}));
}

std::string_view to_string(Metric m) {
  return m == Metric::busbw ? "busbw" : "time";
}

std::string_view efficiency_definition(Metric m) {
  return m == Metric::busbw ? "per-GPU busbw(N) / busbw(N0)"
                            : "p50(N0) / p50(N) (per-GPU throughput at a fixed size per rank)";
}

// ---- building the report -----------------------------------------------------------------------

namespace {

struct Entry {
  const CaseRecord* rec;
  const record::InputFile* file;
  int line;
};

using GroupKey = std::tuple<std::string, std::string, std::string, std::uint64_t, std::string, std::string, std::string,
                            std::string, bool, std::string>;

// Overlap cases (docs/overlap.md) group by their compute load, apart from the plain cases.
std::string overlap_label(const CaseRecord& r) {
  if (!r.overlap.is_object()) return {};
  std::string label;
  if (r.overlap.contains("compute") && r.overlap["compute"].contains("spec") &&
      r.overlap["compute"]["spec"].is_string()) {
    label = r.overlap["compute"]["spec"].get<std::string>();
  }
  if (r.overlap.contains("pipeline") && r.overlap["pipeline"].is_object() && r.overlap["pipeline"].contains("chunks")) {
    label += fmt::format(", {} chunks", r.overlap["pipeline"]["chunks"].get<int>());
  }
  return label.empty() ? std::string("overlap") : label;
}

GroupKey key_of(const CaseRecord& r) {
  return {r.collective, r.algo_requested,      r.dtype,    r.bytes,         r.scope, r.backend,
          r.timing,     r.redop.value_or("-"), r.in_place, overlap_label(r)};
}

std::optional<double> overlap_number(const CaseRecord& r, const char* key) {
  if (!r.overlap.is_object() || !r.overlap.contains(key) || !r.overlap[key].is_number()) return std::nullopt;
  return r.overlap[key].get<double>();
}

void set_title(WeakScalingReport& rep, const Systems& systems) {
  rep.measured_system = systems.measured;
  rep.projection_system = systems.projection ? std::optional<std::string>(systems.projection->name) : std::nullopt;
  rep.cross_system = systems.cross;
  rep.projection_status = systems.status;
  if (systems.cross) {
    rep.title = fmt::format("Weak scaling measured on {}, projected onto {} (cross-system projection, --project-onto)",
                            systems.measured.value_or("an unknown system"), systems.projection->name);
  } else if (systems.measured) {
    rep.title = fmt::format("Weak scaling on {}", *systems.measured);
  } else {
    rep.title = "Weak scaling (system unknown)";
  }
  if (!systems.measured_from_records && systems.measured) {
    rep.notes.push_back(
        fmt::format("the records name no system; --system {} is taken as the system they were "
                    "measured on (bounds of measured points are computed from its profile)",
                    *systems.measured));
  }
}

// Groups measured cases that share everything but the rank count (and placement).
std::vector<std::vector<Entry>> group_cases(const std::vector<record::InputFile>& files, WeakScalingReport& rep) {
  std::map<GroupKey, std::size_t> index_of;
  std::vector<std::vector<Entry>> members;
  std::map<std::string, std::size_t> left_out;
  for (const auto& f : files) {
    for (std::size_t i = 0; i < f.cases.size(); ++i) {
      const auto& r = f.cases[i];
      if (!measured(r)) {
        ++left_out[r.status == "ok" ? std::string("ok but without timing") : r.status];
        continue;
      }
      const auto [it, inserted] = index_of.emplace(key_of(r), members.size());
      if (inserted) members.emplace_back();
      members[it->second].push_back(Entry{&r, &f, f.case_lines[i]});
    }
  }
  for (const auto& [status, n] : left_out) rep.notes.push_back(fmt::format("{} case(s) left out: {}", n, status));
  if (members.empty()) {
    throw InputError(
        fmt::format("nothing to report: no case with status ok and timing statistics in {}", join(rep.inputs)));
  }
  return members;
}

WeakScalingGroup group_of(const CaseRecord& first) {
  WeakScalingGroup g;
  g.collective = first.collective;
  g.algo = first.algo_requested;
  g.dtype = first.dtype;
  g.scope = first.scope;
  g.backend = first.backend;
  g.timing = first.timing;
  g.redop = first.redop;
  g.in_place = first.in_place;
  g.bytes_per_rank = first.bytes;
  g.overlap = overlap_label(first);
  return g;
}

// One record per rank count: the first in input order.
std::vector<Entry> one_per_rank_count(const std::vector<Entry>& entries, WeakScalingGroup& g) {
  std::vector<Entry> points;
  for (const auto& e : entries) {
    if (!points.empty() && points.back().rec->num_ranks == e.rec->num_ranks) {
      g.notes.push_back(fmt::format("N={}: {}:{} repeats {}:{}; the first is used", e.rec->num_ranks, e.file->path,
                                    e.line, points.back().file->path, points.back().line));
      continue;
    }
    points.push_back(e);
  }
  return points;
}

// The bound and expected value: the record's model, else the model of --system's profile.
void set_bound(MeasuredPoint& m, const CaseRecord& r, const Systems& systems) {
  if (r.model) {
    m.bound_time_us = r.model->bound_time_us;
    m.bound_busbw_gbps = r.model->bound_busbw_gbps;
    m.expected_time_us = r.model->expected_time_us;
    m.expected_busbw_gbps = r.model->expected_busbw_gbps;
    m.bound_source = fmt::format("record (model.system {})", r.model->system);
  } else if (systems.bounds) {
    std::string why;
    if (auto est = wsd::estimate_for(*systems.bounds, r.collective, r.algo_requested, r.dtype, r.bytes, r.scope,
                                     r.domain_sizes, why)) {
      m.bound_time_us = est->bound_time_us;
      m.bound_busbw_gbps = est->bound_busbw_gbps;
      m.expected_time_us = est->expected_time_us;
      m.expected_busbw_gbps = est->expected_busbw_gbps;
      m.bound_source =
          fmt::format("model: profile {} (the record has no model; computed by the report)", systems.bounds->name);
    } else if (record::placement_unknown(r)) {
      m.notes.push_back(
          fmt::format("no bound: the placement of this imported record is unknown (one domain of {} ranks); give "
                      "--ranks-per-domain M (or --system with a domain size) to import or report ({})",
                      r.num_ranks, why));
    } else {
      m.notes.push_back(fmt::format("no bound: {}", why));
    }
  }
}

// The slowest rank: the highest mean time per operation (a single worst iteration is mostly
// scheduler noise; the mean is what the rank pays every step).
void set_slowest_rank(MeasuredPoint& m, const CaseRecord& r, const record::InputFile& file) {
  if (!r.per_rank || r.per_rank->mean_us.size() <= 1) return;
  const auto& mx = r.per_rank->mean_us;
  const auto it = std::max_element(mx.begin(), mx.end());
  m.slowest_rank = static_cast<int>(it - mx.begin());
  m.slowest_rank_mean_us = *it;
  std::vector<double> sorted(mx.begin(), mx.end());
  std::sort(sorted.begin(), sorted.end());
  m.median_rank_mean_us = stats::percentile_sorted(sorted, 0.5);
  if (file.header) {
    for (const auto& h : file.header->hosts) {
      if (h.rank == *m.slowest_rank) m.slowest_host = h.host;
    }
  }
}

MeasuredPoint measured_fields(const Entry& e) {
  const CaseRecord& r = *e.rec;
  MeasuredPoint m;
  m.num_ranks = r.num_ranks;
  m.domain_sizes = r.domain_sizes;
  m.num_domains = r.num_domains;
  m.packing = wsd::packing_string_of(r.domain_sizes);
  m.uneven = wsd::uneven(r.domain_sizes);
  m.file = e.file->path;
  m.line = e.line;
  m.run_id = r.run_id;
  m.algo_used = r.algo_used.value_or("");
  m.samples = r.samples_us.size();
  m.p50_us = r.time_us->p50;
  m.p99_us = r.time_us->p99;
  m.algbw_gbps = r.algbw_gbps;
  m.busbw_gbps = r.busbw_gbps;
  m.t_comm_us = overlap_number(r, "t_comm_us");
  m.t_compute_us = overlap_number(r, "t_compute_us");
  m.t_both_us = overlap_number(r, "t_both_us");
  m.exposed_us = overlap_number(r, "exposed_us");
  m.overlap_efficiency = overlap_number(r, "efficiency");
  if (r.overlap.is_object()) {
    m.overlap = r.overlap;
  }
  if (m.uneven) {
    m.notes.push_back(
        fmt::format("uneven packing {}: the smallest domain sets the off-domain share of its ranks", m.packing));
  }
  m.simulated = r.simulated;
  if (const auto it = r.extra.find("progress"); it != r.extra.end() && it->is_string()) m.progress = *it;
  if (r.extra.contains("source") && r.extra["source"] == "nccl-tests") {
    m.notes.push_back(record::placement_unknown(r)
                          ? "imported from nccl-tests: placement unknown, one time per size (no interval)"
                          : "imported from nccl-tests: one time per size (no interval); " +
                                r.extra.value("placement_note", std::string()));
  }
  return m;
}

// A measured point: times, bandwidths, bound, stragglers.
MeasuredPoint measured_point(const Entry& e, const std::vector<double>& samples, const Systems& systems,
                             const WeakScalingOptions& opt, std::size_t gi) {
  const CaseRecord& r = *e.rec;
  MeasuredPoint m = measured_fields(e);
  set_bound(m, r, systems);
  if (m.bound_time_us && *m.bound_time_us > 0.0) {
    m.pct_bound = 100.0 * *m.bound_time_us / m.p50_us;
    if (const auto ci =
            bootstrap_median_ci(samples, opt.confidence, opt.resamples,
                                stats::mix_seed(opt.seed, gi, static_cast<std::uint64_t>(m.num_ranks), 1))) {
      if (ci->low > 0.0)
        m.pct_bound_ci = Interval{100.0 * *m.bound_time_us / ci->high, 100.0 * *m.bound_time_us / ci->low};
    }
  }
  if (m.expected_time_us && *m.expected_time_us > 0.0) m.pct_expected = 100.0 * *m.expected_time_us / m.p50_us;
  wsd::flag_anomaly(m, wsd::anomaly_threshold(opt, r));
  set_slowest_rank(m, r, *e.file);
  return m;
}

// The points of one group with their samples, and the reference point of E(N).
struct GroupPoints {
  std::vector<Entry> points;
  std::vector<std::vector<double>> samples;
  std::optional<std::size_t> ref;
};

// The reference point of E(N): --base's N, else the smallest N whose metric is positive (busbw is
// 0 at N = 1); nullopt with a note when there is none.
std::optional<std::size_t> reference_point(WeakScalingGroup& g, const GroupPoints& gp, const WeakScalingOptions& opt,
                                           const std::function<double(std::size_t)>& metric_of) {
  const auto& points = gp.points;
  if (opt.base) {
    std::vector<int> ranks;
    for (const auto& e : points) ranks.push_back(e.rec->num_ranks);
    const auto at = wsd::base_index(ranks, *opt.base);
    if (!at || metric_of(*at) <= 0.0) {
      g.notes.push_back(fmt::format("no E(N): --base {}: {} in this group", *opt.base,
                                    at ? fmt::format("{} is 0 at N={}", to_string(opt.metric), *opt.base)
                                       : fmt::format("no point at N={}", *opt.base)));
      return std::nullopt;
    }
    return at;
  }
  for (std::size_t p = 0; p < points.size(); ++p) {
    if (metric_of(p) > 0.0) return p;
    g.notes.push_back(
        fmt::format("N={}: {} is 0 (the busbw factor is 0 on one rank), so it cannot be the "
                    "reference of E(N)",
                    points[p].rec->num_ranks, to_string(opt.metric)));
  }
  return std::nullopt;
}

// Whether point p's E(N) may be computed against the reference point: their progress modes
// (spin, yield) agree, either is unknown, or --allow-mixed-progress. A busy-polling rank and a
// yielding one measure different things on shared cores (a yield point at N=4 beside a spin point
// at N=2 once read E(4) = 0.0025), so the mixed point is left out of E(N), as the gate leaves
// incomparable records out; the point, the group and a warning (stderr) say so (issue 37 item 10).
bool comparable_progress(WeakScalingGroup& g, std::size_t p, std::size_t ref, const WeakScalingOptions& opt,
                         std::vector<std::string>& warnings) {
  MeasuredPoint& m = g.measured[p];
  const MeasuredPoint& m0 = g.measured[ref];
  if (m.progress.empty() || m0.progress.empty() || m.progress == m0.progress) return true;
  const std::string what =
      fmt::format("progress {} at N={}, {} at the reference N0={}", m.progress, m.num_ranks, m0.progress, m0.num_ranks);
  if (opt.allow_mixed_progress) {
    m.notes.push_back(
        fmt::format("mixed progress modes ({}): E(N) kept (--allow-mixed-progress), but a spinning "
                    "and a yielding rank are not comparable",
                    what));
    warnings.push_back(fmt::format("{} {} B: mixed progress modes ({}); E(N={}) kept by --allow-mixed-progress",
                                   g.collective, g.bytes_per_rank, what, m.num_ranks));
    return true;
  }
  m.notes.push_back(
      fmt::format("no E(N): mixed progress modes ({}); measure every N with one --progress, or "
                  "pass --allow-mixed-progress to compare them anyway",
                  what));
  g.notes.push_back(fmt::format("N={} left out of E(N): mixed progress modes ({})", m.num_ranks, what));
  warnings.push_back(
      fmt::format("{} {} B: mixed progress modes ({}); N={} left out of E(N) (--allow-mixed-progress "
                  "keeps it)",
                  g.collective, g.bytes_per_rank, what, m.num_ranks));
  return false;
}

// E(N) against the reference point N0 (reference_point), for every point whose metric is positive.
void add_efficiency(WeakScalingGroup& g, GroupPoints& gp, const WeakScalingOptions& opt, std::size_t gi,
                    std::vector<std::string>& warnings) {
  const auto& points = gp.points;
  const std::function<double(std::size_t)> metric_of = [&](std::size_t p) {
    return opt.metric == Metric::busbw ? points[p].rec->busbw_gbps : 1.0 / points[p].rec->time_us->p50;
  };
  gp.ref = reference_point(g, gp, opt, metric_of);
  if (!gp.ref) return;
  const std::size_t ref = *gp.ref;
  g.reference_ranks = points[ref].rec->num_ranks;
  const CaseRecord& r0 = *points[ref].rec;
  for (std::size_t p = 0; p < points.size(); ++p) {
    if (metric_of(p) <= 0.0 || !comparable_progress(g, p, ref, opt, warnings)) continue;
    auto& m = g.measured[p];
    m.efficiency = metric_of(p) / metric_of(ref);
    if (p == ref) {
      m.efficiency_ci = Interval{1.0, 1.0};
      continue;
    }
    // E(N) = c x p50(N0) / p50(N); c is 1 for the time metric and the ratio of the busbw
    // factors and sizes for busbw (a constant of the two records, not of their timing).
    const double c = *m.efficiency * points[p].rec->time_us->p50 / r0.time_us->p50;
    if (const auto ci =
            bootstrap_median_ratio_ci(gp.samples[ref], gp.samples[p], opt.confidence, opt.resamples,
                                      stats::mix_seed(opt.seed, gi, static_cast<std::uint64_t>(m.num_ranks), 2))) {
      m.efficiency_ci = Interval{c * ci->low, c * ci->high};
    } else {
      m.notes.push_back("no interval for E(N): fewer than two samples");
    }
  }
}

// On a GPU projection profile: how far the model has been checked for this collective, at the
// largest N the group reaches (docs/model.md, "Validated range").
void add_validated_range(WeakScalingGroup& g, const Systems& systems) {
  if (systems.projection == nullptr || systems.projection->is_cpu() || g.measured.empty()) return;
  int largest = g.measured.back().num_ranks;
  for (const auto& p : g.projected) largest = std::max(largest, p.num_ranks);
  const model::PublishedPoints points = model::load_published_points(systems.projection->name);
  g.notes.push_back(fmt::format("validated range: {}",
                                model::checked_range_line(*systems.projection, points, g.collective, largest)));
}

WeakScalingGroup build_group(std::vector<Entry>& entries, std::size_t gi, WeakScalingReport& rep,
                             const Systems& systems, const WeakScalingOptions& opt, std::vector<wsd::Far>& far) {
  std::stable_sort(entries.begin(), entries.end(),
                   [](const Entry& a, const Entry& b) { return a.rec->num_ranks < b.rec->num_ranks; });
  WeakScalingGroup g = group_of(*entries.front().rec);
  GroupPoints gp;
  gp.points = one_per_rank_count(entries, g);
  for (const auto& e : gp.points) gp.samples.push_back(e.rec->samples_us);
  for (std::size_t p = 0; p < gp.points.size(); ++p) {
    g.measured.push_back(measured_point(gp.points[p], gp.samples[p], systems, opt, gi));
  }
  add_efficiency(g, gp, opt, gi, rep.warnings);
  wsd::add_projections(g, gp.ref ? gp.points[*gp.ref].rec : nullptr, rep, systems, opt, far);
  add_validated_range(g, systems);
  return g;
}

}  // namespace

WeakScalingReport build_weak_scaling(const std::vector<record::InputFile>& files, const WeakScalingOptions& opt) {
  stats::check_bootstrap_args(opt.confidence, opt.resamples);
  WeakScalingReport rep;
  rep.metric = opt.metric;
  rep.confidence = opt.confidence;
  rep.resamples = opt.resamples;
  rep.seed = opt.seed;
  rep.requested_ranks = opt.requested_ranks;
  std::sort(rep.requested_ranks.begin(), rep.requested_ranks.end());
  rep.requested_ranks.erase(std::unique(rep.requested_ranks.begin(), rep.requested_ranks.end()),
                            rep.requested_ranks.end());
  rep.extrapolation_warn_factor = opt.extrapolation_warn_factor;
  for (const auto& f : files) {
    rep.inputs.push_back(f.path);
    for (const auto& w : f.warnings) rep.warnings.push_back(w);
  }
  const Systems systems = resolve_systems(files, opt);
  set_title(rep, systems);
  rep.base = opt.base;
  rep.packing = opt.packing;
  wsd::check_anomaly_option(opt);
  rep.anomaly_below_pct = opt.anomaly_below_pct;
  std::vector<wsd::Far> far;
  auto members = group_cases(files, rep);
  for (std::size_t gi = 0; gi < members.size(); ++gi) {
    rep.groups.push_back(build_group(members[gi], gi, rep, systems, opt, far));
  }
  wsd::check_base_found(rep);
  wsd::warn_beyond_bound(rep);
  wsd::warn_anomalies(rep);
  wsd::warn_far_projections(rep, far, opt);
  return rep;
}

}  // namespace collbench::scaling
