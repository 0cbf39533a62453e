// Acceptance HTML page and verdict.json reader (html.hpp).
#include "collbench/accept/html.hpp"

#include <fmt/format.h>

#include <cmath>

#include "collbench/accept/metric.hpp"
#include "collbench/accept/writers.hpp"
#include "collbench/core/error.hpp"
#include "collbench/core/units.hpp"
#include "collbench/report/escape.hpp"
#include "collbench/report/svg.hpp"

namespace collbench::accept {
namespace {

using json = nlohmann::json;
namespace html = report::html;

// ---- reading verdict.json --------------------------------------------------------------------

struct VerdictReader {
  const std::string& path;

  [[noreturn]] void fail(const std::string& where, const std::string& what) const {
    throw InputError(
        fmt::format("{}: {}: {} (expected an acceptance verdict, schema {}, as `collbench accept "
                    "--out-dir` writes it to verdict.json)",
                    path, where, what, kAcceptSchema));
  }
  const json& need(const json& j, const char* key, const std::string& where) const {
    if (!j.is_object() || !j.contains(key)) fail(where, fmt::format("missing key '{}'", key));
    return j[key];
  }
  std::string str(const json& j, const char* key, const std::string& where, bool nullable = false) const {
    const json& v = need(j, key, where);
    if (nullable && v.is_null()) return "";
    if (!v.is_string()) fail(where, fmt::format("'{}' must be a string", key));
    return v.get<std::string>();
  }
  double number(const json& j, const char* key, const std::string& where) const {
    const json& v = need(j, key, where);
    if (!v.is_number()) fail(where, fmt::format("'{}' must be a number", key));
    return v.get<double>();
  }
  std::optional<double> opt_number(const json& j, const char* key, const std::string& where) const {
    if (!j.contains(key) || j[key].is_null()) return std::nullopt;
    if (!j[key].is_number()) fail(where, fmt::format("'{}' must be a number or null", key));
    return j[key].get<double>();
  }
  std::vector<double> numbers(const json& j, const char* key, const std::string& where) const {
    std::vector<double> out;
    if (!j.contains(key) || j[key].is_null()) return out;
    if (!j[key].is_array()) fail(where, fmt::format("'{}' must be an array", key));
    for (const auto& v : j[key]) {
      if (!v.is_number()) fail(where, fmt::format("'{}' must hold numbers", key));
      out.push_back(v.get<double>());
    }
    return out;
  }
  std::vector<std::string> strings(const json& j, const char* key, const std::string& where) const {
    std::vector<std::string> out;
    if (!j.contains(key) || j[key].is_null()) return out;
    if (!j[key].is_array()) fail(where, fmt::format("'{}' must be an array", key));
    for (const auto& v : j[key]) {
      if (!v.is_string()) fail(where, fmt::format("'{}' must hold strings", key));
      out.push_back(v.get<std::string>());
    }
    return out;
  }
};

Verdict parse_verdict(const VerdictReader& rd, const std::string& text, const std::string& where) {
  if (text == "PASS") return Verdict::pass;
  if (text == "FAIL") return Verdict::fail;
  if (text == "WAIVED") return Verdict::waived;
  rd.fail(where, fmt::format("verdict '{}' is not PASS, FAIL or WAIVED", text));
}

std::string esc(std::string_view s) {
  return report::xml_escape(s);
}

std::string td(const std::string& html_text, std::string_view cls = "") {
  return cls.empty() ? "<td>" + html_text + "</td>" : fmt::format(R"(<td class="{}">{}</td>)", cls, html_text);
}

std::string verdict_class(Verdict v) {
  switch (v) {
    case Verdict::pass:
      return "pass";
    case Verdict::fail:
      return "fail";
    default:
      return "waived";
  }
}

}  // namespace

namespace {

// One limit of a row ("rows[i].limits[k]").
LimitResult limit_from_json(const VerdictReader& rd, const json& l, const std::string& lw) {
  LimitResult lr;
  lr.kind = rd.str(l, "kind", lw);
  lr.required = rd.number(l, "required", lw);
  lr.limit = rd.opt_number(l, "limit", lw);
  lr.metric = rd.str(l, "metric", lw);
  lr.measured = rd.opt_number(l, "measured", lw);
  lr.judged = l.contains("judged") && l["judged"].is_boolean() && l["judged"].get<bool>();
  lr.passed = l.contains("passed") && l["passed"].is_boolean() && l["passed"].get<bool>();
  if (l.contains("note") && l["note"].is_string()) lr.note = l["note"].get<std::string>();
  return lr;
}

// The metric the "measured" column shows: the file's, else judge.cpp's rule from the limits.
std::string primary_metric_of(const json& x, const Row& row) {
  if (x.contains("primary_metric") && x["primary_metric"].is_string()) return x["primary_metric"].get<std::string>();
  bool bus = false, alg = false, ratio = false, time = false;
  for (const auto& l : row.limits) {
    bus |= l.kind == "fraction_of_bound" || l.kind == "fraction_of_expected" || l.kind == "min_busbw_gbps";
    alg |= l.kind == "min_algbw_gbps";
    ratio |= l.kind == "max_interference";
    time |= l.kind == "max_time_us";
  }
  if (bus && row.busbw && *row.busbw == 0.0 && row.time) return "time_us";
  return bus ? "busbw_gbps" : alg ? "algbw_gbps" : (ratio && !time) ? "interference" : "time_us";
}

// The measured figures of a row: its repetitions, the values judged and the model beside them.
void measured_from_json(const VerdictReader& rd, const json& x, const std::string& where, Row& row) {
  if (x.contains("repetitions") && x["repetitions"].is_object()) {
    const json& reps = x["repetitions"];
    row.busbw_gbps = rd.numbers(reps, "busbw_gbps", where + ".repetitions");
    row.algbw_gbps = rd.numbers(reps, "algbw_gbps", where + ".repetitions");
    row.time_us = rd.numbers(reps, "time_us", where + ".repetitions");
  }
  row.busbw = rd.opt_number(x, "busbw_gbps", where);
  row.algbw = rd.opt_number(x, "algbw_gbps", where);
  row.time = rd.opt_number(x, "time_us", where);
  row.interference = rd.opt_number(x, "interference", where);
  if (x.contains("model") && x["model"].is_object()) {
    const json& m = x["model"];
    row.bound_busbw_gbps = rd.opt_number(m, "bound_busbw_gbps", where + ".model");
    row.expected_busbw_gbps = rd.opt_number(m, "expected_busbw_gbps", where + ".model");
    row.bound_time_us = rd.opt_number(m, "bound_time_us", where + ".model");
    row.expected_time_us = rd.opt_number(m, "expected_time_us", where + ".model");
    if (m.contains("note") && m["note"].is_string()) row.model_note = m["note"].get<std::string>();
  }
}

// One row of the verdict ("rows[i]").
Row row_from_json(const VerdictReader& rd, const json& x, const std::string& where) {
  if (!x.is_object()) rd.fail(where, "not an object");
  Row row;
  row.check = rd.str(x, "check", where);
  row.description = rd.str(x, "description", where, true);
  row.collective = rd.str(x, "collective", where);
  row.algo = rd.str(x, "algo", where, true);
  row.dtype = rd.str(x, "dtype", where, true);
  row.scope = rd.str(x, "scope", where, true);
  const double bytes = rd.number(x, "bytes", where);
  if (bytes < 0) rd.fail(where, "'bytes' must not be negative");
  row.bytes = static_cast<std::uint64_t>(bytes);
  row.domain = x.contains("domain") && x["domain"].is_number_integer() ? x["domain"].get<int>() : -1;
  row.first_rank = static_cast<int>(rd.number(x, "first_rank", where));
  row.num_ranks = static_cast<int>(rd.number(x, "num_ranks", where));
  row.domain_label = rd.str(x, "domain_label", where, true);
  row.policy_text = x.contains("policy") && x["policy"].is_string() ? x["policy"].get<std::string>() : "";
  measured_from_json(rd, x, where, row);
  if (x.contains("limits") && x["limits"].is_array()) {
    for (std::size_t k = 0; k < x["limits"].size(); ++k) {
      row.limits.push_back(limit_from_json(rd, x["limits"][k], fmt::format("{}.limits[{}]", where, k)));
    }
  }
  row.primary_metric = primary_metric_of(x, row);
  row.verdict = parse_verdict(rd, rd.str(x, "verdict", where), where);
  row.reason = rd.str(x, "reason", where, true);
  row.evidence = rd.strings(x, "evidence", where);
  return row;
}

}  // namespace

AcceptReport accept_from_json(const json& j, const std::string& path) {
  const VerdictReader rd{path};
  if (!j.is_object()) rd.fail("top level", "not a JSON object");
  const std::string schema = j.contains("schema") && j["schema"].is_string() ? j["schema"].get<std::string>() : "";
  if (schema != kAcceptSchema) {
    rd.fail("schema", schema.empty() ? std::string("no 'schema' key") : fmt::format("schema is '{}'", schema));
  }
  AcceptReport r;
  r.profile = rd.str(j, "profile", "top level");
  r.source = rd.str(j, "source", "top level");
  r.description = rd.str(j, "description", "top level", true);
  r.system = rd.str(j, "system", "top level", true);
  r.system_note = rd.str(j, "system_note", "top level", true);
  r.num_ranks = static_cast<int>(rd.number(j, "num_ranks", "top level"));
  r.started_at = rd.str(j, "started_at", "top level", true);
  r.finished_at = rd.str(j, "finished_at", "top level", true);
  if (j.contains("fault") && j["fault"].is_string()) r.fault = j["fault"].get<std::string>();
  r.record_files = rd.strings(j, "record_files", "top level");
  r.notes = rd.strings(j, "notes", "top level");
  const json& rows = rd.need(j, "rows", "top level");
  if (!rows.is_array()) rd.fail("rows", "'rows' must be an array");
  for (std::size_t i = 0; i < rows.size(); ++i)
    r.rows.push_back(row_from_json(rd, rows[i], fmt::format("rows[{}]", i)));
  return r;
}

namespace {

// The summary section: the counts, the profile, the run and its record files.
std::string accept_html_summary(const AcceptReport& r) {
  const bool pass = r.exit_code() == 0;
  const std::size_t n_pass = r.count(Verdict::pass), n_fail = r.count(Verdict::fail),
                    n_waived = r.count(Verdict::waived);
  std::string body = "<section class=\"summary\"><h2>Summary</h2>\n";
  body += fmt::format(
      "<p><span class=\"verdict {}\">{}</span> <span class=\"muted\">&nbsp;{} of {} check(s) passed, {} failed, "
      "{} waived; exit code {}</span></p>\n",
      pass ? "pass" : "fail", pass ? "PASS" : "FAIL", n_pass, r.rows.size(), n_fail, n_waived, r.exit_code());
  body += html::cards({{"PASS", fmt::format("{}", n_pass), "pass"},
                       {"FAIL", fmt::format("{}", n_fail), n_fail ? "fail" : ""},
                       {"WAIVED", fmt::format("{}", n_waived), n_waived ? "waived" : ""},
                       {"ranks", fmt::format("{}", r.num_ranks), ""},
                       {"bounds from", r.system.empty() ? std::string("no system profile") : r.system, ""}});
  if (!r.description.empty()) body += "<p>" + esc(r.description) + "</p>\n";
  body += "<dl class=\"kv\">";
  body += "<dt>profile</dt><dd><code>" + esc(r.source) + "</code></dd>";
  if (!r.system.empty()) {
    body += "<dt>system profile</dt><dd>" + esc(r.system) + "</dd>";
  } else {
    body += "<dt>system profile</dt><dd>none (" + esc(r.system_note) + ")</dd>";
  }
  if (!r.started_at.empty()) body += "<dt>run</dt><dd>" + esc(r.started_at) + " to " + esc(r.finished_at) + "</dd>";
  if (r.fault) body += "<dt>injected fault</dt><dd><strong>" + esc(*r.fault) + "</strong></dd>";
  for (const auto& f : r.record_files) body += "<dt>records</dt><dd><code>" + esc(f) + "</code></dd>";
  body += "</dl>\n";
  if (r.fault) {
    body +=
        "<div class=\"warning\">A fault was injected on purpose (COLLBENCH_FAULT): these verdicts test the "
        "tooling, not the system.</div>\n";
  }
  body += "</section>\n";
  return body;
}

// The headroom chart: per row with a judged limit, how far the measured value is from it (the
// first judged limit of the row); `not_charted`: the rows without one.
report::svg::BarChart accept_html_headroom_chart(const AcceptReport& r, std::size_t& not_charted) {
  report::svg::BarChart chart;
  chart.title = "Headroom: measured over the limit (first judged limit of each check, log scale)";
  chart.y_label = "measured / limit (time, interference: limit / measured)";
  chart.reference = report::svg::ReferenceLine{1.0, "limit (above: meets it)", report::svg::Stroke::dashed};
  chart.log_y = true;
  not_charted = 0;
  for (const auto& row : r.rows) {
    const LimitResult* judged = nullptr;
    for (const auto& l : row.limits) {
      if (l.judged && l.limit && l.measured && *l.limit > 0.0 && *l.measured > 0.0) {
        judged = &l;
        break;
      }
    }
    if (!judged) {
      ++not_charted;
      continue;
    }
    const double ratio =
        lower_is_better(judged->metric) ? *judged->limit / *judged->measured : *judged->measured / *judged->limit;
    const std::string label = fmt::format("{} {}{}", row.check, format_bytes(row.bytes),
                                          row.domain >= 0 ? fmt::format(" d{}", row.domain) : std::string());
    chart.bars.push_back({label, ratio, verdict_class(row.verdict),
                          fmt::format("{} {} {}: {} ({}): {}", row.check, format_bytes(row.bytes), row.domain_label,
                                      to_string(row.verdict), judged->kind, row.reason)});
  }
  chart.width = std::clamp(static_cast<int>(chart.bars.size()) * 46 + 120, 640, 1200);
  return chart;
}

// One row of the verdict table.
std::string accept_html_row(const Row& row) {
  std::string model = "–";
  if (row.bound_busbw_gbps || row.expected_busbw_gbps) {
    model = fmt::format("{} / {} GB/s", row.bound_busbw_gbps ? fmt::format("{:.4g}", *row.bound_busbw_gbps) : "–",
                        row.expected_busbw_gbps ? fmt::format("{:.4g}", *row.expected_busbw_gbps) : "–");
  } else if (!row.model_note.empty()) {
    model = row.model_note;
  }
  std::string reason = esc(row.reason);
  if (!row.evidence.empty()) {
    reason += "<ul class=\"notes\">";
    for (const auto& e : row.evidence) reason += "<li>" + esc(e) + "</li>";
    reason += "</ul>";
  }
  std::string check_cell = "<strong>" + esc(row.check) + "</strong>";
  if (!row.description.empty()) check_cell += "<br><span class=\"muted\">" + esc(row.description) + "</span>";
  check_cell += "<br><span class=\"muted\">" +
                esc(fmt::format("{} {} {} {}", row.collective, row.dtype, row.algo, row.scope)) + "</span>";
  std::string measured = esc(measured_text(row));
  if (!row.policy_text.empty()) measured += "<br><span class=\"muted\">" + esc(row.policy_text) + "</span>";
  return fmt::format("<tr class=\"verdict-row {}\">", verdict_class(row.verdict)) + td(check_cell, "wrap") +
         fmt::format(R"(<td class="n" title="{} bytes">{}</td>)", row.bytes, esc(format_bytes(row.bytes))) +
         td(esc(row.domain_label)) + td(measured) + td(esc(threshold_text(row)), "wrap") + td(esc(model), "wrap") +
         td(html::badge(std::string(to_string(row.verdict)))) + td(reason, "wrap") + "</tr>\n";
}

// The verdicts section: the headroom chart, the table and the notes.
std::string accept_html_verdicts(const AcceptReport& r, const std::vector<std::string>& notes) {
  std::size_t not_charted = 0;
  const report::svg::BarChart chart = accept_html_headroom_chart(r, not_charted);
  std::string body = "<section class=\"verdicts\"><h2>Verdicts</h2>\n";
  if (!chart.bars.empty()) {
    body += "<div class=\"charts\">" + report::svg::render_bar_chart(chart) + "</div>\n";
    if (not_charted) {
      body += fmt::format("<p class=\"note\">{} row(s) without a judged limit are not charted (see the table).</p>\n",
                          not_charted);
    }
  }
  body +=
      "<div class=\"table-wrap\"><table class=\"verdicts\"><thead><tr><th>check</th><th class=\"n\">size</th>"
      "<th>domain / ranks</th><th>measured</th><th>threshold</th><th>model bound / expected busbw</th>"
      "<th>verdict</th><th>reason</th></tr></thead><tbody>\n";
  for (const auto& row : r.rows) body += accept_html_row(row);
  body += "</tbody></table></div>\n";
  std::vector<std::string> all_notes = r.notes;
  all_notes.insert(all_notes.end(), notes.begin(), notes.end());
  if (!all_notes.empty()) {
    body += "<h3>Notes</h3><ul class=\"notes\">";
    for (const auto& n : all_notes) body += "<li>" + esc(n) + "</li>";
    body += "</ul>\n";
  }
  body += "</section>\n";
  return body;
}

}  // namespace

std::string render_accept_html(const AcceptReport& r, const std::vector<record::InputFile>& records,
                               const report::HtmlContext& ctx, const std::vector<std::string>& notes) {
  const bool pass = r.exit_code() == 0;
  const std::size_t n_pass = r.count(Verdict::pass), n_fail = r.count(Verdict::fail),
                    n_waived = r.count(Verdict::waived);
  std::string body = accept_html_summary(r) + accept_html_verdicts(r, notes);
  if (records.empty()) {
    body +=
        "<section class=\"provenance\"><h2>Provenance</h2><p class=\"note\">The record files of this run were "
        "not available: hosts, versions and the command line are unknown.</p></section>\n";
  } else {
    body += html::provenance_section(records, "Provenance (run headers of the record files)");
  }
  const std::string subtitle = fmt::format("profile <code>{}</code> · {} rank(s) · {} · {}", esc(r.profile),
                                           r.num_ranks, html::badge(pass ? "PASS" : "FAIL"),
                                           esc(fmt::format("{} PASS, {} FAIL, {} WAIVED", n_pass, n_fail, n_waived)));
  return html::page(fmt::format("Acceptance {}: {}", r.profile, pass ? "PASS" : "FAIL"), subtitle, body, ctx);
}

}  // namespace collbench::accept
