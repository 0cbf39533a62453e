// Acceptance writers.
#include "collbench/accept/writers.hpp"

#include <fmt/format.h>

#include <array>
#include <cmath>
#include <string_view>

#include "collbench/accept/metric.hpp"
#include "collbench/core/units.hpp"
#include "collbench/report/escape.hpp"
#include "collbench/report/gate_writers.hpp"

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

std::string row_labels(const Row& r) {
  return fmt::format(R"(check="{}",size="{}",domain="{}",ranks="{}")", prom_escape(r.check),
                     prom_escape(format_bytes(r.bytes)), r.domain < 0 ? std::string("all") : std::to_string(r.domain),
                     ranks_text(r));
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
    if (l.kind == "fraction_of_bound" || l.kind == "fraction_of_expected" || l.kind == "fraction_of_reference") {
      part = fmt::format("{} {:g} x {}", cmp, l.required,
                         l.kind == "fraction_of_bound"      ? "bound"
                         : l.kind == "fraction_of_expected" ? "expected"
                                                            : "reference");
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

namespace {

// One row of verdict.json: the check, its case, the measured values, the model, every limit and
// the verdict.
nlohmann::json accept_row_json(const Row& row) {
  nlohmann::json limits = nlohmann::json::array();
  for (const auto& l : row.limits) {
    limits.push_back({{"kind", l.kind},
                      {"required", l.required},
                      {"limit", opt(l.limit)},
                      {"metric", l.metric},
                      {"measured", opt(l.measured)},
                      {"judged", l.judged},
                      {"passed", l.passed},
                      {"note", l.note.empty() ? nlohmann::json(nullptr) : nlohmann::json(l.note)}});
  }
  nlohmann::json j{
      {"check", row.check},
      {"description", row.description},
      {"collective", row.collective},
      {"algo", row.algo},
      {"dtype", row.dtype},
      {"scope", row.scope},
      {"bytes", row.bytes},
      {"domain", row.domain < 0 ? nlohmann::json(nullptr) : nlohmann::json(row.domain)},
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
        {"note", row.model_note.empty() ? nlohmann::json(nullptr) : nlohmann::json(row.model_note)}}},
      {"limits", limits},
      {"primary_metric", row.primary_metric},
      {"verdict", to_string(row.verdict)},
      {"reason", row.reason},
      {"evidence", row.evidence},
      {"timed_s", row.timed_s}};
  if (row.beyond_checked_range) {  // fraction_of_expected judged against a reference (docs/acceptance.md)
    j["reference"] = {
        {"checked_range", row.checked_range},
        {"busbw_gbps", opt(row.reference_busbw_gbps)},
        {"source", row.reference_source.empty() ? nlohmann::json(nullptr) : nlohmann::json(row.reference_source)}};
  }
  return j;
}

}  // namespace

