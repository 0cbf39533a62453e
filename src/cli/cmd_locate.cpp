// `collbench locate`: finds the slow rank or link (docs/locate.md). From results files it reads
// the per-rank skew (and a pairwise matrix if the files hold round-robin rounds); under mpiexec
// without --results it measures: all-reduce for the skew, round-robin send/recv for the rank x
// rank matrix, and all-reduce on halves of the suspect set for the bisection. The analysis is
// locate/locate.hpp; this file only runs cases and writes. Exit 0 nothing found, 1 a suspect
// named, 2 bad input.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <array>
#include <cstdio>
#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <string>

#include "cli/agreed_exit.hpp"
#include "cli/common_options.hpp"
#include "cli/out_dir.hpp"
#include "cli/subcommand.hpp"
#include "collbench/backend/mpi/simulation.hpp"
#include "collbench/core/error.hpp"
#include "collbench/core/names.hpp"
#include "collbench/core/pairing.hpp"
#include "collbench/core/units.hpp"
#include "collbench/locate/locate.hpp"
#include "collbench/record/jsonl.hpp"
#include "collbench/report/locate_render.hpp"
#include "collbench/report/writer_registries.hpp"
#include "collbench/run/fault.hpp"
#include "collbench/run/runner.hpp"
#include "collbench/run/session.hpp"
#include "collbench/run/watchdog.hpp"

namespace collbench::cli {
namespace {

struct LocateFlags {
  std::vector<std::string> results;
  std::string methods = "skew,pairwise,bisect";
  std::string skew_bytes = "64K,4M";
  std::string pair_bytes = "4M";
  std::string bisect_bytes = "4M";
  std::string backend = "mpi";
  std::optional<std::string> out_dir;
  bool force = false;
  std::vector<std::string> formats;           // --format FMT[=PATH]
  std::vector<report::OutputTarget> targets;  // parsed from formats before anything runs
  std::string max_time = "1s";
  int min_iters = 20;
  int warmup = 3;
  double min_lead = 0.2;
  double consistency = 0.5;
  double slow_link = 0.5;
  double min_ratio = 1.5;
  int bisect_repetitions = 3;
  int pair_rounds = 0;  // 0: every round-robin round
  PlacementFlags placement;
};

const std::vector<std::string> kLocateOutDirFiles{"locate.json", "pairwise-matrix.csv", "records-*"};
const std::vector<std::string> kMethods{"skew", "pairwise", "bisect"};

struct Methods {
  bool skew = false, pairwise = false, bisect = false;
};

Methods parse_methods(const std::string& text) {
  Methods m;
  for (const auto& name : split_list(text, "--methods")) {
    if (name == "skew")
      m.skew = true;
    else if (name == "pairwise")
      m.pairwise = true;
    else if (name == "bisect")
      m.bisect = true;
    else
      throw InputError("--methods: " + unknown_name_message("method", name, kMethods));
  }
  return m;
}

std::vector<std::uint64_t> parse_sizes(const std::string& text, const char* flag) {
  std::vector<std::uint64_t> out;
  for (const auto& s : split_list(text, flag)) {
    try {
      out.push_back(parse_bytes(s));
    } catch (const InputError& e) {
      throw InputError(fmt::format("{}: {}", flag, e.what()));
    }
  }
  return out;
}

// The measured cases' common settings.
plan::Case base_case(const LocateFlags& f, const std::string& collective, std::uint64_t bytes) {
  plan::Case c;
  c.collective = collective;
  c.backend = parse_backend(f.backend);
  c.bytes = bytes;
  c.stop.warmup = f.warmup;
  c.stop.min_iters = f.min_iters;
  c.stop.max_time_s = parse_duration_s(f.max_time);
  c.stop.min_time_s = std::min(c.stop.min_time_s, c.stop.max_time_s);
  c.stop.max_noise = 0.02;
  return c;
}

class Measurer {
 public:
  Measurer(const LocateFlags& f, const run::Control& control, run::Watchdog* watchdog)
      : f_(f), control_(control), watchdog_(watchdog) {}

