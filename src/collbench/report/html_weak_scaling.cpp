// The weak-scaling HTML page (html.hpp): summary, per group its charts, measured and projected
// tables and notes, then busbw vs size per input and provenance.
#include <fmt/format.h>

#include <algorithm>
#include <optional>

#include "collbench/core/units.hpp"
#include "collbench/report/html.hpp"
#include "collbench/report/html_detail.hpp"
#include "collbench/report/number_text.hpp"
#include "collbench/report/svg.hpp"

namespace collbench::report {

using scaling::Interval;

using scaling::MeasuredPoint;
using scaling::ProjectedPoint;
using scaling::WeakScalingGroup;
using scaling::WeakScalingReport;
namespace {

using html_detail::esc;
using html_detail::list_items;
using html_detail::td;
using html_detail::th_row;

struct Counts {
  std::size_t measured = 0, projected = 0, flagged = 0;
};

Counts count_points(const WeakScalingReport& rep) {
  Counts n;
  for (const auto& g : rep.groups) {
    n.measured += g.measured.size();
    n.projected += g.projected.size();
    for (const auto& p : g.projected) n.flagged += p.extrapolation_warning;
  }
  return n;
}

std::string summary_section(const WeakScalingReport& rep, const Counts& n) {
  std::string body = "<section class=\"summary\"><h2>Summary</h2>\n";
  body += html::cards({{"groups", fmt::format("{}", rep.groups.size()), ""},
                       {"measured points", fmt::format("{}", n.measured), ""},
                       {"projected points", fmt::format("{}", n.projected), ""},
                       {"metric", std::string(to_string(rep.metric)), ""},
                       {"measured on", rep.measured_system.value_or("unknown"), ""},
                       {"projected with", rep.projection_system.value_or("none"), ""}});
  const std::string_view metric_text = efficiency_definition(rep.metric);
  body += fmt::format(
      "<p>E(N) = {}, N0 = the smallest measured N with a positive metric; 1.0 is perfect weak scaling. Intervals: "
      "{:g}% percentile bootstrap over the per-iteration samples of both records ({} resamples, seed {}). % bound = "
      "100 x bound time / measured p50. <strong>Projections</strong> (hollow markers, dashed lines, labelled "
      "<em>projected</em>; never measured): the model's bound at N, with the ranks per domain of the calibration "
      "point (the largest measured N, or --calibrate-at), times the efficiency vs bound measured there; the "
      "prediction interval widens that efficiency's interval by k = 1 + log2(N / N_cal), clipped at the bound "
      "(E(N) from the same interval). More than 4x beyond the largest measured N: <em>model only</em>. Method: "
      "docs/report.md.</p>\n",
      esc(metric_text), 100.0 * rep.confidence, rep.resamples, rep.seed);
  if (rep.cross_system) {
    body += "<div class=\"callout\">Cross-system projection (asked for with --project-onto): measured on " +
            esc(rep.measured_system.value_or("unknown")) + ", projected onto " +
            esc(rep.projection_system.value_or("?")) + ".</div>\n";
  }
  if (!rep.projection_status.empty()) body += "<div class=\"callout\">" + esc(rep.projection_status) + "</div>\n";
  for (const auto& w : rep.warnings) body += "<div class=\"warning\">warning: " + esc(w) + "</div>\n";
  body += "</section>\n";
  return body;
}

svg::Point point(double n, double y, const std::optional<Interval>& i) {
  return {n, y, i ? std::optional(i->low) : std::nullopt, i ? std::optional(i->high) : std::nullopt};
}

// The series of one chart (E(N), or % of bound): measured, projected, "model only", and the
// dashed link from the calibration point to the first projection.
struct ChartSeries {
  svg::Series meas, proj, link, model;
};

// The dashed projection line starts at the calibration point (the largest measured N, drawn
// with its measured marker) and runs through the projected points (hollow markers).
void link_calibration(ChartSeries& s, const MeasuredPoint* last, const std::optional<double>& y) {
  if (!last || !y || s.proj.points.empty()) return;
  s.link.points = {{static_cast<double>(last->num_ranks), *y, {}, {}}, s.proj.points.front()};
  s.link.points.back().y_low = s.link.points.back().y_high = std::nullopt;
}

// E(N) (first) and % of bound (second) series of a group.
std::pair<ChartSeries, ChartSeries> group_series(const WeakScalingGroup& g) {
  const bool all_simulated = !g.measured.empty() && std::all_of(g.measured.begin(), g.measured.end(),
                                                                [](const auto& m) { return m.simulated; });
  ChartSeries e;
  e.meas = {all_simulated ? "simulated, SimGrid SMPI (95% CI)" : "measured (95% CI)",
            {},
            svg::Stroke::solid,
            true,
            false,
            "",
            0};
  e.proj = {"projected (prediction interval)", {}, svg::Stroke::dashed, true, true, "projected", 1};
  e.link = {"", {}, svg::Stroke::dashed, false, false, "", 1};
  // More than 4x beyond the largest measured N: "model only", a dashed series of its own colour.
  e.model = {"model only (> 4x measured N)", {}, svg::Stroke::dashed, true, true, "model only", 2};
  ChartSeries b = e;
  const MeasuredPoint* last = nullptr;
  for (const auto& m : g.measured) {
    const double n = m.num_ranks;
    if (m.efficiency) e.meas.points.push_back(point(n, *m.efficiency, m.efficiency_ci));
    if (m.pct_bound) b.meas.points.push_back(point(n, *m.pct_bound, m.pct_bound_ci));
    if (m.num_ranks == g.calibration_ranks) last = &m;
  }
  for (const auto& p : g.projected) {
    const double n = p.num_ranks;
    auto& es = p.extrapolation_warning ? e.model : e.proj;
    auto& bs = p.extrapolation_warning ? b.model : b.proj;
    if (p.efficiency) es.points.push_back(point(n, *p.efficiency, p.pi));
    bs.points.push_back(point(n, p.pct_bound, p.pct_bound_pi));
  }
  link_calibration(e, last, last ? last->efficiency : std::nullopt);
  link_calibration(b, last, last ? last->pct_bound : std::nullopt);
  return {e, b};
}

void add_series(svg::LineChart& chart, const ChartSeries& s) {
  chart.series = {s.link, s.meas};
  if (!s.proj.points.empty()) chart.series.push_back(s.proj);
  if (!s.model.points.empty()) chart.series.push_back(s.model);
}

// Charts: E(N) and % of bound vs N.
std::string group_charts(const WeakScalingGroup& g) {
  svg::LineChart e_chart;
  e_chart.title = "weak-scaling efficiency E(N)";
  e_chart.x_label = "ranks N (log2)";
  e_chart.y_label = "E(N)";
  e_chart.x_format = svg::TickFormat::number;
  e_chart.references.push_back({1.0, "perfect weak scaling (1.0)", svg::Stroke::dotted});
  svg::LineChart b_chart = e_chart;
  b_chart.title = "% of the analytic bound";
  b_chart.y_label = "% of bound";
  b_chart.references = {{100.0, "bound (100%)", svg::Stroke::dashed}};
  const auto [e, b] = group_series(g);
  // A system far below its bound (a CPU run against a GPU profile) would be a flat line at 0
  // under the 100% line: then the axis follows the data and the title says where the bound is.
  double pct_max = 0.0;
  for (const auto* s : {&b.meas, &b.proj, &b.model}) {
    for (const auto& pt : s->points) pct_max = std::max({pct_max, pt.y, pt.y_high.value_or(0.0)});
  }
  if (pct_max > 0.0 && pct_max < 10.0) {
    b_chart.references.clear();
    b_chart.title += " (the bound, 100%, is off this scale)";
  }
  add_series(e_chart, e);
  add_series(b_chart, b);
  return "<div class=\"charts\">\n" + svg::render_line_chart(e_chart) + "\n" + svg::render_line_chart(b_chart) +
         "\n</div>\n";
}

std::string measured_row(const MeasuredPoint& m) {
  std::string slowest = "–";
  if (m.slowest_rank) {
    slowest = esc(fmt::format("{} ({}) {:.2f} us vs median {:.2f} us", *m.slowest_rank,
                              m.slowest_host.value_or("host unknown"), m.slowest_rank_mean_us.value_or(0.0),
                              m.median_rank_mean_us.value_or(0.0)));
  }
  return "<tr class=\"measured-point\">" + td(fmt::format("{}", m.num_ranks), "n") +
         td(fmt::format("{}", m.num_domains), "n") +
         td(esc(m.packing) + (m.uneven ? " <span class=\"badge fail\">uneven</span>" : "")) +
         td(number_text(m.p50_us, 2), "n") + td(number_text(m.p99_us, 2), "n") + td(number_text(m.algbw_gbps, 3), "n") +
         td(number_text(m.busbw_gbps, 3), "n") + td(number_text(m.pct_bound, 1), "n") +
         td(interval_text(m.pct_bound_ci, 1)) + td(number_text(m.pct_expected, 1), "n") +
         td(number_text(m.efficiency, 3), "n") + td(interval_text(m.efficiency_ci, 3)) + td(slowest, "wrap") +
         td(fmt::format("{}", m.samples), "n") + "</tr>\n";
}

std::string measured_table(const WeakScalingGroup& g) {
  std::string body = "<h3>Measured</h3>\n<div class=\"table-wrap\"><table class=\"measured\">";
  body += th_row({{"N", true},
                  {"domains", true},
                  {"packing", false},
                  {"time p50 (us)", true},
                  {"p99 (us)", true},
                  {"algbw (GB/s)", true},
                  {"busbw (GB/s)", true},
                  {"% bound", true},
                  {"% bound CI", false},
                  {"% expected", true},
                  {"E(N)", true},
                  {"E(N) CI", false},
                  {"slowest rank (host)", false},
                  {"samples", true}});
  body += "<tbody>\n";
  for (const auto& m : g.measured) body += measured_row(m);
  body += "</tbody></table></div>\n";
  std::vector<std::string> sources, notes;
  for (const auto& m : g.measured) {
    if (!m.bound_source.empty() && std::find(sources.begin(), sources.end(), m.bound_source) == sources.end()) {
      sources.push_back(m.bound_source);
    }
    for (const auto& n : m.notes) notes.push_back(fmt::format("N={} ({}:{}): {}", m.num_ranks, m.file, m.line, n));
  }
  if (!sources.empty())
    body += "<p class=\"muted\">Bounds from: " + esc(fmt::format("{}", fmt::join(sources, "; "))) + ".</p>\n";
  return body + list_items(notes);
}

std::string projected_row(const ProjectedPoint& p, double warn_factor) {
  std::string extra = fmt::format("{:.3g}x", p.extrapolation);
  if (p.extrapolation_warning) {
    extra += fmt::format(" <span class=\"badge fail\">model only: beyond {:g}x</span>", warn_factor);
  }
  return "<tr class=\"projected\">" + td(fmt::format("{} (projected)", p.num_ranks), "n") +
         td(esc(p.packing) + (p.uneven ? " <span class=\"badge fail\">uneven</span>" : "")) + td(esc(p.system)) +
         td(number_text(p.bound_time_us, 2), "n") + td(number_text(p.bound_busbw_gbps, 3), "n") +
         td(number_text(p.projected_time_us, 2), "n") + td(number_text(p.projected_busbw_gbps, 3), "n") +
         td(number_text(p.efficiency, 3), "n") + td(interval_text(p.pi, 3)) + td(number_text(p.pct_bound, 1), "n") +
         td(interval_text(p.pct_bound_pi, 1)) + td(extra) + "</tr>\n";
}

std::string projected_table(const WeakScalingGroup& g, double warn_factor) {
  if (g.projected.empty()) return "";
  std::string body = "<h3>Projected (model, not measured) " + html::badge("projected") + "</h3>\n";
  body += fmt::format("<p class=\"muted\">Calibrated at N={}: efficiency vs bound {} {}.</p>\n", g.calibration_ranks,
                      number_text(g.calibration_efficiency, 3), interval_text(g.calibration_ci, 3));
  body += "<div class=\"table-wrap\"><table class=\"projected\">";
  body += th_row({{"N", true},
                  {"packing", false},
                  {"system", false},
                  {"bound time (us)", true},
                  {"bound busbw (GB/s)", true},
                  {"projected time (us)", true},
                  {"projected busbw (GB/s)", true},
                  {"projected E(N)", true},
                  {"E(N) prediction interval", false},
                  {"projected % bound", true},
                  {"% bound PI", false},
                  {"extrapolation", false}});
  body += "<tbody>\n";
  std::vector<std::string> pnotes;
  for (const auto& p : g.projected) {
    body += projected_row(p, warn_factor);
    for (const auto& n : p.notes) pnotes.push_back(fmt::format("projected N={}: {}", p.num_ranks, n));
  }
  return body + "</tbody></table></div>\n" + list_items(pnotes);
}

std::string group_section(const WeakScalingGroup& g, std::size_t gi, double warn_factor) {
  const std::string title = fmt::format("{} · {} · {} · {}/rank · {} · {} · {}{}", g.collective, g.algo, g.dtype,
                                        format_bytes(g.bytes_per_rank), g.scope, g.backend,
                                        g.in_place ? "in-place" : "out-of-place", g.redop ? " · " + *g.redop : "");
  std::string body = fmt::format("<section class=\"group\" id=\"group-{}\"><h2>{}</h2>\n", gi, esc(title));
  body += fmt::format("<p class=\"muted\">bytes per rank {}, timing {}, reference N0 = {}</p>\n", g.bytes_per_rank,
                      esc(g.timing), g.reference_ranks > 0 ? std::to_string(g.reference_ranks) : std::string("none"));
  body += group_charts(g);
  body += measured_table(g);
  body += projected_table(g, warn_factor);
  body += list_items(g.notes);
  return body + "</section>\n";
}

}  // namespace

std::string render_weak_scaling_html(const WeakScalingReport& rep, const std::vector<record::InputFile>& files,
                                     const HtmlContext& ctx) {
  const Counts counts = count_points(rep);
  std::string body = summary_section(rep, counts);
  for (std::size_t gi = 0; gi < rep.groups.size(); ++gi) {
    body += group_section(rep.groups[gi], gi, rep.extrapolation_warn_factor);
  }
  if (!rep.notes.empty()) body += "<section class=\"notes\"><h2>Notes</h2>" + list_items(rep.notes) + "</section>\n";
  std::string inputs = "<section class=\"inputs\"><h2>busbw vs message size per input</h2>\n";
  for (const auto& f : files) inputs += fmt::format("<h3><code>{}</code></h3>\n", esc(f.path)) + html::busbw_charts(f);
  body += inputs + "</section>\n";
  body += html::provenance_section(files);
  std::string subtitle = esc(fmt::format("{} group(s) from {} file(s)", rep.groups.size(), files.size()));
  if (rep.projection_system) {
    subtitle += fmt::format(" · {} projected point(s) on {}", counts.projected, esc(*rep.projection_system));
  }
  if (counts.flagged) {
    subtitle += fmt::format(" · {} beyond {:g}x the largest measured N", counts.flagged, rep.extrapolation_warn_factor);
  }
  return html::page(rep.title, subtitle, body, ctx);
}

}  // namespace collbench::report
