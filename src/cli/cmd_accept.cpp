// `collbench accept PROFILE`: runs an acceptance profile (profiles/acceptance/*.yaml) under
// mpiexec and gives PASS/FAIL/WAIVED per check, size and domain with the reason; with --out-dir
// also JSON, Markdown, an HTML page, JUnit XML, a Prometheus textfile and the raw JSONL records
// (docs/acceptance.md). Exit 0 all pass, 1 any FAIL, 2 bad input.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>

#include "cli/agreed_exit.hpp"
#include "cli/common_options.hpp"
#include "cli/out_dir.hpp"
#include "cli/subcommand.hpp"
#include "collbench/accept/html.hpp"
#include "collbench/accept/judge.hpp"
#include "collbench/accept/profile.hpp"
#include "collbench/accept/writers.hpp"
#include "collbench/backend/mpi/simulation.hpp"
#include "collbench/core/build_info.hpp"
#include "collbench/core/error.hpp"
#include "collbench/core/git_sha.hpp"
#include "collbench/core/units.hpp"
#include "collbench/model/system_profile.hpp"
#include "collbench/run/fault.hpp"
#include "collbench/run/runner.hpp"
#include "collbench/run/session.hpp"
#include "collbench/run/watchdog.hpp"

namespace collbench::cli {
namespace {

struct AcceptFlags {
  std::string profile;
  bool list = false;
  bool dry_run = false;
  std::optional<int> assume_ranks;  // --dry-run only
  std::optional<std::string> out_dir;
  bool force = false;
  std::optional<std::string> system;
  bool allow_faults = false;
  std::optional<int> repetitions;
  std::optional<std::string> max_time;
  std::vector<std::string> formats;           // --format FMT[=PATH]
  std::vector<report::OutputTarget> targets;  // parsed from formats before anything runs
  PlacementFlags placement;
  const CLI::Option* progress_option = nullptr;  // given on the command line?
};

const std::vector<std::string> kAcceptOutDirFiles{"verdict.json",          "verdict.md", "verdict.html", "junit.xml",
                                                  "collbench_accept.prom", "records-*"};

void print_plan(const accept::AcceptanceProfile& profile, const std::vector<accept::PlacementGroup>& groups) {
  std::printf("# acceptance profile '%s' (%s): %zu check(s)\n", profile.name.c_str(), profile.source.c_str(),
              profile.checks.size());
  double total_s = 0.0;
  for (const auto& g : groups) {
    std::printf("# placement %s: domains %s, %zu case(s)\n", g.label.c_str(),
                fmt::format("{}", fmt::join(g.placement.domain_sizes, ",")).c_str(), g.cases.size());
    for (const auto& pc : g.cases) {
      const auto& c = profile.checks[pc.check_index];
      total_s += pc.spec.stop.max_time_s;
      std::printf("  %-24s rep %d %-12s %10s %-8s %-12s %-6s%s\n", c.name.c_str(), pc.repetition + 1,
                  pc.spec.collective.c_str(), pc.bytes == 0 ? "(workload)" : format_bytes(pc.bytes).c_str(),
                  std::string(to_string(pc.spec.dtype)).c_str(), pc.spec.algo.c_str(),
                  std::string(to_string(pc.spec.scope)).c_str(),
                  pc.round >= 0 ? fmt::format(" round {}", pc.round).c_str() : "");
    }
  }
  std::printf("# estimated run time: at most %.0f s (sum of per-case max_time)\n", total_s);
}

// The HTML page, with the run headers of the record files just written for provenance.
std::string verdict_html(const accept::AcceptReport& report, const std::vector<std::string>& command) {
  std::vector<record::InputFile> records;
  std::vector<std::string> notes;
  for (const auto& path : report.record_files) {
    try {
      records.push_back(record::load_input(path));
    } catch (const Error& e) {
      notes.push_back(fmt::format("record file '{}' not read ({}): its provenance is missing", path, e.what()));
    }
  }
  report::HtmlContext ctx;
  ctx.generator = fmt::format("collbench {} (git {})", build::kVersion, build::git_sha());
  ctx.generated_at = report.finished_at;
  ctx.command = command;
  return accept::render_accept_html(report, records, ctx, notes);
}

// The Prometheus file's source labels: rank 0's host, COLLBENCH_RACK, the records' run ids.
accept::PrometheusSource prometheus_source(const run::ProcessInfo& info,
                                           const std::vector<accept::GroupRecords>& results) {
  accept::PrometheusSource src;
  src.host = info.hosts.empty() ? std::string() : info.hosts.front().host;
  if (const char* rack = std::getenv("COLLBENCH_RACK")) src.rack = rack;
  for (const auto& g : results) {
    if (g.records.empty() || src.run.find(g.records.front().run_id) != std::string::npos) continue;
    src.run += (src.run.empty() ? "" : ",") + g.records.front().run_id;
  }
  src.version = build::kVersion;
  return src;
}

// --assume-ranks (dry runs): the run planned as if it had that many ranks on one host.
void assume_ranks(run::ProcessInfo& info, const AcceptFlags& f) {
  if (!f.assume_ranks) return;
  if (!f.dry_run) throw InputError("--assume-ranks applies to --dry-run only");
  if (*f.assume_ranks < 1) throw InputError("--assume-ranks must be at least 1");
  info.size = *f.assume_ranks;  // one host: domains come from --ranks-per-domain, --domain-sizes or the system
  const record::HostInfo first = info.hosts.empty() ? record::HostInfo{} : info.hosts.front();
  info.hosts.assign(static_cast<std::size_t>(info.size), first);
  for (std::size_t r = 0; r < info.hosts.size(); ++r) info.hosts[r].rank = static_cast<int>(r);
  info.host_index.assign(static_cast<std::size_t>(info.size), 0);
}

// The profile with the command line's --repetitions and --max-time applied to every check.
accept::AcceptanceProfile effective_profile(const accept::AcceptanceProfile& profile, const AcceptFlags& f) {
  accept::AcceptanceProfile effective = profile;
  for (auto& c : effective.checks) {
    if (f.repetitions) {
      if (*f.repetitions < 1) throw InputError("--repetitions must be at least 1");
      c.repetitions = *f.repetitions;
    }
    if (f.max_time) c.base.stop.max_time_s = parse_duration_s(*f.max_time);
  }
  return effective;
}

// The system profile that bounds the checks: --system, else the profile's system, else a
// calibrated cpu-local (as the runner); without any, a note saying what cannot be judged.
struct BoundsSystem {
  std::optional<std::string> name;
  std::optional<model::SystemProfile> profile;
  std::string note;
};
BoundsSystem bounds_system(const AcceptFlags& f, const accept::AcceptanceProfile& profile) {
  BoundsSystem b;
  b.name = f.system ? f.system : profile.system;
  if (b.name) {
    b.profile = model::load_system_profile(*b.name);
    return b;
  }
  const auto known = model::list_system_profiles();
  if (std::find(known.begin(), known.end(), "cpu-local") != known.end()) {
    b.profile = model::load_system_profile("cpu-local");
  } else {
    b.note =
        "no system profile and no calibrated cpu-local: fractions of bound/expected cannot be judged, "
        "checks fall back to their absolute floors (run 'mpiexec -n 2 collbench calibrate' once)";
  }
  return b;
}

// Runs one placement group's cases (collective over all ranks); its records file when --out-dir.
run::RunSummary run_group(const AcceptFlags& f, const accept::AcceptanceProfile& profile, const BoundsSystem& system,
                          const accept::PlacementGroup& g, std::vector<std::string>& record_files,
                          run::Watchdog& watchdog) {
  plan::Sweep sweep;
  sweep.name = fmt::format("accept-{}-{}", profile.name, g.label);
  sweep.description = profile.description;
  sweep.system = system.name;
  sweep.source = profile.source;
  for (const auto& pc : g.cases) sweep.cases.push_back(pc.spec);
  OutputFlags out;
  if (f.out_dir) {
    out.out = (std::filesystem::path(*f.out_dir) / fmt::format("records-{}.jsonl", g.label)).string();
    record_files.push_back(out.out);
  }
  out.formats = {"none"};
  PlacementFlags placement = f.placement;
  if (profile.progress && f.progress_option->count() == 0) placement.progress = *profile.progress;
  if (g.ranks_per_domain || g.domain_sizes) {
    placement.ranks_per_domain = g.ranks_per_domain;
    placement.domain_sizes = g.domain_sizes;
  }
  run::RunnerOptions options = runner_options(out, placement, 0);
  options.measure_repeats = true;  // repetitions of a check share its case key
  options.show_progress = false;
  options.shared_watchdog = &watchdog;
  run::Runner runner(options);
  return runner.run(sweep);
}

// Rank 0: the report on stdout in --format and, with --out-dir, every verdict file.
void write_report(const AcceptFlags& f, const accept::AcceptReport& report, const run::ProcessInfo& info,
                  const std::vector<accept::GroupRecords>& results) {
  report::WriterMultiplex<accept::AcceptReport>(accept::accept_writers(), f.targets).write(report);
  if (!f.out_dir) return;
  const std::filesystem::path dir(*f.out_dir);
  write_file_atomic((dir / "verdict.json").string(), accept::accept_to_json(report).dump(2) + "\n");
  write_file_atomic((dir / "verdict.md").string(), accept::render_accept_markdown(report));
  write_file_atomic((dir / "verdict.html").string(), verdict_html(report, process_argv()));
  write_file_atomic((dir / "junit.xml").string(), accept::render_accept_junit(report));
  write_file_atomic((dir / "collbench_accept.prom").string(),
                    accept::render_accept_prometheus(report, prometheus_source(info, results)));
}

// What the run started with, for the report.
struct Started {
  std::string at;
  double seconds = 0.0;  // simulated time in a simulation build
};

// Rank 0: judges the records, writes the report; the exit code.
int judge_and_write(const AcceptFlags& f, const accept::AcceptanceProfile& effective, const BoundsSystem& system,
                    const run::ProcessInfo& info, const std::vector<accept::GroupRecords>& results,
                    const std::vector<std::string>& record_files, const Started& started,
                    const run::FaultPlan& faults) {
  std::vector<std::string> hosts;
  for (const auto& h : info.hosts) hosts.push_back(h.host);
  accept::AcceptReport report = accept::judge(effective, results, system.profile ? &*system.profile : nullptr, hosts);
  report.system = system.profile ? system.profile->name : std::string();
  report.system_note = system.note;
  report.num_ranks = info.size;
  report.started_at = started.at;
  report.finished_at = run::utc_now_iso8601();
  report.duration_s = backend::sim::now_seconds() - started.seconds;
  report.finished_unix = std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
  report.record_files = record_files;
  if (!faults.empty()) report.fault = faults.text();
  if (!system.note.empty()) report.notes.push_back(system.note);
  write_report(f, report, info, results);
  const int code = report.exit_code();
  if (code != 0) {
    std::fprintf(stderr, "collbench: accept: FAILED: %zu of %zu check(s) failed\n", report.count(accept::Verdict::fail),
                 report.rows.size());
  }
  return code;
}

int run_accept(const AcceptFlags& f) {
  // 1. Every input is checked before anything runs or is written.
  const accept::AcceptanceProfile profile = accept::load_acceptance_profile(f.profile);
  const run::FaultPlan faults = run::FaultPlan::from_env();
  if (!faults.empty() && !f.allow_faults) {
    throw InputError(
        fmt::format("COLLBENCH_FAULT is set ('{}'): accept refuses injected faults unless "
                    "--allow-faults is given (tests)",
                    faults.text()));
  }
  run::Control control;
  run::ProcessInfo info = run::gather_process_info(control);
  assume_ranks(info, f);
  if (const std::string problem = accept::rank_count_problem(profile, info.size); !problem.empty()) {
    throw InputError(problem);
  }
  const accept::AcceptanceProfile effective = effective_profile(profile, f);
  if (f.placement.ranks_per_domain && f.placement.domain_sizes) {
    throw InputError("--ranks-per-domain and --domain-sizes exclude each other");
  }
  const BoundsSystem system = bounds_system(f, profile);
  std::optional<int> profile_domain;
  if (system.profile && system.profile->scale_up.domain_size > 0) profile_domain = system.profile->scale_up.domain_size;
  const auto resolve = [&](const std::optional<int>& rpd, const std::optional<std::string>& sizes) {
    run::PlacementOptions o;
    o.allow_interleaved = f.placement.allow_interleaved;
    o.ranks_per_domain = rpd || sizes ? rpd : f.placement.ranks_per_domain;
    o.domain_sizes = rpd || sizes ? sizes : f.placement.domain_sizes;
    std::string warning;
    return run::resolve_placement(info, o, profile_domain, warning);
  };
  const std::vector<accept::PlacementGroup> groups = accept::plan_acceptance(effective, resolve);
  if (f.dry_run) {
    if (control.rank() == 0) print_plan(effective, groups);
    return 0;
  }
  if (f.out_dir) prepare_out_dir(control, *f.out_dir, f.force, kAcceptOutDirFiles);

  // 2. Run each placement group.
  const Started started{run::utc_now_iso8601(), backend::sim::now_seconds()};
  std::vector<accept::GroupRecords> results;
  std::vector<std::string> record_files;
  // One watchdog for every group and the judging after them: a stop signal between two groups
  // ends the job with exit 3 (MPI_Abort), as during a group (issue 37 item 5).
  run::Watchdog watchdog(run::host_names(info));
  for (std::size_t gi = 0; gi < groups.size(); ++gi) {
    const auto& g = groups[gi];
    if (control.rank() == 0) {
      std::fprintf(stderr, "collbench: accept: placement %s (%zu/%zu): %zu case(s) on domains %s\n", g.label.c_str(),
                   gi + 1, groups.size(), g.cases.size(),
                   fmt::format("{}", fmt::join(g.placement.domain_sizes, ",")).c_str());
    }
    results.push_back({&g, run_group(f, profile, system, g, record_files, watchdog).records});
  }

  // 3. Judge and write on rank 0; every rank returns the same exit code.
  return agreed_code(
      control, [&] { return judge_and_write(f, effective, system, info, results, record_files, started, faults); });
}

Action setup_accept(CLI::App& app) {
  auto f = std::make_shared<AcceptFlags>();
  app.add_option("profile", f->profile, "Acceptance profile: a name from profiles/acceptance/ or a YAML path");
  app.add_flag("--list", f->list, "List the shipped acceptance profiles");
  app.add_flag("--dry-run", f->dry_run, "Print the cases each check expands to; run nothing");
  app.add_option("--assume-ranks", f->assume_ranks, "Rank count for --dry-run (default: this run's)");
  app.add_option(
      "--out-dir", f->out_dir,
      "Write verdict.json, verdict.md, verdict.html, junit.xml, collbench_accept.prom and records-*.jsonl here");
  app.add_flag("--force", f->force, "Replace results already in --out-dir");
  add_system_option(app, f->system, "System profile for bounds, instead of the acceptance profile's 'system:'");
  app.add_flag("--allow-faults", f->allow_faults, "Accept an injected COLLBENCH_FAULT (tests of the tooling)");
  app.add_option("--repetitions", f->repetitions, "Override every check's repetitions");
  app.add_option("--max-time", f->max_time, "Override every repetition's maximum timed duration (e.g. 500ms)");
  add_format_option(app, f->formats, accept::accept_writers().names(), "table", "Output of the verdicts");
  add_placement_flags(app, f->placement);
  f->progress_option = app.get_option("--progress");
  app.footer(
      "Verdicts: PASS, FAIL (with the reason and, where found, the slow rank or pair), WAIVED.\n"
      "Exit codes: 0 every check passed, 1 a check failed, 2 bad input.\n"
      "Examples:\n"
      "  mpiexec -n 2 collbench accept cpu-local --out-dir accept-out\n"
      "  mpiexec -n 72 collbench accept gb300-nvl72 --out-dir /var/lib/node_exporter/collbench");
  return [f]() -> int {
    f->targets = report::parse_output_targets(f->formats, accept::accept_writers().names(), "table");
    if (f->list) {
      if (run::world_rank() == 0) {
        for (const auto& name : accept::list_acceptance_profiles()) std::printf("%s\n", name.c_str());
      }
      return 0;
    }
    if (f->profile.empty()) throw InputError("accept: give a profile (a name from --list, or a YAML path)");
    return run_accept(*f);
  };
}

}  // namespace

CB_REGISTER_SUBCOMMAND(Subcommand{
    "accept", "Run an acceptance profile: PASS/FAIL per check with reasons (under mpiexec)", 45, &setup_accept, true,
    "no verdict is written; with --out-dir, the records of the cases finished before it stay in its "
    "records-*.jsonl (run accept again with --force to start over)"});

}  // namespace collbench::cli