  // Runs `cases` (collective), returns the records on rank 0 (empty elsewhere).
  std::vector<record::CaseRecord> run(const std::string& name, std::vector<plan::Case> cases,
                                      const std::optional<std::string>& domain_sizes) {
    plan::Sweep sweep;
    sweep.name = "locate-" + name;
    sweep.source = "<collbench locate>";
    sweep.cases = std::move(cases);
    OutputFlags out;
    out.formats = {"none"};
    if (f_.out_dir) {
      out.out = (std::filesystem::path(*f_.out_dir) / fmt::format("records-{}.jsonl", name)).string();
      files_.push_back(out.out);
    }
    // The user's placement (--ranks-per-domain, --domain-sizes) for skew and pairwise, so the
    // records carry the domains the pairwise analysis classes links by; bisection's own split.
    PlacementFlags placement = f_.placement;
    if (domain_sizes) {
      placement.ranks_per_domain.reset();
      placement.domain_sizes = domain_sizes;
    }
    if (control_.rank() == 0) {
      std::fprintf(stderr, "collbench: locate: %s: %zu case(s)%s\n", name.c_str(), sweep.cases.size(),
                   domain_sizes ? fmt::format(" on domains {}", *domain_sizes).c_str() : "");
    }
    run::RunnerOptions options = runner_options(out, placement, 0);
    options.measure_repeats = true;  // repetitions of a bisection step share its case key
    options.show_progress = false;
    options.shared_watchdog = watchdog_;
    run::Runner runner(options);
    return runner.run(sweep).records;
  }

  [[nodiscard]] const std::vector<std::string>& files() const { return files_; }

 private:
  const LocateFlags& f_;
  const run::Control& control_;
  run::Watchdog* watchdog_;  // locate's, across its phases
  std::vector<std::string> files_;
};

// Rank 0 computes, every rank receives: the two halves of each repetition of a bisection run.
std::vector<std::pair<locate::HalfTiming, locate::HalfTiming>> broadcast_halves(
    const run::Control& control, const std::vector<std::pair<locate::HalfTiming, locate::HalfTiming>>& halves,
    const std::string& error) {
  const std::string message = control.broadcast_string(error);
  if (!message.empty()) throw RuntimeFailure(message);
  constexpr std::size_t kPer = 12;
  std::vector<double> v(halves.size() * kPer, 0.0);
  if (control.rank() == 0) {
    for (std::size_t i = 0; i < halves.size(); ++i) {
      const auto& [a, b] = halves[i];
      const std::array<double, kPer> one{static_cast<double>(a.first_rank),
                                         static_cast<double>(a.num_ranks),
                                         a.p50_us,
                                         a.ci_low_us,
                                         a.ci_high_us,
                                         a.busbw_factor,
                                         static_cast<double>(b.first_rank),
                                         static_cast<double>(b.num_ranks),
                                         b.p50_us,
                                         b.ci_low_us,
                                         b.ci_high_us,
                                         b.busbw_factor};
      std::copy(one.begin(), one.end(), v.begin() + static_cast<std::ptrdiff_t>(i * kPer));
    }
  }
  v = control.broadcast_doubles(v);
  const std::size_t count = v.size() / kPer;
  const auto half = [&v](std::size_t o) {
    locate::HalfTiming t;
    t.first_rank = static_cast<int>(v[o]);
    t.num_ranks = static_cast<int>(v[o + 1]);
    t.p50_us = v[o + 2];
    t.ci_low_us = v[o + 3];
    t.ci_high_us = v[o + 4];
    t.busbw_factor = v[o + 5];
    return t;
  };
  std::vector<std::pair<locate::HalfTiming, locate::HalfTiming>> out;
  for (std::size_t i = 0; i < count; ++i) out.emplace_back(half(i * kPer), half(i * kPer + 6));
  return out;
}

void write_outputs(const LocateFlags& f, const locate::LocateReport& rep) {
  if (!f.out_dir) return;
  const std::filesystem::path dir(*f.out_dir);
  write_file_atomic((dir / "locate.json").string(), report::locate_to_json(rep).dump(2) + "\n");
  if (rep.pairwise)
    write_file_atomic((dir / "pairwise-matrix.csv").string(), locate::pairwise_matrix_csv(rep.pairwise->matrix));
}

int finish(const LocateFlags& f, locate::LocateReport& rep) {
  locate::collect_suspects(rep);
  report::WriterMultiplex<locate::LocateReport>(report::locate_writers(), f.targets).write(rep);
  write_outputs(f, rep);
  return rep.suspects.empty() ? 0 : static_cast<int>(ExitCode::check_failed);
}

locate::SkewOptions skew_options(const LocateFlags& f) {
  locate::SkewOptions o;
  o.min_lead_fraction = f.min_lead;
  o.min_consistency = f.consistency;
  return o;
}

// Analysis of existing results files: skew, and a pairwise matrix when round-robin rounds of
// one size are present.
int locate_from_files(const LocateFlags& f, const Methods& methods) {
  locate::LocateReport rep;
  std::vector<record::CaseRecord> all;
  std::map<std::pair<std::uint64_t, int>, std::vector<locate::PairwiseRound>> rounds;
  for (const auto& path : f.results) {
    record::ResultFile file = record::read_results(path);
    for (const auto& w : file.warnings) std::fprintf(stderr, "collbench: warning: %s\n", w.c_str());
    if (file.header) {
      if (rep.hosts.empty()) {
        for (const auto& h : file.header->hosts) rep.hosts.push_back(h.host);
      }
      if (file.header->fault && !rep.fault) rep.fault = file.header->fault;
    }
    for (auto& r : file.cases) {
      rep.num_ranks = std::max(rep.num_ranks, r.num_ranks);
      if (const auto round = locate::pairwise_round_of(r); round && r.scope == "global") {
        rounds[{r.bytes, r.num_ranks}].push_back({*round, r});
      } else {
        all.push_back(std::move(r));
      }
    }
  }
  if (methods.skew) rep.skew = locate::analyse_skew(all, skew_options(f));
  if (methods.pairwise) {
    if (rounds.empty()) {
      rep.notes.push_back(
          "no round-robin send/recv rounds in the files: no pairwise matrix (run 'collbench locate' "
          "under mpiexec to measure one)");
    } else {
      const auto& [key, rs] = *rounds.begin();
      if (rounds.size() > 1) rep.notes.push_back("several pairwise sizes in the files: the smallest is analysed");
      rep.pairwise = locate::analyse_pairwise(locate::build_pairwise_matrix(rs), {f.slow_link});
    }
  }
  if (methods.bisect)
    rep.notes.push_back("bisection needs new runs: run 'collbench locate' under mpiexec without --results");
  return finish(f, rep);
}

// Every rank at the same point, then rank 0's clock (simulated time in a simulation).
double cluster_clock(const run::Control& control) {
  control.barrier(backend::Progress::spin);
  return backend::sim::now_seconds();
}

// One measured locate run: the methods' cases on every rank, the analysis on rank 0.
class LocateRun {
 public:
  LocateRun(const LocateFlags& f, const run::Control& control, int n, run::Watchdog* watchdog)
      : f_(f), control_(control), measurer_(f, control, watchdog), n_(n), root_(control.rank() == 0) {
    rep_.num_ranks = n;
    rep_.clock = backend::sim::active() ? "simulated" : "wall";
  }
  locate::LocateReport& report() { return rep_; }

