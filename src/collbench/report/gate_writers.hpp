// The gate report's writers (JSON, Markdown, JUnit XML, console table; the verdicts come from
// gate/gate.hpp) and the Google Benchmark JSON export of any results file. They only render:
// writers return strings.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

#include "collbench/gate/gate.hpp"
#include "collbench/record/jsonl.hpp"

namespace collbench::report {

inline constexpr const char* kGateSchema = "collbench.gate/1";

// ---- writers (render only) -----------------------------------------------------------------

nlohmann::json gate_to_json(const gate::GateReport& report);
std::string render_gate_markdown(const gate::GateReport& report);
// JUnit XML that validates against the Jenkins JUnit schema (junit-10.xsd of the xunit plugin):
// counts without `skipped` on <testsuites>; the suite's timestamp (when the gate ran) and time (its
// wall time); each testcase's time is the seconds its record spent in timed iterations.
std::string render_gate_junit(const gate::GateReport& report);
// A JUnit timestamp from an ISO 8601 UTC time ("2026-12-04T11:46:17Z" -> "2026-12-04T11:46:17"):
// Ant's schema allows no zone designator; the time stays UTC.
std::string junit_timestamp(std::string_view iso_utc);
std::string render_gate_table(const gate::GateReport& report);

// ---- Google Benchmark export ---------------------------------------------------------------

struct GbenchOptions {
  int repetitions = 10;  // per-repetition entries when a case has enough samples
  int min_samples_per_repetition = 5;
  bool aggregates_only = false;  // like --benchmark_report_aggregates_only
};

// Google Benchmark-compatible JSON (context + benchmarks[]) of any results file, for
// compare.py, Bencher and github-action-benchmark. Per case with enough samples: one entry per
// repetition (name = case_key, run_type "iteration", real_time = cpu_time = the block median in
// us) and the aggregates name_mean, name_median, name_stddev, name_cv; otherwise one entry with
// the case's p50 and iteration count. Cases not status ok become error entries.
nlohmann::json export_gbench(const record::ResultFile& file, const GbenchOptions& options = {});

}  // namespace collbench::report
