// Markdown rendering of case tables, comparisons and weak-scaling reports.
#include "collbench/report/markdown.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "collbench/core/units.hpp"
#include "collbench/report/escape.hpp"
#include "collbench/report/number_text.hpp"
#include "collbench/report/overlap_text.hpp"
#include "collbench/report/table.hpp"

namespace collbench::report {

using scaling::MeasuredPoint;
using scaling::ProjectedPoint;
using scaling::WeakScalingGroup;
using scaling::WeakScalingReport;

using record::CaseRecord;

std::string markdown_case_head(bool root_column) {
  return fmt::format(
      "| collective | size (B) | count | type | redop |{} algo | scope | place | ranks | domains | time p50 (us) | "
      "p99 (us) | algbw (GB/s) | busbw (GB/s) | #wrong | samples | % bound | status |\n"
      "|---|---:|---:|---|---|{}---|---|---|---:|---|---:|---:|---:|---:|---:|---:|---:|---|\n",
      root_column ? " root |" : "", root_column ? "---:|" : "");
}

std::string markdown_case_row(const CaseRecord& r, bool root_column) {
  const std::string algo = r.algo_used ? *r.algo_used : r.algo_requested;
  const std::string redop = r.redop.value_or("–") + (root_column ? " | " + root_text(r, "–") : std::string());
  const std::string place = r.in_place ? "in" : "out";
  if (!r.time_us) {
    return fmt::format("| {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | – | – | – | – | – | – | – | {}: {} |\n",
                       r.collective, r.bytes, r.count, r.dtype, redop, md_escape(algo), r.scope, place, r.num_ranks,
                       domains_text(r.domain_sizes), r.status, md_escape(r.reason.value_or("")));
  }
  const std::string wrong = r.checked ? std::to_string(r.wrong_total) : "N/A";
  const std::string pct = r.model ? fmt::format("{:.1f}", 100.0 * r.model->efficiency) : "–";
  return fmt::format(
      "| {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {:.2f} | {:.2f} | {:.2f} | {:.2f} | {} | {} | "
      "{} | {} |\n",
      r.collective, r.bytes, r.count, r.dtype, redop, md_escape(algo), r.scope, place, r.num_ranks,
      domains_text(r.domain_sizes), r.time_us->p50, r.time_us->p99, r.algbw_gbps, r.busbw_gbps, wrong, r.iterations,
      pct, r.status == "ok" ? "ok" : md_escape(r.status + ": " + r.reason.value_or("")));
}

// Overlap mode (docs/overlap.md): the record's overlap object, one row per case that has one.
std::string markdown_overlap_row(const CaseRecord& r) {
  const auto& o = r.overlap;
  if (!o.is_object()) return {};
  const auto num = [&o](const char* key) -> std::optional<double> {
    return o.contains(key) && o[key].is_number() ? std::optional<double>(o[key].get<double>()) : std::nullopt;
  };
  std::string load = "–";
  if (o.contains("compute") && o["compute"].contains("description") && o["compute"]["description"].is_string()) {
    load = o["compute"]["description"].get<std::string>() + " on " + o["compute"].value("device", std::string("?"));
  }
  std::string pipeline = "–";
  if (o.contains("pipeline") && o["pipeline"].is_object()) {
    const auto& p = o["pipeline"];
    pipeline = fmt::format(
        "{} chunks: ideal {} us, step/ideal {}", p.value("chunks", 0),
        number_text(p.contains("ideal_us") ? std::optional<double>(p["ideal_us"].get<double>()) : std::nullopt, 2),
        number_text(p.contains("step_over_ideal") && p["step_over_ideal"].is_number()
                        ? std::optional<double>(p["step_over_ideal"].get<double>())
                        : std::nullopt,
                    3));
  }
  return fmt::format("| {} | {} | {} | {} | {} | {} | {} | {} | {} |\n", r.collective, r.bytes, md_escape(load),
                     number_text(num("t_comm_us"), 2), number_text(num("t_compute_us"), 2),
                     number_text(num("t_both_us"), 2), md_escape(overlap_exposed_text(o, 2)),
                     md_escape(overlap_efficiency_text(o, 3)), md_escape(pipeline));
}

std::string markdown_overlap_section(const std::string& overlap_rows) {
  if (overlap_rows.empty()) return {};
  return "\nOverlap (collective beside a compute load; docs/overlap.md):\n\n"
         "| collective | size (B) | compute | t_comm (us) | t_compute (us) | t_both (us) | exposed (us) | "
         "efficiency | pipeline |\n|---|---:|---|---:|---:|---:|---:|---:|---|\n" +
         overlap_rows;
}

std::string markdown_case_table(const std::vector<CaseRecord>& records) {
  const bool root_column = needs_root_column(records);  // after redop, as in the console table
  std::string out = markdown_case_head(root_column);
  for (const auto& r : records) out += markdown_case_row(r, root_column);
  std::string overlap_rows;
  for (const auto& r : records) overlap_rows += markdown_overlap_row(r);
  return out + markdown_overlap_section(overlap_rows);
}

std::string markdown_file_head(const record::InputFile& f) {
  std::string out = fmt::format("## {}\n\n", md_escape(f.path));
  if (f.header) {
    const auto& h = *f.header;
    std::string system = "none";
    if (h.system.is_object() && h.system.contains("name") && h.system["name"].is_string()) {
      system = h.system["name"].get<std::string>();
    }
    out += fmt::format("run `{}`, started {}, collbench {} (git {}), launcher {}, {} rank(s) on {}, system {}\n\n",
                       h.run_id, h.started_at, h.tool_version, h.git_sha, h.launcher, h.hosts.size(),
                       h.hosts.empty() ? std::string("unknown hosts") : fmt::format("host {}", h.hosts.front().host),
                       system);
  } else {
    out += "no run header\n\n";
  }
  for (const auto& w : f.warnings) out += fmt::format("> warning: {}\n\n", w);
  return out;
}

std::string render_cases_markdown(const std::vector<record::InputFile>& files) {
  std::string out;
  for (const auto& f : files) {
    out += markdown_file_head(f);
    if (f.cases.empty()) {
      out += "no cases\n\n";
      continue;
    }
    out += markdown_case_table(f.cases) + "\n";
  }
  return out;
}

std::string render_comparison_markdown(const compare::Comparison& c) {
  std::string out = fmt::format("## Comparison by {} (baseline: {})\n\n", to_string(c.by), md_escape(c.baseline));
  out += "time ratio = p50 / baseline p50 (> 1: slower); busbw ratio = busbw / baseline busbw (> 1: faster).\n\n";
  for (const auto& other : c.others) {
    out += fmt::format("### {} vs {}\n\n", md_escape(other), md_escape(c.baseline));
    out +=
        "| collective | ranks | type | redop | algo | scope | place | size (B) | baseline p50 (us) | p50 (us) | "
        "time ratio | time % change | baseline busbw (GB/s) | busbw (GB/s) | busbw ratio | busbw % change |\n"
        "|---|---:|---|---|---|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n";
    std::size_t n = 0;
    for (const auto& r : c.rows) {
      if (r.other != other) continue;
      ++n;
      out += fmt::format(
          "| {} | {} | {} | {} | {} | {} | {} | {} | {:.2f} | {:.2f} | {:.3f} | {:+.1f} | {:.2f} | "
          "{:.2f} | {} | {} |\n",
          r.collective, r.num_ranks, r.dtype, r.redop.value_or("–"),
          c.by == compare::CompareBy::algo ? "*" : md_escape(r.algo), r.scope, r.in_place ? "in" : "out", r.bytes,
          r.base_p50_us, r.other_p50_us, r.time_ratio, r.time_change_pct, r.base_busbw_gbps, r.other_busbw_gbps,
          r.busbw_ratio ? fmt::format("{:.3f}", *r.busbw_ratio) : "–",
          r.busbw_change_pct ? fmt::format("{:+.1f}", *r.busbw_change_pct) : "–");
    }
    if (n == 0) out += "| no matching cases | | | | | | | | | | | | | | | |\n";
    out += "\n";
  }
  for (const auto& note : c.notes) out += fmt::format("- {}\n", note);
  if (!c.notes.empty()) out += "\n";
  return out;
}

namespace {

// Title and the method paragraph of a weak-scaling report.
std::string ws_method(const WeakScalingReport& rep) {
  std::string out = fmt::format("# {}\n\n", rep.title);
  const std::string_view metric_text = efficiency_definition(rep.metric);
  out += fmt::format(
      "E(N) = {}, N0 = the smallest measured N with a positive metric; 1.0 is perfect weak scaling. Intervals: "
      "{:g}% percentile bootstrap over the per-iteration samples (`samples_us`) of both records ({} resamples, seed "
      "{}). % bound = 100 x bound time / measured p50. Projections (labelled *projected*, never measured): the "
      "model's bound at N, with the ranks per domain of the calibration point (the largest measured N, or "
      "--calibrate-at), times the efficiency vs bound measured there; the prediction interval widens that "
      "efficiency's interval by k = 1 + log2(N / N_cal), clipped at the bound (E(N) from the same interval). More "
      "than 4x beyond the largest measured N: *model only*. Method: docs/report.md.\n\n",
      metric_text, 100.0 * rep.confidence, rep.resamples, rep.seed);
  return out;
}

// Inputs, systems, projection status, warnings and the plots' note.
std::string ws_context(const WeakScalingReport& rep, const PlotLinks& plots) {
  std::string out = "Inputs: " + fmt::format("{}", fmt::join(rep.inputs, ", ")) + "\n\n";
  if (rep.measured_system) out += fmt::format("Measured on: {}\n\n", *rep.measured_system);
  if (rep.projection_system) {
    out += fmt::format("Projected with profile: {}{}\n\n", *rep.projection_system,
                       rep.cross_system ? " (cross-system projection, asked for with --project-onto)" : "");
  }
  if (!rep.projection_status.empty()) out += fmt::format("{}\n\n", rep.projection_status);
  if (!rep.warnings.empty()) {
    out += "## Warnings\n\n";
    for (const auto& w : rep.warnings) out += fmt::format("- {}\n", w);
    out += "\n";
  }
  if (!plots.note.empty()) out += fmt::format("> {}\n\n", plots.note);
  return out;
}

// A group's heading and its fixed parameters.
std::string ws_group_heading(const WeakScalingGroup& g) {
  return fmt::format("## {} · {} · {} · {}/rank · {} · {} · {}{}\n\n", g.collective, g.algo, g.dtype,
                     format_bytes(g.bytes_per_rank), g.scope, g.backend, g.in_place ? "in-place" : "out-of-place",
                     g.redop ? " · " + *g.redop : "") +
         fmt::format("bytes per rank {}, timing {}, reference N0 = {}\n\n", g.bytes_per_rank, g.timing,
                     g.reference_ranks > 0 ? std::to_string(g.reference_ranks) : std::string("none"));
}

// Heading of the measured table: measured, simulated, or both.
std::string_view ws_measured_heading(const WeakScalingGroup& g) {
  const auto simulated = std::count_if(g.measured.begin(), g.measured.end(), [](const auto& m) { return m.simulated; });
  return simulated == 0 ? "### Measured\n\n"
         : simulated == static_cast<std::ptrdiff_t>(g.measured.size())
             ? "### Simulated (SimGrid SMPI on a generated platform: simulated times, not measurements)\n\n"
             : "### Measured and simulated (points marked (sim) are simulated, not measured)\n\n";
}

// One row of the measured table.
std::string ws_measured_row(const MeasuredPoint& m) {
  std::string slowest = "–";
  if (m.slowest_rank) {
    slowest = fmt::format("{} ({}) {:.2f} us vs median {:.2f} us", *m.slowest_rank,
                          md_escape(m.slowest_host.value_or("host unknown")), m.slowest_rank_mean_us.value_or(0.0),
                          m.median_rank_mean_us.value_or(0.0));
  }
  return fmt::format("| {} | {} | {}{} | {:.2f} | {:.2f} | {:.3f} | {:.3f} | {} | {} | {} | {} | {} | {} | {} |\n",
                     fmt::format("{}{}", m.num_ranks, m.simulated ? " (sim)" : ""), m.num_domains, m.packing,
                     m.uneven ? " (uneven)" : "", m.p50_us, m.p99_us, m.algbw_gbps, m.busbw_gbps,
                     number_text(m.pct_bound, 1), interval_text(m.pct_bound_ci, 1), number_text(m.pct_expected, 1),
                     number_text(m.efficiency, 3), interval_text(m.efficiency_ci, 3), slowest, m.samples);
}

// The measured (or simulated) points of a group.
std::string ws_measured_table(const WeakScalingGroup& g) {
  std::string out(ws_measured_heading(g));
  out +=
      "| N | domains | packing | time p50 (us) | p99 (us) | algbw (GB/s) | busbw (GB/s) | % bound | % bound CI | "
      "% expected | E(N) | E(N) CI | slowest rank (host) | samples |\n"
      "|---:|---:|---|---:|---:|---:|---:|---:|---|---:|---:|---|---|---:|\n";
  for (const auto& m : g.measured) out += ws_measured_row(m);
  return out + "\n";
}

// Overlap mode (docs/overlap.md): how much of the collective stays exposed beside compute, per N.
std::string ws_overlap_table(const WeakScalingGroup& g) {
  if (g.overlap.empty()) return "";
  std::string out = fmt::format("### Exposed communication beside compute ({})\n\n", md_escape(g.overlap));
  out +=
      "| N | t_comm (us) | t_compute (us) | t_both (us) | exposed (us) | exposed / t_comm | overlap efficiency |\n"
      "|---:|---:|---:|---:|---:|---:|---:|\n";
  for (const auto& m : g.measured) {
    if (!m.t_both_us) continue;
    const std::optional<double> fraction = m.t_comm_us && *m.t_comm_us > 0 && m.exposed_us
                                               ? std::optional<double>(*m.exposed_us / *m.t_comm_us)
                                               : std::nullopt;
    out += fmt::format("| {} | {} | {} | {} | {} | {} | {} |\n", m.num_ranks, number_text(m.t_comm_us, 2),
                       number_text(m.t_compute_us, 2), number_text(m.t_both_us, 2),
                       md_escape(overlap_exposed_text(m.overlap, 2)), number_text(fraction, 3),
                       md_escape(overlap_efficiency_text(m.overlap, 3)));
  }
  return out + "\n";
}

// Where the measured points' bounds come from (each source once, in order), and the points' notes.
std::string ws_sources_and_notes(const WeakScalingGroup& g) {
  std::vector<std::string> sources;
  for (const auto& m : g.measured) {
    if (!m.bound_source.empty() && std::find(sources.begin(), sources.end(), m.bound_source) == sources.end()) {
      sources.push_back(m.bound_source);
    }
  }
  std::string out;
  if (!sources.empty()) out += fmt::format("Bounds from: {}.\n\n", fmt::join(sources, "; "));
  for (const auto& m : g.measured) {
    for (const auto& note : m.notes) out += fmt::format("- N={} ({}:{}): {}\n", m.num_ranks, m.file, m.line, note);
  }
  return out;
}

// One row of the projected table.
std::string ws_projected_row(const ProjectedPoint& p, double warn_factor) {
  return fmt::format(
      "| {} | {}{} | {} | {:.2f} | {:.3f} | {:.2f} | {:.3f} | {} | {} | {} | {} | {:.3g}x{} |\n", p.num_ranks,
      p.packing, p.uneven ? " (uneven)" : "", p.system, p.bound_time_us, p.bound_busbw_gbps, p.projected_time_us,
      p.projected_busbw_gbps, number_text(p.efficiency, 3), interval_text(p.pi, 3), number_text(p.pct_bound, 1),
      interval_text(p.pct_bound_pi, 1), p.extrapolation,
      p.extrapolation_warning ? fmt::format(" **model only** (beyond {:g}x the largest measured N)", warn_factor) : "");
}

// The projected points of a group, their calibration and their notes.
std::string ws_projected(const WeakScalingGroup& g, double warn_factor) {
  if (g.projected.empty()) return "";
  std::string out = fmt::format("\n### Projected (model, not measured)\n\n");
  out += fmt::format("Calibrated at N={}: efficiency vs bound {} {}.\n\n", g.calibration_ranks,
                     number_text(g.calibration_efficiency, 3), interval_text(g.calibration_ci, 3));
  out +=
      "| N | packing | system | bound time (us) | bound busbw (GB/s) | projected time (us) | projected busbw "
      "(GB/s) | projected E(N) | E(N) prediction interval | projected % bound | % bound PI | extrapolation |\n"
      "|---:|---|---|---:|---:|---:|---:|---:|---|---:|---|---|\n";
  for (const auto& p : g.projected) out += ws_projected_row(p, warn_factor);
  out += "\n";
  for (const auto& p : g.projected) {
    for (const auto& note : p.notes) {
      if (!p.extrapolation_warning || note.find("projecting to") == std::string::npos) {
        out += fmt::format("- projected N={}: {}\n", p.num_ranks, note);
      }
    }
  }
  return out;
}

// One group: heading, measured, overlap, bounds and notes, projected, the group's notes and its plot.
std::string ws_group(const WeakScalingReport& rep, std::size_t gi, const PlotLinks& plots) {
  const auto& g = rep.groups[gi];
  std::string out = ws_group_heading(g) + ws_measured_table(g) + ws_overlap_table(g) + ws_sources_and_notes(g) +
                    ws_projected(g, rep.extrapolation_warn_factor);
  for (const auto& note : g.notes) out += fmt::format("- {}\n", note);
  if (gi < plots.weak_scaling.size() && !plots.weak_scaling[gi].empty()) {
    out += fmt::format("\n![E(N) and % of bound vs N]({})\n", plots.weak_scaling[gi]);
  }
  return out + "\n";
}

// The other plots and the report's notes.
std::string ws_closing(const WeakScalingReport& rep, const PlotLinks& plots) {
  std::string out;
  if (!plots.other.empty()) {
    out += "## Other plots\n\n";
    for (const auto& p : plots.other) out += fmt::format("![{}]({})\n\n", p, p);
  }
  if (!rep.notes.empty()) {
    out += "## Notes\n\n";
    for (const auto& n : rep.notes) out += fmt::format("- {}\n", n);
    out += "\n";
  }
  return out;
}

}  // namespace

std::string render_weak_scaling_markdown(const WeakScalingReport& rep, const PlotLinks& plots) {
  std::string out = ws_method(rep) + ws_context(rep, plots);
  for (std::size_t gi = 0; gi < rep.groups.size(); ++gi) out += ws_group(rep, gi, plots);
  return out + ws_closing(rep, plots);
}

}  // namespace collbench::report