  // Heartbeat skew: all-reduce at each --skew-bytes size.
  void skew(const std::vector<std::uint64_t>& sizes) {
    std::vector<plan::Case> cases;
    for (const auto bytes : sizes) cases.push_back(base_case(f_, "allreduce", bytes));
    const auto records = timed("skew", cases.size(), [&] { return measurer_.run("skew", cases, std::nullopt); });
    if (root_) rep_.skew = locate::analyse_skew(records, skew_options(f_));
  }

  // Pairwise: send/recv in the round-robin rounds --pair-rounds picks.
  void pairwise(std::uint64_t bytes) {
    std::vector<plan::Case> cases;
    const std::vector<int> picked = sampled_rounds(n_, f_.pair_rounds);
    for (const int round : picked) {
      plan::Case c = base_case(f_, "sendrecv", bytes);
      c.params["pairing"] = "round-robin";
      c.params["round"] = std::to_string(round);
      cases.push_back(c);
    }
    const auto records =
        timed("pairwise", cases.size(), [&] { return measurer_.run("pairwise", cases, std::nullopt); });
    if (!root_) return;
    std::vector<locate::PairwiseRound> rounds;
    for (std::size_t i = 0; i < records.size(); ++i) rounds.push_back({picked[i], records[i]});
    locate::PairwiseOptions o{f_.slow_link};
    o.rounds_measured = static_cast<int>(picked.size());
    rep_.pairwise = locate::analyse_pairwise(locate::build_pairwise_matrix(rounds), o);
  }

