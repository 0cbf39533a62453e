// Options shared by the subcommands: stopping rule, placement, progress and output (run, sweep,
// accept), the size axes (run, model) and --system (every subcommand that takes a profile).
// Declared once so every subcommand spells them the same way.
#pragma once

#include <CLI/CLI.hpp>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "collbench/plan/sweep.hpp"
#include "collbench/run/runner.hpp"

namespace collbench::cli {

struct OutputFlags {
  std::string out;
  bool resume = false;
  bool force = false;
  std::vector<std::string> formats;         // --format FMT[=PATH], repeatable; none given: table
  std::string layout = "collbench";         // --format table: collbench's columns or nccl-tests'
  const CLI::Option* out_option = nullptr;  // set by add_output_flags: was --out given (even empty)?
  bool per_iteration_columns = false;       // nccl-tests -I 1: i_min i_max i_p99 i_cv% (layout nccl-tests)
};

// The size axes, nccl-tests' -b/-e/-f/-i: the smallest and largest size, and the step (a factor,
// or an increment when -i is not 0).
struct SizeFlags {
  std::string min_bytes = "32M";
  std::string max_bytes = "32M";
  double factor = 2.0;
  std::string increment = "0";
};

// A declared option and the name its messages give it ("-b/--minbytes").
using NamedOption = std::pair<std::string, const CLI::Option*>;

struct PlacementFlags {
  std::optional<int> ranks_per_domain;
  std::optional<std::string> domain_sizes;
  bool allow_interleaved = false;
  std::string progress = "auto";
  std::optional<std::string> timeout;  // --timeout per collective/barrier
  std::string verify = "auto";         // --verify auto | host | device
};

// Stopping-rule overrides (unset flags keep the case's own value).
struct StopFlags {
  std::string iters_flag = "--iters";  // "-n/--iters" where the short names are declared
  std::optional<int> iters, warmup, max_iters, min_iters, batch;
  std::optional<double> max_noise;
  std::optional<std::string> min_time, max_time, budget;
};

void add_output_flags(CLI::App& app, OutputFlags& f);
// --format FMT[=PATH], repeatable, for every subcommand (docs/report.md "Output formats"): FMT
// alone goes to standard output (at most one; `fallback` when none is), FMT=PATH to that file.
// The accepted FMT are `names`, the subcommand's writer registry; parse_output_targets checks them.
CLI::Option* add_format_option(CLI::App& app, std::vector<std::string>& values, const std::vector<std::string>& names,
                               const std::string& fallback, const std::string& what);
// -b/--minbytes, -e/--maxbytes, -f/--stepfactor and -i/--stepbytes, in that order, each named as
// its messages name it: a subcommand refuses them where the size comes from elsewhere (moe-*).
std::vector<NamedOption> add_size_flags(CLI::App& app, SizeFlags& f);
// The sizes the flags select (plan::size_series: its messages name -b, -e, -f and -i).
std::vector<std::uint64_t> size_series(const SizeFlags& f);
// --system NAME|FILE: a system profile by name (`collbench model --list-systems`) or a YAML file.
// `use` says what the subcommand takes it for; the help adds how to name one.
CLI::Option* add_system_option(CLI::App& app, std::optional<std::string>& system, const std::string& use);
CLI::Option* add_system_option(CLI::App& app, std::string& system, const std::string& use);
void add_placement_flags(CLI::App& app, PlacementFlags& f);
void add_stop_flags(CLI::App& app, StopFlags& f, bool short_names);
// --repeats k (run, sweep): every case measured k times on fresh state (docs/measurement.md "Repeats").
void add_repeats_flag(CLI::App& app, int& repeats);

void apply_stop_flags(const StopFlags& f, plan::Case& c);
run::RunnerOptions runner_options(const OutputFlags& out, const PlacementFlags& placement, int argc_hint);

// The process's argv, for run headers (set by main before actions run).
std::vector<std::string>& process_argv();

// Exit code for a finished run: 1 when any case failed verification.
int exit_code_for(const run::RunSummary& summary);

}  // namespace collbench::cli
