// Acceptance writers.
#include "collbench/accept/writers.hpp"

#include <fmt/format.h>

#include <cmath>

#include "collbench/accept/metric.hpp"
#include "collbench/core/units.hpp"
#include "collbench/report/escape.hpp"

namespace collbench::accept {
namespace {

std::optional<double> value_of(const Row& row, const std::string& metric) {
  if (metric == "busbw_gbps") return row.busbw;
  if (metric == "algbw_gbps") return row.algbw;
  if (metric == "interference") return row.interference;
  return row.time;
}

using report::md_escape;
using report::xml_escape;

// Prometheus label values: backslash, double quote and newline are escaped.
std::string prom_escape(std::string_view s) {
  std::string out;
  for (char ch : s) {
    if (ch == '\\')
      out += "\\\\";
    else if (ch == '"')
      out += "\\\"";
    else if (ch == '\n')
      out += "\\n";
    else
      out += ch;
  }
  return out;
}

std::string prom_number(double v) {
  if (std::isnan(v)) return "NaN";
  if (std::isinf(v)) return v > 0 ? "+Inf" : "-Inf";
  return fmt::format("{}", v);  // shortest exact form: timestamps keep every digit
}

std::string ranks_text(const Row& r) {
  return r.num_ranks == 1 ? fmt::format("{}", r.first_rank)
                          : fmt::format("{}-{}", r.first_rank, r.first_rank + r.num_ranks - 1);
}

std::string row_labels(const AcceptReport& rep, const Row& r) {
  return fmt::format(R"(profile="{}",check="{}",size="{}",domain="{}",ranks="{}")", prom_escape(rep.profile),
                     prom_escape(r.check), prom_escape(format_bytes(r.bytes)),
                     r.domain < 0 ? std::string("all") : std::to_string(r.domain), ranks_text(r));
}

std::string summary_line(const AcceptReport& r) {
  return fmt::format("{}: {} check(s): {} PASS, {} FAIL, {} WAIVED", r.exit_code() == 0 ? "PASS" : "FAIL",
                     r.rows.size(), r.count(Verdict::pass), r.count(Verdict::fail), r.count(Verdict::waived));
}

nlohmann::json opt(const std::optional<double>& v) {
  return v ? nlohmann::json(*v) : nlohmann::json(nullptr);
}

}  // namespace

std::string measured_text(const Row& row) {
  const auto v = value_of(row, row.primary_metric);
  if (!v) return "-";
  return metric_word(row.primary_metric) + " " + format_metric(row.primary_metric, *v);
}

std::string threshold_text(const Row& row) {
  std::string out;
  for (const auto& l : row.limits) {
    std::string part;
    const std::string cmp = lower_is_better(l.metric) ? "<=" : ">=";
    if (l.kind == "fraction_of_bound" || l.kind == "fraction_of_expected") {
      part = fmt::format("{} {:g} x {}", cmp, l.required, l.kind == "fraction_of_bound" ? "bound" : "expected");
      part += l.limit ? " = " + format_metric(l.metric, *l.limit) : std::string(" (no model)");
    } else {
      part = fmt::format("{} {} {}", cmp, format_metric(l.metric, l.required), metric_word(l.metric));
    }
    out += (out.empty() ? "" : "; ") + part;
  }
  return out.empty() ? "-" : out;
}

std::string render_accept_table(const AcceptReport& r) {
  std::string out = fmt::format("# collbench accept {} ({}): {} ranks, bounds from {}\n", r.profile, r.source,
                                r.num_ranks, r.system.empty() ? "no system profile (" + r.system_note + ")" : r.system);
  out += fmt::format("#{:<22} {:>9} {:<22} {:<20} {:<34} {:<7} {}\n", "check", "size", "domain/ranks", "measured",
                     "threshold", "verdict", "reason");
  for (const auto& row : r.rows) {
    out += fmt::format(" {:<22} {:>9} {:<22} {:<20} {:<34} {:<7} {}\n", row.check, format_bytes(row.bytes),
                       row.domain_label, measured_text(row), threshold_text(row), to_string(row.verdict), row.reason);
  }
  for (const auto& n : r.notes) out += "# note: " + n + "\n";
  out += fmt::format("# {} -> exit {}\n", summary_line(r), r.exit_code());
  return out;
}

nlohmann::json accept_to_json(const AcceptReport& r) {
  using json = nlohmann::json;
  json rows = json::array();
  for (const auto& row : r.rows) {
    json limits = json::array();
    for (const auto& l : row.limits) {
      limits.push_back({{"kind", l.kind},
                        {"required", l.required},
                        {"limit", opt(l.limit)},
                        {"metric", l.metric},
                        {"measured", opt(l.measured)},
                        {"judged", l.judged},
                        {"passed", l.passed},
                        {"note", l.note.empty() ? json(nullptr) : json(l.note)}});
    }
    rows.push_back(
        {{"check", row.check},
         {"description", row.description},
         {"collective", row.collective},
         {"algo", row.algo},
         {"dtype", row.dtype},
         {"scope", row.scope},
         {"bytes", row.bytes},
         {"domain", row.domain < 0 ? json(nullptr) : json(row.domain)},
         {"first_rank", row.first_rank},
         {"num_ranks", row.num_ranks},
         {"domain_label", row.domain_label},
         {"policy", row.policy_text},
         {"repetitions", {{"busbw_gbps", row.busbw_gbps}, {"algbw_gbps", row.algbw_gbps}, {"time_us", row.time_us}}},
         {"busbw_gbps", opt(row.busbw)},
         {"algbw_gbps", opt(row.algbw)},
         {"time_us", opt(row.time)},
         {"interference", opt(row.interference)},
         {"model",
          {{"bound_busbw_gbps", opt(row.bound_busbw_gbps)},
           {"expected_busbw_gbps", opt(row.expected_busbw_gbps)},
           {"bound_time_us", opt(row.bound_time_us)},
           {"expected_time_us", opt(row.expected_time_us)},
           {"note", row.model_note.empty() ? json(nullptr) : json(row.model_note)}}},
         {"limits", limits},
         {"primary_metric", row.primary_metric},
         {"verdict", to_string(row.verdict)},
         {"reason", row.reason},
         {"evidence", row.evidence},
         {"timed_s", row.timed_s}});
  }
  return {{"schema", kAcceptSchema},
          {"profile", r.profile},
          {"source", r.source},
          {"description", r.description},
          {"system", r.system.empty() ? json(nullptr) : json(r.system)},
          {"system_note", r.system_note.empty() ? json(nullptr) : json(r.system_note)},
          {"num_ranks", r.num_ranks},
          {"started_at", r.started_at},
          {"finished_at", r.finished_at},
          {"duration_s", r.duration_s},
          {"fault", r.fault ? json(*r.fault) : json(nullptr)},
          {"record_files", r.record_files},
          {"counts",
           {{"total", r.rows.size()},
            {"pass", r.count(Verdict::pass)},
            {"fail", r.count(Verdict::fail)},
            {"waived", r.count(Verdict::waived)}}},
          {"verdict", r.exit_code() == 0 ? "PASS" : "FAIL"},
          {"exit_code", r.exit_code()},
          {"rows", rows},
          {"notes", r.notes}};
}

std::string render_accept_markdown(const AcceptReport& r) {
  std::string out = fmt::format("# Acceptance `{}`: {}\n\n", md_escape(r.profile), summary_line(r));
  if (!r.description.empty()) out += md_escape(r.description) + "\n\n";
  out += fmt::format(
      "- profile: `{}`\n- ranks: {}\n- bounds from: {}\n", md_escape(r.source), r.num_ranks,
      r.system.empty() ? "no system profile (" + md_escape(r.system_note) + ")" : "`" + md_escape(r.system) + "`");
  if (!r.started_at.empty()) out += fmt::format("- run: {} to {}\n", r.started_at, r.finished_at);
  if (r.fault) out += fmt::format("- injected fault: `{}`\n", md_escape(*r.fault));
  for (const auto& f : r.record_files) out += fmt::format("- records: `{}`\n", md_escape(f));
  out += "\n| check | size | domain / ranks | measured | threshold | verdict | reason |\n";
  out += "|---|---:|---|---|---|---|---|\n";
  for (const auto& row : r.rows) {
    out += fmt::format("| {} | {} | {} | {} | {} | **{}** | {} |\n", md_escape(row.check), format_bytes(row.bytes),
                       md_escape(row.domain_label), md_escape(measured_text(row)), md_escape(threshold_text(row)),
                       to_string(row.verdict), md_escape(row.reason));
  }
  for (const auto& n : r.notes) out += fmt::format("\n> note: {}\n", md_escape(n));
  return out;
}

std::string render_accept_junit(const AcceptReport& r) {
  const std::size_t failures = r.count(Verdict::fail), skipped = r.count(Verdict::waived);
  const std::string counts =
      fmt::format(R"(tests="{}" failures="{}" errors="0" skipped="{}")", r.rows.size(), failures, skipped);
  std::string out = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n";
  // time: the suite's wall time (every measurement run); a testcase's, the timed seconds of its records.
  out += fmt::format("<testsuites name=\"collbench accept {}\" {} time=\"{:.3f}\">\n", xml_escape(r.profile), counts,
                     r.duration_s);
  out += fmt::format("  <testsuite name=\"collbench.accept.{}\" {} time=\"{:.3f}\"{}>\n", xml_escape(r.profile), counts,
                     r.duration_s,
                     r.started_at.empty() ? "" : fmt::format(" timestamp=\"{}\"", xml_escape(r.started_at)));
  out += "    <properties>\n";
  out += fmt::format("      <property name=\"profile\" value=\"{}\"/>\n", xml_escape(r.source));
  out += fmt::format("      <property name=\"system\" value=\"{}\"/>\n",
                     xml_escape(r.system.empty() ? "none: " + r.system_note : r.system));
  out += fmt::format("      <property name=\"num_ranks\" value=\"{}\"/>\n", r.num_ranks);
  if (r.fault) out += fmt::format("      <property name=\"fault\" value=\"{}\"/>\n", xml_escape(*r.fault));
  out += "    </properties>\n";
  for (const auto& row : r.rows) {
    const std::string details =
        fmt::format("measured {}; threshold {}; {}", measured_text(row), threshold_text(row), row.reason);
    out += fmt::format("    <testcase classname=\"collbench.accept.{}.{}\" name=\"{} {}\" time=\"{:.3f}\">\n",
                       xml_escape(r.profile), xml_escape(row.check), xml_escape(format_bytes(row.bytes)),
                       xml_escape(row.domain_label), row.timed_s);
    if (row.verdict == Verdict::fail) {
      out += fmt::format("      <failure type=\"FAIL\" message=\"{}\">{}</failure>\n", xml_escape(row.reason),
                         xml_escape(details));
    } else if (row.verdict == Verdict::waived) {
      out += fmt::format("      <skipped message=\"{}\"/>\n", xml_escape(row.reason));
    }
    out += fmt::format("      <system-out>{}: {}</system-out>\n", to_string(row.verdict), xml_escape(details));
    out += "    </testcase>\n";
  }
  out += "  </testsuite>\n</testsuites>\n";
  return out;
}

std::string render_accept_prometheus(const AcceptReport& r) {
  std::string out;
  const auto family = [&out](const char* name, const char* help) {
    out += fmt::format("# HELP {} {}\n# TYPE {} gauge\n", name, help, name);
  };
  family("collbench_accept_check_status",
         "Verdict of one acceptance check (check x size x domain): 1 for the verdict it got, 0 for the others.");
  for (const auto& row : r.rows) {
    for (const Verdict v : {Verdict::pass, Verdict::fail, Verdict::waived}) {
      out += fmt::format("collbench_accept_check_status{{{},verdict=\"{}\"}} {}\n", row_labels(r, row), to_string(v),
                         row.verdict == v ? 1 : 0);
    }
  }
  const auto per_row = [&](const char* name, const char* help, auto value) {
    bool any = false;
    for (const auto& row : r.rows) any = any || value(row).has_value();
    if (!any) return;
    family(name, help);
    for (const auto& row : r.rows) {
      if (const auto v = value(row)) out += fmt::format("{}{{{}}} {}\n", name, row_labels(r, row), prom_number(*v));
    }
  };
  per_row("collbench_accept_measured_busbw_gbps", "Measured bus bandwidth after the repetition policy, GB/s (1e9 B/s).",
          [](const Row& row) { return row.busbw; });
  per_row("collbench_accept_measured_algbw_gbps", "Measured algorithm bandwidth after the repetition policy, GB/s.",
          [](const Row& row) { return row.algbw; });
  per_row("collbench_accept_measured_time_us", "Measured p50 time after the repetition policy, microseconds.",
          [](const Row& row) { return row.time; });
  per_row("collbench_accept_bound_busbw_gbps", "The model's physical bound on busbw for the check, GB/s.",
          [](const Row& row) { return row.bound_busbw_gbps; });
  per_row("collbench_accept_expected_busbw_gbps", "The model's expected busbw for the check, GB/s.",
          [](const Row& row) { return row.expected_busbw_gbps; });
  bool any_limit = false;
  for (const auto& row : r.rows) {
    for (const auto& l : row.limits) any_limit = any_limit || l.limit.has_value();
  }
  if (any_limit) {
    family("collbench_accept_threshold",
           "A check's limit in the unit of its metric (metric label), from the kind of threshold.");
    for (const auto& row : r.rows) {
      for (const auto& l : row.limits) {
        if (!l.limit) continue;
        out += fmt::format("collbench_accept_threshold{{{},kind=\"{}\",metric=\"{}\"}} {}\n", row_labels(r, row),
                           l.kind, l.metric, prom_number(*l.limit));
      }
    }
  }
  family("collbench_accept_checks", "Number of acceptance checks (check x size x domain) per verdict in the last run.");
  for (const Verdict v : {Verdict::pass, Verdict::fail, Verdict::waived}) {
    out += fmt::format("collbench_accept_checks{{profile=\"{}\",verdict=\"{}\"}} {}\n", prom_escape(r.profile),
                       to_string(v), r.count(v));
  }
  family("collbench_accept_success", "1 when every acceptance check passed (exit code 0), else 0.");
  out += fmt::format("collbench_accept_success{{profile=\"{}\"}} {}\n", prom_escape(r.profile),
                     r.exit_code() == 0 ? 1 : 0);
  family("collbench_accept_ranks", "Ranks in the last acceptance run.");
  out += fmt::format("collbench_accept_ranks{{profile=\"{}\"}} {}\n", prom_escape(r.profile), r.num_ranks);
  family("collbench_accept_last_run_timestamp_seconds", "Unix time at which the last acceptance run finished.");
  out += fmt::format("collbench_accept_last_run_timestamp_seconds{{profile=\"{}\"}} {}\n", prom_escape(r.profile),
                     prom_number(r.finished_unix));
  return out;
}

}  // namespace collbench::accept