  // Bisection: all-reduce inside the two halves of the suspect range, halved until one rank.
  void bisect(std::uint64_t bytes) {
    int step = 0;
    const auto measure = [&](int lo, int mid, int hi) {
      const std::vector<int> sizes = locate::bisect_domain_sizes(n_, lo, mid, hi);
      plan::Case c = base_case(f_, "allreduce", bytes);
      c.scope = Scope::domain;
      const std::vector<plan::Case> cases(static_cast<std::size_t>(f_.bisect_repetitions), c);
      const auto records =
          measurer_.run(fmt::format("bisect-{}", ++step), cases, fmt::format("{}", fmt::join(sizes, ",")));
      const Halves h = halves_of(records, step, lo, mid, hi);
      return broadcast_halves(control_, h.timings, h.error);
    };
    locate::BisectOptions o;
    o.min_ratio = f_.min_ratio;
    const auto t0 = cluster_clock(control_);
    rep_.bisection = locate::bisect(n_, measure, o);
    rep_.costs.push_back({"bisect", cluster_clock(control_) - t0, step * f_.bisect_repetitions});
  }

 private:
  // Runs one method's cases and records what it cost the cluster.
  template <class Body>
  std::vector<record::CaseRecord> timed(const char* method, std::size_t num_cases, const Body& body) {
    const double t0 = cluster_clock(control_);
    auto records = body();
    rep_.costs.push_back({method, cluster_clock(control_) - t0, static_cast<int>(num_cases)});
    return records;
  }

  // Rank 0: the halves' timings of a bisection step's records, or the error when one did not
  // measure (the other ranks: nothing).
  struct Halves {
    std::vector<std::pair<locate::HalfTiming, locate::HalfTiming>> timings;
    std::string error;
  };
  Halves halves_of(const std::vector<record::CaseRecord>& records, int step, int lo, int mid, int hi) const {
    Halves h;
    if (!root_) return h;
    try {
      for (const auto& r : records) {
        if (r.status != "ok") {
          throw RuntimeFailure(fmt::format("bisection run {} did not measure: {}", step, r.reason.value_or(r.status)));
        }
        h.timings.push_back(locate::halves_from_record(r, lo, mid, hi));
      }
    } catch (const Error& e) {
      h.error = e.what();
    }
    return h;
  }

