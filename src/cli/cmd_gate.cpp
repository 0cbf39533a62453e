// `collbench gate`: the CI performance gate (a current results file against a stored baseline;
// docs/gate.md), and `collbench export-gbench`: any results file as Google Benchmark JSON. Both
// only read files: no MPI, no GPU.
#include <fmt/format.h>

#include <array>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <fstream>
#include <memory>
#include <optional>
#include <sstream>
#include <string>
#include <tuple>

#include "cli/common_options.hpp"
#include "cli/subcommand.hpp"
#include "collbench/core/checked_output.hpp"
#include "collbench/core/error.hpp"
#include "collbench/core/input_file.hpp"
#include "collbench/gate/gate.hpp"
#include "collbench/record/jsonl.hpp"
#include "collbench/report/gate_writers.hpp"
#include "collbench/report/writer_registries.hpp"

namespace collbench::cli {
namespace {

std::string read_text_file(const std::string& path, std::string_view what) {
  return read_input_file(path, what, "a file");
}

void write_text_file(const std::string& path, const std::string& text, std::string_view flag) {
  write_file_checked(path, text, flag);
}

// ---- gate ----------------------------------------------------------------------------------

std::string utc_now_text() {
  const std::time_t t = std::chrono::system_clock::to_time_t(std::chrono::system_clock::now());
  std::tm tm{};
  gmtime_r(&t, &tm);
  std::array<char, 32> buf{};
  std::strftime(buf.data(), buf.size(), "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf.data();
}

struct GateFlags {
  std::string baseline, current;
  std::optional<std::string> policy;
  bool allow_faults = false;
  bool allow_simulated = false;
  std::optional<std::string> junit, json, markdown;
  std::vector<std::string> formats;  // --format FMT[=PATH]
};

// --junit, --json and --markdown FILE (written first, as before --format FMT=PATH existed), then
// --format's targets.
std::vector<report::OutputTarget> gate_targets(const GateFlags& f) {
  std::vector<report::OutputTarget> targets;
  for (const auto& [flag, format, path] :
       {std::tuple{"--junit", "junit", &f.junit}, std::tuple{"--json", "json", &f.json},
        std::tuple{"--markdown", "markdown", &f.markdown}}) {
    if (*path) targets.push_back(report::OutputTarget{format, **path, flag, false});
  }
  for (auto& t : report::parse_output_targets(f.formats, report::gate_writers().names(), "table"))
    targets.push_back(std::move(t));
  return targets;
}

int run_gate_command(const GateFlags& f) {
  // Every input is validated before anything is written.
  const std::vector<report::OutputTarget> targets = gate_targets(f);
  const std::string started_at = utc_now_text();
  const auto started = std::chrono::steady_clock::now();
  const gate::GatePolicy policy =
      f.policy ? gate::parse_gate_policy(read_text_file(*f.policy, "policy file"), *f.policy) : gate::GatePolicy{};
  std::size_t grouped_baseline = 0, grouped_current = 0;
  const record::ResultFile baseline = record::group_repetitions(record::read_results(f.baseline), grouped_baseline);
  const record::ResultFile current = record::group_repetitions(record::read_results(f.current), grouped_current);
  for (const auto* file : {&baseline, &current}) {
    for (const auto& w : file->warnings) std::fprintf(stderr, "collbench: warning: %s\n", w.c_str());
  }
  gate::GateReport rep = gate::run_gate(baseline, current, policy, {f.allow_faults, f.allow_simulated});
  for (const auto& [file, n] : {std::pair{&baseline, grouped_baseline}, std::pair{&current, grouped_current}}) {
    if (n == 0) continue;
    rep.notes.push_back(fmt::format(
        "{}: {} case key(s) measured several times by one run (accept's repetitions, locate's bisection) are each "
        "one record of its repetitions, as with --repeats (docs/gate.md, \"Between repeats\")",
        file->path, n));
  }
  rep.started_at = started_at;  // the JUnit suite's timestamp and time
  rep.duration_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();

  report::WriterMultiplex<gate::GateReport>(report::gate_writers(), targets).write(rep);

  const int code = rep.exit_code();
  if (code == static_cast<int>(ExitCode::incomparable)) {
    std::fprintf(stderr, "collbench: gate: nothing comparable: every case is MISSING or INCOMPARABLE (exit 4)\n");
  } else if (code == static_cast<int>(ExitCode::check_failed)) {
    std::fprintf(stderr, "collbench: gate: FAILED: %zu regression(s), %zu below floor%s\n",
                 rep.count(gate::Verdict::regression), rep.count(gate::Verdict::below_floor),
                 policy.fail_on_warn ? " (fail_on_warn: WARN and AMBIGUOUS fail too)" : "");
  }
  return code;
}

Action setup_gate(CLI::App& app) {
  auto f = std::make_shared<GateFlags>();
  app.add_option("--baseline", f->baseline, "Baseline results (JSONL)")->required();
  app.add_option("--current", f->current, "Current results (JSONL)")->required();
  app.add_option("--policy", f->policy, "Gate policy (YAML, e.g. ci/perf-gate.yaml); built-in defaults otherwise");
  app.add_flag("--allow-faults", f->allow_faults,
               "Accept records with an injected COLLBENCH_FAULT (tests of the gate)");
  app.add_flag("--allow-simulated", f->allow_simulated,
               "Compare simulated (SimGrid) records with measured ones; without it such cases are INCOMPARABLE");
  app.add_option("--junit", f->junit, "Also write JUnit XML (one testcase per case; as --format junit=FILE)");
  app.add_option("--json", f->json, "Also write the verdicts as JSON (schema collbench.gate/1; as --format json=FILE)");
  app.add_option("--markdown", f->markdown,
                 "Also write a Markdown report (e.g. for a PR comment; as --format markdown=FILE)");
  add_format_option(app, f->formats, report::gate_writers().names(), "table", "Output of the verdicts");
  app.footer(
      "Verdicts: PASS, IMPROVED, WARN, AMBIGUOUS, REGRESSION, BELOW_FLOOR, MISSING, INCOMPARABLE (docs/gate.md).\n"
      "Exit codes: 0 pass, 1 regression or floor failure, 2 invalid input, 4 nothing comparable.\n"
      "Example:\n"
      "  collbench gate --baseline results/baselines/cpu-2rank.jsonl --current results/ci.jsonl \\\n"
      "      --policy ci/perf-gate.yaml --junit gate.xml --markdown gate.md");
  return [f]() { return run_gate_command(*f); };
}

// ---- export-gbench -------------------------------------------------------------------------

struct ExportFlags {
  std::string input;
  std::optional<std::string> out;
  int repetitions = 10;
  int min_samples_per_repetition = 5;
  bool aggregates_only = false;
};

Action setup_export(CLI::App& app) {
  auto f = std::make_shared<ExportFlags>();
  app.add_option("results", f->input, "Results file (JSONL)")->required();
  app.add_option("--out", f->out, "Write the JSON here (default: standard output)");
  app.add_option("--repetitions", f->repetitions, "Per-repetition entries per case (blocks of consecutive samples)")
      ->check(CLI::Range(1, 10000))
      ->default_str("10");
  app.add_option("--min-samples-per-repetition", f->min_samples_per_repetition,
                 "Fewer samples per block: one entry with the case's p50 instead")
      ->check(CLI::Range(1, 1000000))
      ->default_str("5");
  app.add_flag("--aggregates-only", f->aggregates_only,
               "Only the _mean/_median/_stddev/_cv entries (like --benchmark_report_aggregates_only)");
  app.footer(
      "Google Benchmark JSON for compare.py, Bencher and github-action-benchmark: name = case_key, times in us.\n"
      "Example:\n"
      "  collbench export-gbench results/ci.jsonl --out ci.gbench.json\n"
      "  compare.py benchmarks base.gbench.json ci.gbench.json");
  return [f]() -> int {
    const record::ResultFile file = record::read_results(f->input);
    for (const auto& w : file.warnings) std::fprintf(stderr, "collbench: warning: %s\n", w.c_str());
    const std::string text =
        report::export_gbench(file, {f->repetitions, f->min_samples_per_repetition, f->aggregates_only}).dump(2) + "\n";
    if (f->out)
      write_text_file(*f->out, text, "--out");
    else
      std::fputs(text.c_str(), stdout);
    return 0;
  };
}

}  // namespace

CB_REGISTER_SUBCOMMAND(Subcommand{"gate", "Gate a results file against a baseline (CI performance regressions)", 65,
                                  &setup_gate, false});
CB_REGISTER_SUBCOMMAND(Subcommand{"export-gbench", "Export a results file as Google Benchmark JSON", 66, &setup_export,
                                  false});

}  // namespace collbench::cli
