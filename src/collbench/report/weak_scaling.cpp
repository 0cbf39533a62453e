// Weak-scaling analysis: grouping across rank counts, E(N) with bootstrap intervals, % of bound,
// stragglers, and model projections with prediction intervals (method: docs/report.md).
#include "collbench/report/weak_scaling.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <tuple>

#include "collbench/core/dtype.hpp"
#include "collbench/core/error.hpp"
#include "collbench/core/names.hpp"
#include "collbench/core/placement.hpp"
#include "collbench/model/estimate.hpp"
#include "collbench/stats/summary.hpp"

namespace collbench::report {

using record::CaseRecord;

// ---- bootstrap ---------------------------------------------------------------------------------

namespace {

// Draws built on mt19937_64's raw output only (its sequence is fixed by the standard), so that
// a seed gives the same intervals with every standard library; std::gamma_distribution and
// friends are implementation-defined.
double uniform_open01(std::mt19937_64& rng) {
  return (static_cast<double>(rng() >> 11) + 0.5) * 0x1.0p-53;  // in (0, 1)
}

double standard_normal(std::mt19937_64& rng) {  // Box-Muller
  const double u1 = uniform_open01(rng);
  const double u2 = uniform_open01(rng);
  return std::sqrt(-2.0 * std::log(u1)) * std::cos(6.283185307179586 * u2);
}

// Gamma(shape, 1) for shape >= 1 (Marsaglia and Tsang, ACM TOMS 26(3), 2000).
double gamma_draw(double shape, std::mt19937_64& rng) {
  const double d = shape - 1.0 / 3.0;
  const double c = 1.0 / std::sqrt(9.0 * d);
  for (;;) {
    const double x = standard_normal(rng);
    double v = 1.0 + c * x;
    if (v <= 0.0) continue;
    v = v * v * v;
    const double u = uniform_open01(rng);
    if (std::log(u) < 0.5 * x * x + d - d * v + d * std::log(v)) return d * v;
  }
}

double beta_draw(double a, double b, std::mt19937_64& rng) {
  const double x = gamma_draw(a, rng);
  const double y = gamma_draw(b, rng);
  return x / (x + y);
}

}  // namespace

double resampled_median(std::span<const double> sorted, std::mt19937_64& rng) {
  const std::size_t n = sorted.size();
  if (n == 1) return sorted[0];
  const auto index_of = [n](double u) {
    const auto i = static_cast<std::size_t>(std::floor(u * static_cast<double>(n)));
    return i < n ? i : n - 1;
  };
  const std::size_t k = (n + 1) / 2;  // 1-based rank of the (lower) median
  const double u_k = beta_draw(static_cast<double>(k), static_cast<double>(n - k + 1), rng);
  if (n % 2 == 1) return sorted[index_of(u_k)];
  // Even n: the sample median (numpy's, as stats::summarize uses) averages the k-th and
  // (k+1)-th values. Given U_(k) = u, U_(k+1) is the minimum of the n - k uniforms above u:
  // u + (1 - u) x Beta(1, n - k), and 1 - V^(1/b) ~ Beta(1, b) for V uniform.
  const double v = uniform_open01(rng);
  const double u_k1 = u_k + (1.0 - u_k) * (1.0 - std::pow(v, 1.0 / static_cast<double>(n - k)));
  return 0.5 * (sorted[index_of(u_k)] + sorted[index_of(u_k1)]);
}

namespace {

std::vector<double> sorted_copy(std::span<const double> v) {
  std::vector<double> s(v.begin(), v.end());
  std::sort(s.begin(), s.end());
  return s;
}

Interval percentile_interval(std::vector<double>& draws, double confidence) {
  std::sort(draws.begin(), draws.end());
  const double alpha = 1.0 - confidence;
  return Interval{stats::percentile_sorted(draws, alpha / 2.0), stats::percentile_sorted(draws, 1.0 - alpha / 2.0)};
}

void check_bootstrap_args(double confidence, int resamples) {
  if (!(confidence > 0.0 && confidence < 1.0))
    throw InputError(fmt::format("confidence {} must be in (0, 1)", confidence));
  if (resamples < 10) throw InputError(fmt::format("{} bootstrap resamples are too few (at least 10)", resamples));
}

// splitmix64: independent, reproducible seeds for each interval of a report.
std::uint64_t mix_seed(std::uint64_t seed, std::uint64_t a, std::uint64_t b, std::uint64_t c) {
  std::uint64_t z = seed;
  for (std::uint64_t v : {a, b, c}) {
    z += 0x9e3779b97f4a7c15ULL + v;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    z ^= z >> 31;
  }
  return z;
}

}  // namespace

std::optional<Interval> bootstrap_median_ci(std::span<const double> samples, double confidence, int resamples,
                                            std::uint64_t seed) {
  check_bootstrap_args(confidence, resamples);
  if (samples.size() < 2) return std::nullopt;
  const auto sorted = sorted_copy(samples);
  std::mt19937_64 rng(seed);
  std::vector<double> draws(static_cast<std::size_t>(resamples));
  for (auto& d : draws) d = resampled_median(sorted, rng);
  return percentile_interval(draws, confidence);
}

std::optional<Interval> bootstrap_median_ratio_ci(std::span<const double> numerator,
                                                  std::span<const double> denominator, double confidence, int resamples,
                                                  std::uint64_t seed) {
  check_bootstrap_args(confidence, resamples);
  if (numerator.size() < 2 || denominator.size() < 2) return std::nullopt;
  const auto num = sorted_copy(numerator);
  const auto den = sorted_copy(denominator);
  std::mt19937_64 rng(seed);
  std::vector<double> draws;
  draws.reserve(static_cast<std::size_t>(resamples));
  for (int i = 0; i < resamples; ++i) {
    const double a = resampled_median(num, rng);
    const double b = resampled_median(den, rng);
    if (b > 0.0) draws.push_back(a / b);
  }
  if (draws.size() < static_cast<std::size_t>(resamples) / 2) return std::nullopt;  // mostly zero times
  return percentile_interval(draws, confidence);
}

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

std::string weak_scaling_plot_prefix(std::size_t index) {
  return fmt::format("weak_scaling_{}", index);
}

// ---- building the report -----------------------------------------------------------------------

namespace {

struct Entry {
  const CaseRecord* rec;
  const InputFile* file;
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

bool measured(const CaseRecord& r) {
  return r.status == "ok" && r.time_us.has_value() && r.time_us->p50 > 0.0;
}

std::optional<std::string> header_system(const InputFile& f) {
  if (!f.header || !f.header->system.is_object()) return std::nullopt;
  const auto it = f.header->system.find("name");
  if (it == f.header->system.end() || !it->is_string()) return std::nullopt;
  return it->get<std::string>();
}

std::string packing_of(const std::vector<int>& sizes) {
  Placement p;
  p.domain_sizes = sizes;
  return model::packing_string(p);
}

bool uneven(const std::vector<int>& sizes) {
  return !sizes.empty() &&
         *std::min_element(sizes.begin(), sizes.end()) != *std::max_element(sizes.begin(), sizes.end());
}

// The model's estimate for a measured or projected case; nullopt with `why` filled otherwise.
std::optional<model::Estimate> estimate_for(const model::SystemProfile& profile, const std::string& collective,
                                            const std::string& algo, const std::string& dtype, std::uint64_t bytes,
                                            const std::string& scope, const std::vector<int>& domain_sizes,
                                            std::string& why) {
  try {
    model::CaseGeometry g;
    g.collective = collective;
    g.algo = algo;
    g.dtype = parse_dtype(dtype);
    g.bytes = bytes;
    int n = 0;
    for (int s : domain_sizes) n += s;
    g.placement = placement_from_sizes(n, domain_sizes);
    g.scope = parse_scope(scope);
    auto outcome = model::model_case(profile, g);
    if (!outcome.estimate) why = outcome.why_not.empty() ? "not modelled" : outcome.why_not;
    return outcome.estimate;
  } catch (const Error& e) {
    why = e.what();
    return std::nullopt;
  }
}

std::string group_label(const WeakScalingGroup& g) {
  return fmt::format("{} {} {} {}B/rank {} {} {}", g.collective, g.algo, g.dtype, g.bytes_per_rank, g.scope, g.backend,
                     g.in_place ? "in-place" : "out-of-place");
}

struct Systems {
  std::optional<std::string> measured;               // the system the records were measured on
  bool measured_from_records = false;                // named by records or run headers (not only --system)
  const model::SystemProfile* bounds = nullptr;      // profile for bounds of records without `model`
  const model::SystemProfile* projection = nullptr;  // profile for projections
  bool cross = false;
  std::string status;  // why there are no projections
};

Systems resolve_systems(const std::vector<InputFile>& files, const WeakScalingOptions& opt) {
  // Which system were the records measured on? Records' model.system first, run headers next.
  std::map<std::string, std::string> from_records;  // system -> where first seen
  std::map<std::string, std::string> from_headers;
  for (const auto& f : files) {
    for (std::size_t i = 0; i < f.cases.size(); ++i) {
      const auto& r = f.cases[i];
      if (r.model && measured(r)) from_records.emplace(r.model->system, fmt::format("{}:{}", f.path, f.case_lines[i]));
    }
    if (const auto s = header_system(f)) from_headers.emplace(*s, fmt::format("{}:{}", f.path, f.header_line));
  }
  const auto& found = from_records.empty() ? from_headers : from_records;
  if (found.size() > 1) {
    std::vector<std::string> list;
    for (const auto& [name, where] : found) list.push_back(fmt::format("'{}' ({})", name, where));
    throw InputError(
        fmt::format("the records were measured on several systems: {}; a weak-scaling report compares "
                    "rank counts on one system (report each system separately)",
                    join(list)));
  }
  Systems s;
  std::optional<std::string> recorded;
  std::string where;
  if (!found.empty()) {
    recorded = found.begin()->first;
    where = found.begin()->second;
  }
  const auto& sys = opt.system;
  const auto& onto = opt.project_onto;
  if (sys && recorded && sys->name != *recorded) {
    if (!onto) {
      throw InputError(fmt::format(
          "the records were measured on '{}' ({}) but --system names '{}'; projections onto another system are "
          "refused unless asked for explicitly: pass --project-onto {} (the report's title will say so), or "
          "--system {}",
          *recorded, where, sys->name, sys->name, *recorded));
    }
    throw InputError(
        fmt::format("--system '{}' contradicts the records, measured on '{}' ({}); with --project-onto, "
                    "--system names the system the records were measured on (or leave it out)",
                    sys->name, *recorded, where));
  }
  s.measured_from_records = recorded.has_value();
  s.measured = recorded ? recorded : (sys ? std::optional<std::string>(sys->name) : std::nullopt);
  if (sys) s.bounds = &*sys;
  if (!s.bounds && onto && s.measured && onto->name == *s.measured) s.bounds = &*onto;
  if (onto) {
    s.projection = &*onto;
    s.cross = !s.measured || onto->name != *s.measured;
  } else if (sys) {
    s.projection = &*sys;
  } else {
    s.status = recorded ? fmt::format(
                              "no projection: no system profile given (the records name '{}'; pass --system {} "
                              "to project with its profile)",
                              *recorded, *recorded)
                        : "no projection: no system profile given (pass --system NAME, the system the records were "
                          "measured on; `collbench model --list-systems` lists them)";
  }
  if (s.projection && opt.requested_ranks.empty()) s.status = "no projection: no rank counts requested (--ranks)";
  return s;
}

}  // namespace

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

WeakScalingReport build_weak_scaling(const std::vector<InputFile>& files, const WeakScalingOptions& opt) {
  check_bootstrap_args(opt.confidence, opt.resamples);
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
  struct Far {
    int n, largest;
    double factor;
  };
  std::vector<Far> far_projections;

  // Group measured cases that share everything but the rank count (and placement).
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

  for (std::size_t gi = 0; gi < members.size(); ++gi) {
    auto& entries = members[gi];
    std::stable_sort(entries.begin(), entries.end(),
                     [](const Entry& a, const Entry& b) { return a.rec->num_ranks < b.rec->num_ranks; });
    WeakScalingGroup g;
    const CaseRecord& first = *entries.front().rec;
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

    // One record per rank count: the first in input order.
    std::vector<Entry> points;
    for (const auto& e : entries) {
      if (!points.empty() && points.back().rec->num_ranks == e.rec->num_ranks) {
        g.notes.push_back(fmt::format("N={}: {}:{} repeats {}:{}; the first is used", e.rec->num_ranks, e.file->path,
                                      e.line, points.back().file->path, points.back().line));
        continue;
      }
      points.push_back(e);
    }
    std::vector<std::vector<double>> samples(points.size());
    for (std::size_t p = 0; p < points.size(); ++p) samples[p] = points[p].rec->samples_us;

    // Measured points: times, bandwidths, bound, stragglers.
    for (std::size_t p = 0; p < points.size(); ++p) {
      const CaseRecord& r = *points[p].rec;
      MeasuredPoint m;
      m.num_ranks = r.num_ranks;
      m.domain_sizes = r.domain_sizes;
      m.num_domains = r.num_domains;
      m.packing = packing_of(r.domain_sizes);
      m.uneven = uneven(r.domain_sizes);
      m.file = points[p].file->path;
      m.line = points[p].line;
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
      if (m.uneven) {
        m.notes.push_back(
            fmt::format("uneven packing {}: the smallest domain sets the off-domain share of its ranks", m.packing));
      }
      m.simulated = r.simulated;
      if (r.extra.contains("source") && r.extra["source"] == "nccl-tests") {
        m.notes.push_back("imported from nccl-tests: placement unknown, one time per size (no interval)");
      }
      if (r.model) {
        m.bound_time_us = r.model->bound_time_us;
        m.bound_busbw_gbps = r.model->bound_busbw_gbps;
        m.expected_time_us = r.model->expected_time_us;
        m.expected_busbw_gbps = r.model->expected_busbw_gbps;
        m.bound_source = fmt::format("record (model.system {})", r.model->system);
      } else if (systems.bounds) {
        std::string why;
        if (auto est = estimate_for(*systems.bounds, r.collective, r.algo_requested, r.dtype, r.bytes, r.scope,
                                    r.domain_sizes, why)) {
          m.bound_time_us = est->bound_time_us;
          m.bound_busbw_gbps = est->bound_busbw_gbps;
          m.expected_time_us = est->expected_time_us;
          m.expected_busbw_gbps = est->expected_busbw_gbps;
          m.bound_source =
              fmt::format("model: profile {} (the record has no model; computed by the report)", systems.bounds->name);
        } else {
          m.notes.push_back(fmt::format("no bound: {}", why));
        }
      }
      if (m.bound_time_us && *m.bound_time_us > 0.0) {
        m.pct_bound = 100.0 * *m.bound_time_us / m.p50_us;
        if (const auto ci = bootstrap_median_ci(samples[p], opt.confidence, opt.resamples,
                                                mix_seed(opt.seed, gi, static_cast<std::uint64_t>(m.num_ranks), 1))) {
          if (ci->low > 0.0)
            m.pct_bound_ci = Interval{100.0 * *m.bound_time_us / ci->high, 100.0 * *m.bound_time_us / ci->low};
        }
      }
      if (m.expected_time_us && *m.expected_time_us > 0.0) m.pct_expected = 100.0 * *m.expected_time_us / m.p50_us;
      // The slowest rank: the highest mean time per operation (a single worst iteration is
      // mostly scheduler noise; the mean is what the rank pays every step).
      if (r.per_rank && r.per_rank->mean_us.size() > 1) {
        const auto& mx = r.per_rank->mean_us;
        const auto it = std::max_element(mx.begin(), mx.end());
        m.slowest_rank = static_cast<int>(it - mx.begin());
        m.slowest_rank_mean_us = *it;
        auto sorted = sorted_copy(mx);
        m.median_rank_mean_us = stats::percentile_sorted(sorted, 0.5);
        if (points[p].file->header) {
          for (const auto& h : points[p].file->header->hosts) {
            if (h.rank == *m.slowest_rank) m.slowest_host = h.host;
          }
        }
      }
      g.measured.push_back(std::move(m));
    }

    // E(N) against the smallest N whose metric is positive (busbw is 0 at N = 1).
    const auto metric_of = [&](std::size_t p) {
      return opt.metric == Metric::busbw ? points[p].rec->busbw_gbps : 1.0 / points[p].rec->time_us->p50;
    };
    std::optional<std::size_t> ref;
    for (std::size_t p = 0; p < points.size(); ++p) {
      if (metric_of(p) > 0.0) {
        ref = p;
        break;
      }
      g.notes.push_back(
          fmt::format("N={}: {} is 0 (the busbw factor is 0 on one rank), so it cannot be the "
                      "reference of E(N)",
                      points[p].rec->num_ranks, to_string(opt.metric)));
    }
    if (ref) {
      g.reference_ranks = points[*ref].rec->num_ranks;
      const CaseRecord& r0 = *points[*ref].rec;
      for (std::size_t p = *ref; p < points.size(); ++p) {
        auto& m = g.measured[p];
        m.efficiency = metric_of(p) / metric_of(*ref);
        if (p == *ref) {
          m.efficiency_ci = Interval{1.0, 1.0};
          continue;
        }
        // E(N) = c x p50(N0) / p50(N); c is 1 for the time metric and the ratio of the busbw
        // factors and sizes for busbw (a constant of the two records, not of their timing).
        const double c = *m.efficiency * points[p].rec->time_us->p50 / r0.time_us->p50;
        if (const auto ci =
                bootstrap_median_ratio_ci(samples[*ref], samples[p], opt.confidence, opt.resamples,
                                          mix_seed(opt.seed, gi, static_cast<std::uint64_t>(m.num_ranks), 2))) {
          m.efficiency_ci = Interval{c * ci->low, c * ci->high};
        } else {
          m.notes.push_back("no interval for E(N): fewer than two samples");
        }
      }
    }

    // Projections to requested rank counts without a measurement (or above --calibrate-at).
    std::size_t last = points.size() - 1;
    const int largest_measured = g.measured[last].num_ranks;
    if (opt.calibrate_at) {
      const auto at = std::find_if(g.measured.begin(), g.measured.end(),
                                   [&](const auto& m) { return m.num_ranks == *opt.calibrate_at; });
      if (at == g.measured.end()) {
        g.notes.push_back(fmt::format("no projection: --calibrate-at {}: no point at N={} in this group",
                                      *opt.calibrate_at, *opt.calibrate_at));
        rep.groups.push_back(std::move(g));
        continue;
      }
      last = static_cast<std::size_t>(at - g.measured.begin());
    }
    const auto& lm = g.measured[last];
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
    if (systems.projection && !wanted.empty()) {
      if (!g.calibration_efficiency) {
        g.notes.push_back(fmt::format("no projection: no bound at the largest measured N={} to calibrate on ({})",
                                      lm.num_ranks,
                                      systems.bounds ? "the model does not cover this case"
                                                     : "the records carry no model and no --system was given"));
      } else {
        const double eff = *g.calibration_efficiency;
        // Relative interval of the calibration, widened below by the extrapolation.
        std::optional<Interval> rel_eff;
        if (g.calibration_ci) rel_eff = Interval{g.calibration_ci->low / eff, g.calibration_ci->high / eff};
        const int ranks_per_domain = *std::max_element(lm.domain_sizes.begin(), lm.domain_sizes.end());
        for (int n : wanted) {
          ProjectedPoint pp;
          pp.num_ranks = n;
          pp.system = systems.projection->name;
          pp.domain_sizes = placement_from_ranks_per_domain(n, ranks_per_domain).domain_sizes;
          pp.packing = packing_of(pp.domain_sizes);
          pp.uneven = uneven(pp.domain_sizes);
          std::string why;
          const auto est = estimate_for(*systems.projection, g.collective, g.algo, g.dtype, g.bytes_per_rank, g.scope,
                                        pp.domain_sizes, why);
          if (!est || est->bound_time_us <= 0.0) {
            g.notes.push_back(fmt::format("no projection at N={}: {}", n, est ? "the bound time is 0" : why));
            continue;
          }
          pp.bound_time_us = est->bound_time_us;
          pp.bound_busbw_gbps = est->bound_busbw_gbps;
          pp.projected_time_us = est->bound_time_us / eff;
          pp.projected_busbw_gbps = est->bound_busbw_gbps * eff;
          pp.pct_bound = 100.0 * eff;
          pp.extrapolation = static_cast<double>(n) / lm.num_ranks;
          pp.widening = 1.0 + std::log2(std::max(1.0, pp.extrapolation));
          if (ref) {
            const CaseRecord& r0 = *points[*ref].rec;
            pp.efficiency = opt.metric == Metric::busbw ? pp.projected_busbw_gbps / r0.busbw_gbps
                                                        : r0.time_us->p50 / pp.projected_time_us;
          } else {
            pp.notes.push_back("no E(N): the group has no reference point");
          }
          if (rel_eff) {
            const ProjectedInterval iv = projected_interval(pp.pct_bound, *rel_eff, pp.widening, pp.efficiency);
            pp.pct_bound_pi = iv.pct_bound;
            pp.pi = iv.efficiency;
            pp.interval_clipped = iv.clipped;
            if (iv.clipped) {
              pp.notes.push_back(fmt::format(
                  "prediction interval clipped at the bound: the widened calibration spread reached {:.1f}% of the "
                  "bound (% bound at most 100, E(N) at most bound_busbw(N) / busbw(N0))",
                  iv.unclipped_high));
            }
          } else {
            pp.notes.push_back("no prediction interval: the calibration point has fewer than two samples");
          }
          if (pp.uneven)
            pp.notes.push_back(
                fmt::format("uneven packing {} (same ranks per domain as N={})", pp.packing, lm.num_ranks));
          const double beyond_largest = static_cast<double>(n) / largest_measured;
          if (beyond_largest > opt.extrapolation_warn_factor) {
            pp.extrapolation_warning = true;
            const std::string w = fmt::format(
                "{}: projecting to N={} is {:.3g}x the largest measured N={} (more than {:g}x): model only, the "
                "model's bound carries the projection, the measurements only calibrate it",
                group_label(g), n, beyond_largest, largest_measured, opt.extrapolation_warn_factor);
            pp.notes.push_back(w);
            far_projections.push_back({n, largest_measured, beyond_largest});
          }
          g.projected.push_back(std::move(pp));
        }
      }
    }
    rep.groups.push_back(std::move(g));
  }
  // Measurements faster than their bound: the profile (or its calibration) is wrong for them.
  std::vector<std::string> beyond;
  for (const auto& g : rep.groups) {
    for (const auto& m : g.measured) {
      if (m.pct_bound && *m.pct_bound > 100.0) {
        beyond.push_back(
            fmt::format("{} {} B/rank at N={} ({:.0f}%)", g.collective, g.bytes_per_rank, m.num_ranks, *m.pct_bound));
      }
    }
  }
  if (!beyond.empty()) {
    rep.warnings.push_back(fmt::format(
        "{} measured point(s) beat their analytic bound (% bound > 100): {}{}; the system profile does not describe "
        "this machine (recalibrate cpu-local on a quiet machine, or check --system)",
        beyond.size(),
        fmt::join(beyond.begin(), beyond.begin() + static_cast<std::ptrdiff_t>(std::min<std::size_t>(beyond.size(), 5)),
                  "; "),
        beyond.size() > 5 ? ", ..." : ""));
  }
  if (!far_projections.empty()) {
    // One warning for the report (each projected point also carries its own note and flag).
    std::set<int> ns, largest;
    double worst = 0.0;
    for (const auto& f : far_projections) {
      ns.insert(f.n);
      largest.insert(f.largest);
      worst = std::max(worst, f.factor);
    }
    rep.warnings.push_back(fmt::format(
        "projections to N={} extrapolate more than {:g}x beyond the largest measured N ({}; up to {:.3g}x, {} "
        "projected point(s)): the model's bound carries them, the measurements only calibrate it",
        fmt::join(ns, ", "), opt.extrapolation_warn_factor, fmt::join(largest, ", "), worst, far_projections.size()));
  }
  return rep;
}

// ---- JSON --------------------------------------------------------------------------------------

namespace {

nlohmann::json interval_json(const std::optional<Interval>& i) {
  return i ? nlohmann::json::array({i->low, i->high}) : nlohmann::json(nullptr);
}

template <class T>
nlohmann::json opt_json(const std::optional<T>& v) {
  return v ? nlohmann::json(*v) : nlohmann::json(nullptr);
}

}  // namespace

nlohmann::json weak_scaling_json(const WeakScalingReport& rep) {
  using nlohmann::json;
  json groups = json::array();
  for (const auto& g : rep.groups) {
    json points = json::array();
    for (const auto& m : g.measured) {
      json slowest = nullptr;
      if (m.slowest_rank) {
        slowest = {{"rank", *m.slowest_rank},
                   {"host", opt_json(m.slowest_host)},
                   {"mean_us", opt_json(m.slowest_rank_mean_us)},
                   {"median_rank_mean_us", opt_json(m.median_rank_mean_us)}};
      }
      points.push_back({{"num_ranks", m.num_ranks},
                        {"projected", false},
                        {"simulated", m.simulated},
                        {"efficiency", opt_json(m.efficiency)},
                        {"efficiency_ci", interval_json(m.efficiency_ci)},
                        {"pct_bound", opt_json(m.pct_bound)},
                        {"pct_bound_ci", interval_json(m.pct_bound_ci)},
                        {"pi", nullptr},
                        {"domain_sizes", m.domain_sizes},
                        {"num_domains", m.num_domains},
                        {"packing", m.packing},
                        {"uneven_packing", m.uneven},
                        {"p50_us", m.p50_us},
                        {"p99_us", m.p99_us},
                        {"algbw_gbps", m.algbw_gbps},
                        {"busbw_gbps", m.busbw_gbps},
                        {"pct_expected", opt_json(m.pct_expected)},
                        {"bound_time_us", opt_json(m.bound_time_us)},
                        {"bound_busbw_gbps", opt_json(m.bound_busbw_gbps)},
                        {"expected_time_us", opt_json(m.expected_time_us)},
                        {"expected_busbw_gbps", opt_json(m.expected_busbw_gbps)},
                        {"bound_source", m.bound_source.empty() ? json(nullptr) : json(m.bound_source)},
                        {"samples", m.samples},
                        {"slowest_rank", slowest},
                        {"algo_used", m.algo_used.empty() ? json(nullptr) : json(m.algo_used)},
                        {"overlap", m.t_both_us ? json{{"t_comm_us", opt_json(m.t_comm_us)},
                                                       {"t_compute_us", opt_json(m.t_compute_us)},
                                                       {"t_both_us", opt_json(m.t_both_us)},
                                                       {"exposed_us", opt_json(m.exposed_us)},
                                                       {"efficiency", opt_json(m.overlap_efficiency)}}
                                                : json(nullptr)},
                        {"file", m.file},
                        {"line", m.line},
                        {"run_id", m.run_id},
                        {"notes", m.notes}});
    }
    for (const auto& p : g.projected) {
      points.push_back({{"num_ranks", p.num_ranks},
                        {"projected", true},
                        {"efficiency", opt_json(p.efficiency)},
                        {"efficiency_ci", nullptr},
                        {"pi", interval_json(p.pi)},
                        {"pct_bound", p.pct_bound},
                        {"pct_bound_pi", interval_json(p.pct_bound_pi)},
                        {"domain_sizes", p.domain_sizes},
                        {"packing", p.packing},
                        {"uneven_packing", p.uneven},
                        {"system", p.system},
                        {"bound_time_us", p.bound_time_us},
                        {"bound_busbw_gbps", p.bound_busbw_gbps},
                        {"projected_time_us", p.projected_time_us},
                        {"projected_busbw_gbps", p.projected_busbw_gbps},
                        {"extrapolation", p.extrapolation},
                        {"widening", p.widening},
                        {"extrapolation_warning", p.extrapolation_warning},
                        {"model_only", p.extrapolation_warning},
                        {"interval_clipped", p.interval_clipped},
                        {"notes", p.notes}});
    }
    json key = {{"collective", g.collective},
                {"algo", g.algo},
                {"dtype", g.dtype},
                {"backend", g.backend},
                {"scope", g.scope},
                {"bytes_per_rank", g.bytes_per_rank},
                {"overlap", g.overlap.empty() ? json(nullptr) : json(g.overlap)},
                {"place", g.in_place ? "in-place" : "out-of-place"},
                {"timing", g.timing}};
    if (g.redop) key["redop"] = *g.redop;
    json calibration = nullptr;
    if (g.calibration_efficiency) {
      calibration = {{"num_ranks", g.calibration_ranks},
                     {"efficiency_vs_bound", *g.calibration_efficiency},
                     {"ci", interval_json(g.calibration_ci)}};
    }
    groups.push_back({{"key", key},
                      {"reference_ranks", g.reference_ranks > 0 ? json(g.reference_ranks) : json(nullptr)},
                      {"calibration", calibration},
                      {"notes", g.notes},
                      {"points", points}});
  }
  std::string system_title;
  if (rep.cross_system) {
    system_title = fmt::format("measured on {}, projected onto {}", rep.measured_system.value_or("unknown system"),
                               rep.projection_system.value_or(""));
  } else if (rep.measured_system) {
    system_title = *rep.measured_system;
  }
  return {{"schema", kWeakScalingSchema},
          {"title", rep.title},
          {"system", system_title.empty() ? json(nullptr) : json(system_title)},
          {"measured_system", opt_json(rep.measured_system)},
          {"projection_system", opt_json(rep.projection_system)},
          {"cross_system", rep.cross_system},
          {"projection_status", rep.projection_status.empty() ? json(nullptr) : json(rep.projection_status)},
          {"metric", std::string(to_string(rep.metric))},
          {"confidence", rep.confidence},
          {"bootstrap",
           {{"method", "percentile, medians resampled exactly"}, {"resamples", rep.resamples}, {"seed", rep.seed}}},
          {"requested_ranks", rep.requested_ranks},
          {"extrapolation_warn_factor", rep.extrapolation_warn_factor},
          {"inputs", rep.inputs},
          {"warnings", rep.warnings},
          {"notes", rep.notes},
          {"groups", groups}};
}

}  // namespace collbench::report
