// Shared option declarations.
#include "cli/common_options.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <utility>

#include "collbench/core/error.hpp"
#include "collbench/core/units.hpp"
#include "collbench/report/console_writer.hpp"

namespace collbench::cli {

std::vector<std::string>& process_argv() {
  static std::vector<std::string> argv;
  return argv;
}

void add_output_flags(CLI::App& app, OutputFlags& f) {
  f.out_option = app.add_option("--out", f.out, "Write JSONL records to FILE (schema collbench.result/1)");
  app.add_flag("--resume", f.resume, "Continue FILE: skip cases already in it (same configuration only)");
  app.add_flag("--force", f.force, "Replace a non-empty FILE (and --format PATH files)");
  add_format_option(app, f.formats, report::console_writer_names(), "table", "Output of the records as they finish");
  app.add_option("--layout", f.layout,
                 "Columns of --format table: collbench (time, p99, samples, %bound) or nccl-tests (nccl-tests' "
                 "table: root column, out-of-place and in-place side by side; run then defaults to --timing "
                 "pipelined and --in-place both; docs/results-format.md)")
      ->check(CLI::IsMember({"collbench", "nccl-tests"}))
      ->default_str("collbench");
}

CLI::Option* add_format_option(CLI::App& app, std::vector<std::string>& values, const std::vector<std::string>& names,
                               const std::string& fallback, const std::string& what) {
  return app
      .add_option("--format", values,
                  fmt::format("{}: FMT, one of {}, on standard output; FMT=PATH writes FMT to the file PATH as well "
                              "(repeatable; docs/report.md, Output formats)",
                              what, join(names, ", ")))
      ->type_name("FMT[=PATH]")
      ->expected(1)
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll)
      ->default_str(fallback);
}

std::vector<NamedOption> add_size_flags(CLI::App& app, SizeFlags& f) {
  return {
      {"-b/--minbytes",
       app.add_option("-b,--minbytes", f.min_bytes, "Smallest size (8, 4K, 128MiB, 1G; K/M/G = 1024^n)")
           ->default_str("32M")},
      {"-e/--maxbytes", app.add_option("-e,--maxbytes", f.max_bytes, "Largest size")->default_str("32M")},
      {"-f/--stepfactor", app.add_option("-f,--stepfactor", f.factor, "Size multiplication factor")->default_str("2")},
      {"-i/--stepbytes",
       app.add_option("-i,--stepbytes", f.increment, "Size increment (instead of -f)")->default_str("0")},
  };
}

std::vector<std::uint64_t> size_series(const SizeFlags& f) {
  return plan::size_series(parse_bytes(f.min_bytes), parse_bytes(f.max_bytes), f.factor, parse_bytes(f.increment));
}

namespace {

std::string system_help(const std::string& use) {
  return use + " (a name from collbench model --list-systems, or a YAML file)";
}

}  // namespace

CLI::Option* add_system_option(CLI::App& app, std::optional<std::string>& system, const std::string& use) {
  return app.add_option("--system", system, system_help(use))->type_name("NAME|FILE");
}

CLI::Option* add_system_option(CLI::App& app, std::string& system, const std::string& use) {
  return app.add_option("--system", system, system_help(use))->type_name("NAME|FILE");
}

void add_placement_flags(CLI::App& app, PlacementFlags& f) {
  app.add_option("--ranks-per-domain", f.ranks_per_domain,
                 "Ranks per scale-up domain (rack-major; the last domain may be partial)");
  app.add_option("--domain-sizes", f.domain_sizes, "Explicit domain sizes, e.g. 72,72,72,40");
  app.add_flag("--allow-interleaved", f.allow_interleaved, "Accept domains whose ranks are not contiguous");
  app.add_option("--progress", f.progress, "MPI progress: auto (yield when ranks exceed cores), spin, yield")
      ->check(CLI::IsMember({"auto", "spin", "yield"}))
      ->default_str("auto");
  app.add_option("--timeout", f.timeout,
                 "Watchdog: longest a collective or barrier may take (e.g. 30s), and each step of the run's start (at "
                 "least 60s); default 300s + 1s per 100MB");
  app.add_option("--verify", f.verify,
                 "Where inputs are written and results checked: auto (on the GPU with the nccl backend, for the "
                 "families with a device plan; else on the host), host (always on the host: debugging), device "
                 "(as auto; refused on the mpi backend)")
      ->default_str("auto");
}

void add_stop_flags(CLI::App& app, StopFlags& f, bool short_names) {
  if (short_names) f.iters_flag = "-n/--iters";
  app.add_option(short_names ? "-n,--iters" : "--iters", f.iters,
                 "Fixed number of timed iterations (disables adaptive stopping)");
  app.add_option(short_names ? "-w,--warmup" : "--warmup", f.warmup, "Warm-up iterations");
  app.add_option("--min-iters", f.min_iters, "Minimum timed iterations");
  app.add_option("--max-iters", f.max_iters, "Maximum timed iterations");
  app.add_option("--batch", f.batch, "Operations per sample in --timing pipelined");
  app.add_option("--max-noise", f.max_noise, "Stop when the median's 95% CI half-width is below this fraction");
  app.add_option("--min-time", f.min_time, "Minimum timed duration per case (e.g. 50ms)");
  app.add_option("--max-time", f.max_time, "Maximum timed duration per case (e.g. 2s)");
  app.add_option("--budget", f.budget,
                 "Stop a case after this long and 100 iterations even if --max-noise is not reached (default 10ms; "
                 "0: off, time until --max-noise or --max-time)");
}

