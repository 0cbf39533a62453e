// Gate report writers (JSON, Markdown, JUnit XML, console table) and the Google Benchmark JSON
// export of any results file. They only render.
#include "collbench/report/gate_writers.hpp"

#include <fmt/format.h>

#include <array>
#include <cmath>
#include <numeric>

#include "collbench/core/error.hpp"
#include "collbench/core/units.hpp"
#include "collbench/report/escape.hpp"
#include "collbench/stats/compare.hpp"

namespace collbench::report {

// ---- writers -------------------------------------------------------------------------------

namespace {

nlohmann::json optional_json(const std::optional<double>& v) {
  return v ? nlohmann::json(*v) : nlohmann::json();
}
nlohmann::json optional_json(const std::optional<std::string>& v) {
  return v ? nlohmann::json(*v) : nlohmann::json();
}

nlohmann::json policy_json(const gate::GatePolicy& p) {
  nlohmann::json floors = nlohmann::json::object();
  for (const auto& [name, value] : p.floors) floors[name] = optional_json(value);
  return {{"source", p.source},
          {"repetitions", p.repetitions},
          {"min_samples_per_repetition", p.min_samples_per_repetition},
          {"alpha", p.alpha},
          {"confidence", p.confidence},
          {"min_effect", p.min_effect},
          {"noise_multiplier", p.noise_multiplier},
          {"fail_on_warn", p.fail_on_warn},
          {"floors", floors}};
}

std::string summary_line(const gate::GateReport& r) {
  std::vector<std::string> parts;
  for (gate::Verdict v : gate::kAllVerdicts) {
    if (const auto n = r.count(v); n != 0) parts.push_back(fmt::format("{} {}", n, to_string(v)));
  }
  if (parts.empty()) parts.emplace_back("no cases");
  return join(parts, ", ");
}

std::string p50_text(const std::optional<double>& v) {
  return v ? fmt::format("{:.4g}", *v) : "-";
}

std::string case_label(const gate::CaseVerdict& c) {
  return fmt::format("{} {} {} {} n={}", c.collective, c.algo, c.dtype, format_bytes(c.bytes), c.num_ranks);
}

// The numbers of a case as one line (JUnit messages and bodies).
std::string numbers_line(const gate::CaseVerdict& c) {
  std::string s =
      fmt::format("baseline p50 {} us, current p50 {} us", p50_text(c.baseline_p50_us), p50_text(c.current_p50_us));
  if (c.test) {
    const auto& t = *c.test;
    const bool repeats = t.method == "repeats";
    const std::string statistic = repeats ? fmt::format("Welch t = {:.3g} (df {})", t.t, t.df)
                                          : fmt::format("U = {:g} ({})", t.u, t.exact ? "exact" : "normal approx.");
    s += fmt::format(
        "; {} ratio {} [{}, {}]; {}; p = {:.3g}/{:.3g}, q = {:.3g}/{:.3g} (slower/faster); "
        "noise CV {:.3f}; minimum effect {:.1f}%; {} {} vs {}",
        repeats ? "geometric-mean" : "HL", gate::ratio_text(t.ratio), gate::ratio_text(t.ratio_ci_low),
        gate::ratio_text(t.ratio_ci_high), statistic, t.p_slower, t.p_faster, t.q_slower, t.q_faster, t.noise_cv,
        100.0 * t.min_effect, repeats ? "repeats" : "repetitions", t.baseline_blocks_us.size(),
        t.current_blocks_us.size());
  }
  if (c.floor && c.floor->efficiency) {
    s += fmt::format("; efficiency {:.3f} vs floor {:.3f}", *c.floor->efficiency, c.floor->floor);
  }
  return s;
}

}  // namespace

nlohmann::json gate_to_json(const gate::GateReport& r) {
  nlohmann::json counts = nlohmann::json::object();
  for (gate::Verdict v : gate::kAllVerdicts) counts[std::string(to_string(v))] = r.count(v);
  nlohmann::json cases = nlohmann::json::array();
  for (const auto& c : r.cases) {
    nlohmann::json j = {{"case_key", c.case_key},
                        {"verdict", to_string(c.verdict)},
                        {"reason", c.reason},
                        {"collective", c.collective},
                        {"algo", c.algo},
                        {"dtype", c.dtype},
                        {"backend", c.backend},
                        {"bytes", c.bytes},
                        {"num_ranks", c.num_ranks},
                        {"baseline_p50_us", optional_json(c.baseline_p50_us)},
                        {"current_p50_us", optional_json(c.current_p50_us)},
                        {"floor", nullptr},
                        {"test", nullptr}};
    if (c.floor) {
      j["floor"] = {
          {"floor", c.floor->floor}, {"efficiency", optional_json(c.floor->efficiency)}, {"passed", c.floor->passed}};
    }
    if (c.test) {
      const auto& t = *c.test;
      const bool repeats = t.method == "repeats";
      j["test"] = {{"method", t.method},
                   {"repetitions_baseline", t.baseline_blocks_us.size()},
                   {"repetitions_current", t.current_blocks_us.size()},
                   {"baseline_blocks_us", t.baseline_blocks_us},
                   {"current_blocks_us", t.current_blocks_us},
                   {"shift_log", t.shift_log},
                   {"ci_low_log", t.ci_low_log},
                   {"ci_high_log", t.ci_high_log},
                   {"ci_confidence", t.ci_confidence},
                   {"ratio", t.ratio},
                   {"ratio_ci_low", t.ratio_ci_low},
                   {"ratio_ci_high", t.ratio_ci_high},
                   {"u", repeats ? nlohmann::json() : nlohmann::json(t.u)},
                   {"exact", repeats ? nlohmann::json() : nlohmann::json(t.exact)},
                   {"t", repeats ? nlohmann::json(t.t) : nlohmann::json()},
                   {"df", repeats ? nlohmann::json(t.df) : nlohmann::json()},
                   {"p_slower", t.p_slower},
                   {"p_faster", t.p_faster},
                   {"q_slower", t.q_slower},
                   {"q_faster", t.q_faster},
                   {"noise_cv", t.noise_cv},
                   {"min_effect", t.min_effect}};
    }
    cases.push_back(std::move(j));
  }
  return {{"schema", kGateSchema},
          {"baseline", {{"path", r.baseline_path}, {"run_id", optional_json(r.baseline_run_id)}}},
          {"current", {{"path", r.current_path}, {"run_id", optional_json(r.current_run_id)}}},
          {"policy", policy_json(r.policy)},
          {"summary", {{"counts", counts}, {"exit_code", r.exit_code()}}},
          {"notes", r.notes},
          {"cases", cases}};
}

std::string render_gate_markdown(const gate::GateReport& r) {
  std::string out = "## collbench gate\n\n";
  out += fmt::format(
      "Baseline `{}`, current `{}`, policy `{}` (alpha {:g}, {} repetitions, minimum effect {:g}%, "
      "noise multiplier {:g}).\n\n",
      r.baseline_path, r.current_path, r.policy.source, r.policy.alpha, r.policy.repetitions,
      100.0 * r.policy.min_effect, r.policy.noise_multiplier);
  out += fmt::format("**{}** (exit code {})\n\n", summary_line(r), r.exit_code());
  out +=
      "| Verdict | Case | Baseline p50 (us) | Current p50 (us) | Ratio [CI] | q slower / faster | Min effect | "
      "Reason |\n|---|---|---:|---:|---|---|---:|---|\n";
  for (const auto& c : r.cases) {
    std::string ratio = "-", q = "-", effect = "-";
    if (c.test) {
      ratio = fmt::format("{} [{}, {}]", gate::ratio_text(c.test->ratio), gate::ratio_text(c.test->ratio_ci_low),
                          gate::ratio_text(c.test->ratio_ci_high));
      q = fmt::format("{:.2g} / {:.2g}", c.test->q_slower, c.test->q_faster);
      effect = fmt::format("{:.1f}%", 100.0 * c.test->min_effect);
    }
    out += fmt::format("| {} | {}<br>`{}` | {} | {} | {} | {} | {} | {} |\n", to_string(c.verdict),
                       md_escape(case_label(c)), md_escape(c.case_key), p50_text(c.baseline_p50_us),
                       p50_text(c.current_p50_us), ratio, q, effect, md_escape(c.reason));
  }
  for (const auto& n : r.notes) out += fmt::format("\n> note: {}\n", md_escape(n));
  return out;
}

std::string junit_timestamp(std::string_view iso_utc) {
  if (!iso_utc.empty() && iso_utc.back() == 'Z') iso_utc.remove_suffix(1);
  return std::string(iso_utc);
}

std::string render_gate_junit(const gate::GateReport& r) {
  std::size_t failures = 0, skipped = 0;
  for (const auto& c : r.cases) {
    if (is_failure(c.verdict, r.policy.fail_on_warn))
      ++failures;
    else if (is_skipped(c.verdict))
      ++skipped;
  }
  std::string out = R"(<?xml version="1.0" encoding="UTF-8"?>)";
  out += '\n';
  const std::string counts = fmt::format(R"(tests="{}" failures="{}" errors="0")", r.cases.size(), failures);
  out += fmt::format("<testsuites name=\"collbench gate\" {} time=\"{:.3f}\">\n", counts, r.duration_s);
  out += fmt::format("  <testsuite name=\"collbench.gate\" {} skipped=\"{}\" time=\"{:.3f}\"{}>\n", counts, skipped,
                     r.duration_s,
                     r.started_at.empty() ? "" : fmt::format(" timestamp=\"{}\"", junit_timestamp(r.started_at)));
  out += "    <properties>\n";
  out += fmt::format("      <property name=\"baseline\" value=\"{}\"/>\n", xml_escape(r.baseline_path));
  out += fmt::format("      <property name=\"current\" value=\"{}\"/>\n", xml_escape(r.current_path));
  out += fmt::format("      <property name=\"policy\" value=\"{}\"/>\n", xml_escape(r.policy.source));
  out += "    </properties>\n";
  for (const auto& c : r.cases) {
    out += fmt::format("    <testcase classname=\"collbench.gate.{}\" name=\"{}\" time=\"{:.3f}\">\n",
                       xml_escape(c.collective), xml_escape(c.case_key), c.timed_s);
    const std::string message = fmt::format("{}: {}", to_string(c.verdict), c.reason);
    if (is_failure(c.verdict, r.policy.fail_on_warn)) {
      out += fmt::format("      <failure type=\"{}\" message=\"{}\">{}</failure>\n", to_string(c.verdict),
                         xml_escape(message), xml_escape(numbers_line(c)));
    } else if (is_skipped(c.verdict)) {
      out += fmt::format("      <skipped message=\"{}\"/>\n", xml_escape(message));
    }
    out += fmt::format("      <system-out>{}\n{}</system-out>\n", xml_escape(message), xml_escape(numbers_line(c)));
    out += "    </testcase>\n";
  }
  out += "  </testsuite>\n</testsuites>\n";
  return out;
}

std::string render_gate_table(const gate::GateReport& r) {
  std::string out = fmt::format("# collbench gate: baseline {}{} vs current {}{}\n", r.baseline_path,
                                r.baseline_run_id ? " (run " + *r.baseline_run_id + ")" : "", r.current_path,
                                r.current_run_id ? " (run " + *r.current_run_id + ")" : "");
  out += fmt::format(
      "# policy {}: alpha {:g} (BH), {} repetitions x >= {} samples, minimum effect max({:g}%, {:g} x "
      "noise CV)\n",
      r.policy.source, r.policy.alpha, r.policy.repetitions, r.policy.min_samples_per_repetition,
      100.0 * r.policy.min_effect, r.policy.noise_multiplier);
  out += fmt::format("#{:<12} {:<14} {:<12} {:<9} {:>9} {:>5} {:>11} {:>11} {:>8} {:>19} {:>8} {:>7}  {}\n", "verdict",
                     "collective", "algo", "dtype", "bytes", "ranks", "base p50us", "cur p50us", "ratio", "ratio CI",
                     "q slower", "min eff", "reason");
  for (const auto& c : r.cases) {
    std::string ratio = "-", ci = "-", q = "-", effect = "-";
    if (c.test) {
      ratio = gate::ratio_text(c.test->ratio);
      ci = fmt::format("[{}, {}]", gate::ratio_text(c.test->ratio_ci_low), gate::ratio_text(c.test->ratio_ci_high));
      q = fmt::format("{:.2g}", c.test->q_slower);
      effect = fmt::format("{:.1f}%", 100.0 * c.test->min_effect);
    }
    out += fmt::format(" {:<12} {:<14} {:<12} {:<9} {:>9} {:>5} {:>11} {:>11} {:>8} {:>19} {:>8} {:>7}  {}\n",
                       to_string(c.verdict), c.collective, c.algo, c.dtype, c.bytes, c.num_ranks,
                       p50_text(c.baseline_p50_us), p50_text(c.current_p50_us), ratio, ci, q, effect, c.reason);
  }
  for (const auto& n : r.notes) out += "# note: " + n + "\n";
  out += fmt::format("# {} -> exit {}\n", summary_line(r), r.exit_code());
  return out;
}

// ---- Google Benchmark export ---------------------------------------------------------------

namespace {

// compare.py prints times as whole numbers of time_unit: in nanoseconds 1.41 us stays 1410.
double to_ns(double us) {
  return 1000.0 * us;
}

// `value`: a time in nanoseconds, or a fraction for the cv aggregate (aggregate_unit "percentage").
nlohmann::json gbench_entry(const std::string& name, const std::string& run_name, std::size_t family,
                            const std::string& run_type, std::size_t repetitions, std::size_t repetition_index,
                            std::uint64_t iterations, double value) {
  return {{"name", name},
          {"family_index", family},
          {"per_family_instance_index", 0},
          {"run_name", run_name},
          {"run_type", run_type},
          {"repetitions", repetitions},
          {"repetition_index", repetition_index},
          {"threads", 1},
          {"iterations", iterations},
          {"real_time", value},
          {"cpu_time", value},  // no CPU time is measured: wall time for both
          {"time_unit", "ns"}};
}

// User counters as Google Benchmark prints them (extra numeric keys on an entry).
void add_counters(nlohmann::json& e, const record::CaseRecord& r) {
  e["bytes"] = r.bytes;
  e["algbw_gbps"] = r.algbw_gbps;
  e["busbw_gbps"] = r.busbw_gbps;
  e["num_ranks"] = r.num_ranks;
}

// The entries of one measured case: its repetitions (unless aggregates_only) and the aggregates;
// one plain entry when the samples are too few for repetitions.
void gbench_measured_case(nlohmann::json& benchmarks, const record::CaseRecord& r, std::size_t family,
                          const GbenchOptions& options) {
  const std::string& name = r.case_key;
  const auto blocks = stats::block_medians(r.samples_us, options.repetitions, options.min_samples_per_repetition);
  if (blocks.medians.empty()) {
    auto e = gbench_entry(name, name, family, "iteration", 1, 0, static_cast<std::uint64_t>(r.iterations),
                          to_ns(r.time_us->p50));
    add_counters(e, r);
    benchmarks.push_back(std::move(e));
    return;
  }
  const std::size_t reps = blocks.medians.size();
  const std::size_t n = r.samples_us.size();
  if (!options.aggregates_only) {
    for (std::size_t i = 0; i < reps; ++i) {
      const std::size_t block_size = (i + 1) * n / reps - i * n / reps;
      auto e = gbench_entry(name, name, family, "iteration", reps, i, block_size, to_ns(blocks.medians[i]));
      add_counters(e, r);
      benchmarks.push_back(std::move(e));
    }
  }
  // Aggregates over the repetitions, as Google Benchmark computes them (stddev with n - 1).
  const double mean = std::accumulate(blocks.medians.begin(), blocks.medians.end(), 0.0) / static_cast<double>(reps);
  double ss = 0.0;
  for (double v : blocks.medians) ss += (v - mean) * (v - mean);
  const double stddev = reps > 1 ? std::sqrt(ss / static_cast<double>(reps - 1)) : 0.0;
  struct Aggregate {
    const char* agg;
    double value;
    const char* unit;
  };
  const std::array<Aggregate, 4> aggregates{{{"mean", to_ns(mean), "time"},
                                             {"median", to_ns(stats::median(blocks.medians)), "time"},
                                             {"stddev", to_ns(stddev), "time"},
                                             {"cv", mean > 0.0 ? stddev / mean : 0.0, "percentage"}}};
  for (const auto& a : aggregates) {
    auto e = gbench_entry(name + "_" + a.agg, name, family, "aggregate", reps, 0, reps, a.value);
    e.erase("repetition_index");
    e["aggregate_name"] = a.agg;
    e["aggregate_unit"] = a.unit;
    if (std::string_view(a.unit) == "time") add_counters(e, r);
    benchmarks.push_back(std::move(e));
  }
}

}  // namespace

nlohmann::json export_gbench(const record::ResultFile& file, const GbenchOptions& options) {
  nlohmann::json context = {{"date", file.header ? file.header->started_at : std::string{}},
                            {"host_name", file.header && !file.header->hosts.empty() ? file.header->hosts[0].host : ""},
                            {"executable", "collbench"},
                            {"num_cpus", 0},
                            {"mhz_per_cpu", 0},
                            {"cpu_scaling_enabled", false},
                            {"caches", nlohmann::json::array()},
                            {"load_avg", nlohmann::json::array()},
                            {"library_build_type", "release"},
                            {"collbench_source", file.path}};
  if (file.header) {
    context["collbench_run_id"] = file.header->run_id;
    context["collbench_version"] = file.header->tool_version;
    context["mpi_library"] = optional_json(file.header->mpi_library);
    context["nccl_version"] = optional_json(file.header->nccl_version);
    context["cuda_runtime"] = optional_json(file.header->cuda_runtime);
  }
  nlohmann::json benchmarks = nlohmann::json::array();
  nlohmann::json waived = nlohmann::json::array();
  for (std::size_t family = 0; family < file.cases.size(); ++family) {
    const auto& r = file.cases[family];
    const std::string& name = r.case_key;
    if (r.status == "waived") {  // nothing was measured: no entry, listed in the context instead
      waived.push_back(r.reason ? name + ": " + *r.reason : name);
      continue;
    }
    if (r.status != "ok" || !r.time_us) {
      auto e = gbench_entry(name, name, family, "iteration", 1, 0, 0, 0.0);
      e["error_occurred"] = true;
      e["error_message"] = fmt::format("status {}{}", r.status, r.reason ? ": " + *r.reason : "");
      benchmarks.push_back(std::move(e));
      continue;
    }
    gbench_measured_case(benchmarks, r, family, options);
  }
  context["collbench_waived_cases"] = waived;
  return {{"context", context}, {"benchmarks", benchmarks}};
}

}  // namespace collbench::report