  const LocateFlags& f_;
  const run::Control& control_;
  Measurer measurer_;
  int n_;
  bool root_;
  locate::LocateReport rep_;
};

// The note that pairwise readings swing when ranks share cores; empty when they do not.
std::optional<std::string> oversubscribed_note(const LocateFlags& f, const run::ProcessInfo& info,
                                               const std::vector<std::string>& hosts) {
  if (f.slow_link <= 0.25 || info.ranks_on_host <= info.cores_available) return std::nullopt;
  return fmt::format(
      "{} ranks share {} core(s) on {}: each pairwise round is measured once, and with the load swinging "
      "between rounds a healthy link can read below half the reference; treat slow links near --slow-link {:g} "
      "with care (--slow-link 0.25 suits oversubscribed hosts)",
      info.ranks_on_host, info.cores_available, hosts.empty() ? std::string("this host") : hosts.front(), f.slow_link);
}

int locate_run(const LocateFlags& f, const Methods& methods) {
  run::Control control;
  const run::ProcessInfo info = run::gather_process_info(control);
  const int n = info.size;
  if (n < 2) throw InputError("locate measures between ranks: run it under mpiexec with 2 or more ranks");
  const auto skew_sizes = parse_sizes(f.skew_bytes, "--skew-bytes");
  const auto pair_sizes = parse_sizes(f.pair_bytes, "--pair-bytes");
  const auto bisect_sizes = parse_sizes(f.bisect_bytes, "--bisect-bytes");
  if (pair_sizes.size() != 1 || bisect_sizes.size() != 1) {
    throw InputError("--pair-bytes and --bisect-bytes take one size each");
  }
  base_case(f, "allreduce", 8);  // validates --max-time and --backend before anything runs
  if (f.out_dir) prepare_out_dir(control, *f.out_dir, f.force, kLocateOutDirFiles);
  // One watchdog for every phase, the barriers and the analysis between them: a stop signal
  // there ends the job with exit 3 (MPI_Abort), as during a phase (issue 37 item 5).
  run::Watchdog watchdog(run::host_names(info));
  LocateRun run(f, control, n, &watchdog);
  locate::LocateReport& rep = run.report();
  for (const auto& h : info.hosts) rep.hosts.push_back(h.host);
  if (const auto faults = run::FaultPlan::from_env(); !faults.empty()) rep.fault = faults.text();
  if (methods.pairwise) {
    if (auto note = oversubscribed_note(f, info, rep.hosts)) rep.notes.push_back(std::move(*note));
  }
  if (methods.skew) run.skew(skew_sizes);
  if (methods.pairwise) run.pairwise(pair_sizes.front());
  if (methods.bisect) run.bisect(bisect_sizes.front());
  return agreed_code(control, [&] { return finish(f, rep); });
}

Action setup_locate(CLI::App& app) {
  auto f = std::make_shared<LocateFlags>();
  app.add_option("--results", f->results, "Analyse these results files (JSONL) instead of measuring");
  app.add_option("--methods", f->methods, "Comma list of skew, pairwise, bisect")->default_str("skew,pairwise,bisect");
  app.add_option("--skew-bytes", f->skew_bytes, "All-reduce sizes of the skew run (comma list)")->default_str("64K,4M");
  app.add_option("--pair-bytes", f->pair_bytes, "Bytes each pair exchanges per round-robin round")->default_str("4M");
  app.add_option("--pair-rounds", f->pair_rounds,
                 "Pairwise: measure this many of the n-1 round-robin rounds, spread evenly (each rank meets this "
                 "many partners); default every round")
      ->check(CLI::Range(1, 1000000));
  app.add_option("--bisect-bytes", f->bisect_bytes, "All-reduce size of the bisection runs")->default_str("4M");
  app.add_option("--backend", f->backend, "mpi or nccl")->default_str("mpi");
  app.add_option("--out-dir", f->out_dir, "Write locate.json, pairwise-matrix.csv and records-*.jsonl here");
  app.add_flag("--force", f->force, "Replace results already in --out-dir");
  add_format_option(app, f->formats, report::locate_writers().names(), "text", "Output of the findings");
  app.add_option("--max-time", f->max_time, "Maximum timed duration per case")->default_str("1s");
  app.add_option("--min-iters", f->min_iters, "Minimum timed iterations per case")
      ->check(CLI::Range(1, 1000000))
      ->default_str("20");
  app.add_option("--warmup", f->warmup, "Warm-up iterations per case")->check(CLI::Range(0, 1000000))->default_str("3");
  app.add_option("--min-lead", f->min_lead, "Skew: a late rank's lead as a fraction of the case time")
      ->check(CLI::Range(0.0, 1.0))
      ->default_str("0.2");
  app.add_option("--consistency", f->consistency, "Skew: named when late in more than this fraction of the cases")
      ->check(CLI::Range(0.0, 1.0))
      ->default_str("0.5");
  app.add_option("--slow-link", f->slow_link, "Pairwise: a link is slow below this fraction of the reference link")
      ->check(CLI::Range(0.0, 1.0))
      ->default_str("0.5");
  app.add_option("--min-ratio", f->min_ratio, "Bisection: the slower half at least this many times slower")
      ->check(CLI::Range(1.0, 1e6))
      ->default_str("1.5");
  app.add_option("--bisect-repetitions", f->bisect_repetitions,
                 "Bisection: measurements of each split; a half must be slower in all of them")
      ->check(CLI::Range(1, 100))
      ->default_str("3");
  add_placement_flags(app, f->placement);
  app.footer(
      "Exit codes: 0 nothing found, 1 a suspect rank, link or group named, 2 bad input.\n"
      "Examples:\n"
      "  mpiexec -n 8 collbench locate --out-dir locate-out\n"
      "  collbench locate --results results/sweep.jsonl --methods skew");
  return [f]() -> int {
    f->targets = report::parse_output_targets(f->formats, report::locate_writers().names(), "text");
    const Methods methods = parse_methods(f->methods);
    if (!f->results.empty()) {
      const run::Control control;
      if (f->out_dir) prepare_out_dir(control, *f->out_dir, f->force, kLocateOutDirFiles);
      if (control.rank() != 0) return 0;  // reading files needs one process
      return locate_from_files(*f, methods);
    }
    return locate_run(*f, methods);
  };
}

}  // namespace

CB_REGISTER_SUBCOMMAND(Subcommand{
    "locate", "Find the slow rank or link: skew, pairwise matrix, bisection (under mpiexec)", 50, &setup_locate, true,
    "no report is written; with --out-dir, the records of the cases finished before it stay in its "
    "records-*.jsonl (run locate again with --force to start over)"});

}  // namespace collbench::cli