void add_repeats_flag(CLI::App& app, int& repeats) {
  app.add_option("--repeats", repeats,
                 "Measure every case K times, interleaved across cases, each on fresh communicators and buffers; "
                 "the record keeps each repeat's median and the spread between them")
      ->default_str("1");
}

// -n fixes the iteration count: a --min-iters or --max-iters beside it would be overridden
// silently by one or the other, so the pair is refused.
void check_fixed_iters(const StopFlags& f) {
  if (!f.iters) return;
  for (const auto& [flag, value] : {std::pair{"--min-iters", f.min_iters}, std::pair{"--max-iters", f.max_iters}}) {
    if (value) {
      throw InputError(
          fmt::format("{} {} fixes the number of timed iterations, so it excludes {} (given: {}); "
                      "pass one or the other",
                      f.iters_flag, *f.iters, flag, *value));
    }
  }
}

void apply_stop_flags(const StopFlags& f, plan::Case& c) {
  check_fixed_iters(f);
  if (f.iters) {
    if (*f.iters < 1) throw InputError(f.iters_flag + " must be at least 1");
    c.stop.min_iters = c.stop.max_iters = *f.iters;
    c.stop.min_time_s = 0.0;
    c.stop.max_time_s = 1e12;
  }
  if (f.warmup) {
    if (*f.warmup < 0) throw InputError("-w/--warmup must not be negative");
    c.stop.warmup = *f.warmup;
  }
  if (f.min_iters) c.stop.min_iters = *f.min_iters;
  if (f.max_iters) c.stop.max_iters = *f.max_iters;
  if (f.batch) {
    if (*f.batch < 1) throw InputError("--batch must be at least 1");
    c.stop.batch = *f.batch;
  }
  if (f.max_noise) {
    if (!(*f.max_noise > 0.0 && *f.max_noise < 1.0))
      throw InputError("--max-noise must be a fraction in (0, 1), e.g. 0.01");
    c.stop.max_noise = *f.max_noise;
  }
  if (f.min_time) c.stop.min_time_s = parse_duration_s(*f.min_time);
  if (f.max_time) c.stop.max_time_s = parse_duration_s(*f.max_time);
  if (f.budget) c.stop.budget_s = parse_duration_s(*f.budget);
  if (c.stop.min_iters > c.stop.max_iters) {
    throw InputError("--min-iters is larger than --max-iters");
  }
}

namespace {

bool any_format_path(const std::vector<report::OutputTarget>& targets) {
  return std::any_of(targets.begin(), targets.end(), [](const report::OutputTarget& t) { return t.path.has_value(); });
}

}  // namespace

// The console writers (report/console_writer.hpp) --format and --layout choose.
void set_console_outputs(const OutputFlags& out, run::RunnerOptions& o) {
  o.outputs = report::parse_output_targets(out.formats, report::console_writer_names(), "table");
  o.console.layout = out.layout;
  o.console.nccl_tests_layout = out.layout != "collbench";
  o.console.per_iteration_columns = out.per_iteration_columns;
  report::check_console_targets(o.outputs, o.console);
}

run::RunnerOptions runner_options(const OutputFlags& out, const PlacementFlags& placement, int /*argc_hint*/) {
  if (out.resume && out.force) throw InputError("--resume and --force exclude each other");
  if (out.out_option != nullptr && out.out_option->count() > 0 && out.out.empty()) {
    throw InputError("--out '': expected a file name, e.g. --out results/run.jsonl (leave --out out to write no file)");
  }
  if (out.resume && out.out.empty()) throw InputError("--resume needs --out FILE");
  if (out.force && out.out.empty() &&
      !any_format_path(report::parse_output_targets(out.formats, report::console_writer_names(), "table"))) {
    throw InputError("--force needs --out FILE or a --format FMT=PATH file to replace");
  }
  if (placement.ranks_per_domain && placement.domain_sizes) {
    throw InputError("--ranks-per-domain and --domain-sizes exclude each other");
  }
  run::RunnerOptions o;
  o.progress = placement.progress;
  o.verify = run::parse_verify_mode(placement.verify);
  if (placement.timeout) {
    o.timeout_s = parse_duration_s(*placement.timeout);
    if (!(o.timeout_s > 0)) throw InputError("--timeout must be positive, e.g. 30s");
  }
  o.placement.ranks_per_domain = placement.ranks_per_domain;
  o.placement.domain_sizes = placement.domain_sizes;
  o.placement.allow_interleaved = placement.allow_interleaved;
  if (!out.out.empty()) o.out_path = out.out;
  o.out_mode = out.resume ? record::OpenMode::resume : out.force ? record::OpenMode::force : record::OpenMode::create;
  set_console_outputs(out, o);
  o.argv = process_argv();
  return o;
}

int exit_code_for(const run::RunSummary& summary) {
  return summary.cases_failed > 0 ? static_cast<int>(ExitCode::check_failed) : 0;
}

}  // namespace collbench::cli