nlohmann::json accept_to_json(const AcceptReport& r) {
  using json = nlohmann::json;
  json rows = json::array();
  for (const auto& row : r.rows) rows.push_back(accept_row_json(row));
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
  // fmt::format rather than "literal" + std::string&&: that operator+ makes GCC 12 at -O3 report a
  // false -Wrestrict inside libstdc++ (GCC PR 105329).
  const std::string bounds = r.system.empty() ? fmt::format("no system profile ({})", md_escape(r.system_note))
                                              : fmt::format("`{}`", md_escape(r.system));
  out += fmt::format("- profile: `{}`\n- ranks: {}\n- bounds from: {}\n", md_escape(r.source), r.num_ranks, bounds);
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
  const std::string counts = fmt::format(R"(tests="{}" failures="{}" errors="0")", r.rows.size(), failures);
  std::string out = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n";
  // time: the suite's wall time (every measurement run); a testcase's, the timed seconds of its records.
  out += fmt::format("<testsuites name=\"collbench accept {}\" {} time=\"{:.3f}\">\n", xml_escape(r.profile), counts,
                     r.duration_s);
  out += fmt::format(
      "  <testsuite name=\"collbench.accept.{}\" {} skipped=\"{}\" time=\"{:.3f}\"{}>\n", xml_escape(r.profile), counts,
      skipped, r.duration_s,
      r.started_at.empty() ? "" : fmt::format(" timestamp=\"{}\"", xml_escape(report::junit_timestamp(r.started_at))));
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

namespace {

// Base units (Prometheus naming conventions): every value is written in bytes, seconds or a plain
// ratio, one metric family per unit. `mul`/`div` convert from the metric's JSON unit.
struct PromUnit {
  std::string_view metric;  // busbw_gbps, algbw_gbps, time_us, interference
  std::string_view suffix;  // the family name's unit suffix
  double mul, div;
};
constexpr std::array<PromUnit, 4> kPromUnits{{{"busbw_gbps", "bytes_per_second", 1e9, 1.0},
                                              {"algbw_gbps", "bytes_per_second", 1e9, 1.0},
                                              {"time_us", "seconds", 1.0, 1e6},
                                              {"interference", "ratio", 1.0, 1.0}}};

const PromUnit& prom_unit(std::string_view metric) {
  for (const auto& u : kPromUnits) {
    if (u.metric == metric) return u;
  }
  return kPromUnits.back();  // unreachable for a judged report: the judge knows only these metrics
}

double to_base(const PromUnit& u, double v) {
  return v * u.mul / u.div;
}

// The labels every series carries: where the file comes from, so that files of several racks in
// one textfile directory never repeat a series.
std::string source_labels(const AcceptReport& r, const PrometheusSource& src) {
  return fmt::format(R"(host="{}",rack="{}",run="{}",profile="{}")", prom_escape(src.host),
                     prom_escape(src.rack.empty() ? std::string("none") : src.rack), prom_escape(src.run),
                     prom_escape(r.profile));
}

class PromText {
 public:
  PromText(const AcceptReport& r, const PrometheusSource& src) : r_(r), source_(source_labels(r, src)) {}
  void family(std::string_view name, std::string_view help) {
    out_ += fmt::format("# HELP {} {}\n# TYPE {} gauge\n", name, help, name);
  }
  void sample(std::string_view name, std::string_view extra, double value) {
    out_ += fmt::format("{}{{{}{}{}}} {}\n", name, source_, extra.empty() ? "" : ",", extra, prom_number(value));
  }
  [[nodiscard]] std::string row(const Row& row) const { return row_labels(row); }
  // One family of per-row values (rows without a value are left out; no family when none has one).
  template <typename Value>
  void per_row(std::string_view name, std::string_view help, const PromUnit& unit, Value value) {
    bool any = false;
    for (const auto& row : r_.rows) any = any || value(row).has_value();
    if (!any) return;
    family(name, help);
    for (const auto& row : r_.rows) {
      if (const auto v = value(row)) sample(name, row_labels(row), to_base(unit, *v));
    }
  }
  std::string take() { return std::move(out_); }

 private:
  const AcceptReport& r_;
  std::string source_;
  std::string out_;
};

void prom_thresholds(PromText& t, const AcceptReport& r) {
  for (const std::string_view suffix : {"bytes_per_second", "seconds", "ratio"}) {
    const std::string name = fmt::format("collbench_accept_threshold_{}", suffix);
    bool declared = false;
    for (const auto& row : r.rows) {
      for (const auto& l : row.limits) {
        const PromUnit& unit = prom_unit(l.metric);
        if (!l.limit || unit.suffix != suffix) continue;
        if (!declared) {
          t.family(name, fmt::format("A check's limit in {} (metric label: what it limits; kind: the threshold key).",
                                     suffix == "ratio" ? "a plain ratio" : suffix));
          declared = true;
        }
        t.sample(name, fmt::format(R"({},kind="{}",metric="{}")", t.row(row), l.kind, metric_word(l.metric)),
                 to_base(unit, *l.limit));
      }
    }
  }
}

void prom_run(PromText& t, const AcceptReport& r, const PrometheusSource& src) {
  t.family("collbench_accept_run_info", "The last acceptance run: 1, with its system profile and collbench version.");
  t.sample("collbench_accept_run_info",
           fmt::format(R"(system="{}",version="{}")", prom_escape(r.system.empty() ? "none" : r.system),
                       prom_escape(src.version)),
           1);
  t.family("collbench_accept_checks", "Acceptance checks (check x size x domain) per verdict in the last run.");
  for (const Verdict v : {Verdict::pass, Verdict::fail, Verdict::waived}) {
    t.sample("collbench_accept_checks", fmt::format(R"(verdict="{}")", to_string(v)), static_cast<double>(r.count(v)));
  }
  t.family("collbench_accept_success", "1 when every acceptance check passed (exit code 0), else 0.");
  t.sample("collbench_accept_success", "", r.exit_code() == 0 ? 1 : 0);
  t.family("collbench_accept_ranks", "Ranks in the last acceptance run.");
  t.sample("collbench_accept_ranks", "", r.num_ranks);
  t.family("collbench_accept_last_run_timestamp_seconds", "Unix time at which the last acceptance run finished.");
  t.sample("collbench_accept_last_run_timestamp_seconds", "", r.finished_unix);
}

}  // namespace

std::string render_accept_prometheus(const AcceptReport& r, const PrometheusSource& src) {
  PromText t(r, src);
  t.family("collbench_accept_check_status",
           "Verdict of one acceptance check (check x size x domain): 1 for the verdict it got, 0 for the others.");
  for (const auto& row : r.rows) {
    for (const Verdict v : {Verdict::pass, Verdict::fail, Verdict::waived}) {
      t.sample("collbench_accept_check_status", fmt::format(R"({},verdict="{}")", t.row(row), to_string(v)),
               row.verdict == v ? 1 : 0);
    }
  }
  const PromUnit& bw = prom_unit("busbw_gbps");
  t.per_row("collbench_accept_measured_bus_bandwidth_bytes_per_second",
            "Measured bus bandwidth after the repetition policy, bytes per second.", bw,
            [](const Row& row) { return row.busbw; });
  t.per_row("collbench_accept_measured_algorithm_bandwidth_bytes_per_second",
            "Measured algorithm bandwidth after the repetition policy, bytes per second.", bw,
            [](const Row& row) { return row.algbw; });
  t.per_row("collbench_accept_measured_time_seconds", "Measured p50 time after the repetition policy, seconds.",
            prom_unit("time_us"), [](const Row& row) { return row.time; });
  t.per_row("collbench_accept_measured_interference_ratio",
            "Measured interference (time of both parts at once over the slower part alone).", prom_unit("interference"),
            [](const Row& row) { return row.interference; });
  t.per_row("collbench_accept_bound_bus_bandwidth_bytes_per_second",
            "The model's physical bound on bus bandwidth for the check, bytes per second.", bw,
            [](const Row& row) { return row.bound_busbw_gbps; });
  t.per_row("collbench_accept_expected_bus_bandwidth_bytes_per_second",
            "The model's expected bus bandwidth for the check, bytes per second.", bw,
            [](const Row& row) { return row.expected_busbw_gbps; });
  prom_thresholds(t, r);
  prom_run(t, r, src);
  return t.take();
}

const report::WriterRegistry<AcceptReport>& accept_writers() {
  static const report::WriterRegistry<AcceptReport> registry = [] {
    report::WriterRegistry<AcceptReport> r("accept format");
    r.add("table", render_accept_table);
    r.add("json", [](const AcceptReport& a) { return accept_to_json(a).dump(2) + "\n"; });
    r.add("markdown", render_accept_markdown);
    r.add("junit", render_accept_junit);
    r.add("none", [](const AcceptReport&) { return std::string(); });
    return r;
  }();
  return registry;
}

}  // namespace collbench::accept
