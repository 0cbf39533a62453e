// `collbench sweep FILE`: a YAML suite of cases (docs/interfaces.md section 5); --dry-run prints the
// cases, the run time their stopping rule allows and the buffer memory per rank without running.
#include <fmt/format.h>

#include <algorithm>
#include <cstdio>
#include <limits>
#include <optional>

#include "cli/common_options.hpp"
#include "cli/nccltests_flags.hpp"
#include "cli/subcommand.hpp"
#include "collbench/coll/collective.hpp"
#include "collbench/core/dtype.hpp"
#include "collbench/core/error.hpp"
#include "collbench/core/units.hpp"
#include "collbench/plan/stop_estimate.hpp"
#include "collbench/run/measure.hpp"

namespace collbench::cli {
namespace {

struct SweepFlags {
  std::string file;
  bool dry_run = false;
  int assume_ranks = 2;
  StopFlags stop;
  PlacementFlags placement;
  OutputFlags output;
  int repeats = 1;  // --repeats k
};

// Families sized by a routed workload (MoE) are estimated only up to this many ranks: their shape
// routes every token of every rank (about 2 us a token), minutes for 1,024 ranks x 4,096 tokens.
constexpr int kMaxRoutedRanks = 64;

// Buffer bytes one rank allocates for case `c` on `num_ranks` ranks (the largest over ranks): the
// collective's own shape, in the context the runner gives it (run::case_context, one domain), so
// MoE cases (whose size the workload and routing set) count their real all-to-all-v buffers. The
// plan's size-only estimate stands in where the shape needs more than a rank count (e.g.
// hierarchical MoE needs domains); nullopt for routed cases above kMaxRoutedRanks.
std::optional<std::uint64_t> buffer_bytes_per_rank(const coll::Collective& traits, const plan::Case& c, int num_ranks) {
  const std::optional<Dtype> wire = traits.case_dtype(c.params);
  if (wire && num_ranks > kMaxRoutedRanks) return std::nullopt;
  coll::CaseContext ctx = run::case_context(c, 0, num_ranks, nullptr);
  ctx.dtype = wire.value_or(c.dtype);
  std::uint64_t most = 0;
  try {
    for (int rank = 0; rank < num_ranks; ++rank) {
      ctx.rank = rank;
      const coll::Shape shape = traits.shape_for(c.bytes, ctx);
      const std::size_t elems = c.in_place ? shape.in_place_elems() : shape.send_elems + shape.recv_elems;
      most = std::max<std::uint64_t>(most, elems * dtype_size(ctx.dtype));
    }
  } catch (const InputError&) {
    return plan::estimated_buffer_bytes(c, num_ranks);
  }
  return most;
}

// A case's timed seconds in the estimate: its stopping rule with every iteration as long as the
// budget allows (budget / 100 iterations; docs/measurement.md step 6), and at most: --max-time.
struct CaseEstimate {
  double about_s = 0.0, most_s = 0.0;
};

CaseEstimate estimate_case(const plan::StopRule& rule) {
  return {plan::timed_seconds(rule, plan::budget_iteration_s(rule)),
          plan::timed_seconds(rule, std::numeric_limits<double>::infinity())};
}

void print_case_row(std::size_t i, const plan::Case& c, double about_s) {
  const auto& traits = coll::find_collective(c.collective);
  // MoE cases: the workload sets the size and the dtype; show what varies instead.
  const Dtype dtype = traits.case_dtype(c.params).value_or(c.dtype);
  std::string params;
  for (const auto& [key, value] : c.params) params += fmt::format(" {}={}", key, value);
  std::printf(" %4zu %-14s %12s %-10s %-5s %-12s %-7s %-6s %-9s %12.3g%s\n", i, c.collective.c_str(),
              params.empty() ? format_bytes(c.bytes).c_str() : "workload", std::string(to_string(dtype)).c_str(),
              std::string(to_string(c.redop)).c_str(), c.algo.c_str(), std::string(to_string(c.scope)).c_str(),
              c.in_place ? "in" : "out", std::string(to_string(c.timing)).c_str(), about_s, params.c_str());
}

void print_dry_run(const plan::Sweep& sweep, int num_ranks, int repeats) {
  std::printf("# sweep '%s' from %s: %zu case(s)%s\n", sweep.name.c_str(), sweep.source.c_str(), sweep.cases.size(),
              sweep.system ? fmt::format(", system {}", *sweep.system).c_str() : "");
  std::printf("#%4s %-14s %12s %-10s %-5s %-12s %-7s %-6s %-9s %12s\n", "idx", "collective", "bytes", "dtype", "redop",
              "algo", "scope", "place", "timing", "est time(s)");
  CaseEstimate total;
  std::uint64_t peak_bytes = 0;
  std::size_t not_estimated = 0;
  for (std::size_t i = 0; i < sweep.cases.size(); ++i) {
    const auto& c = sweep.cases[i];
    const CaseEstimate e = estimate_case(c.stop);
    total.about_s += e.about_s * repeats;  // --repeats k measures every case k times
    total.most_s += e.most_s * repeats;
    if (const auto bytes = buffer_bytes_per_rank(coll::find_collective(c.collective), c, num_ranks)) {
      peak_bytes = std::max(peak_bytes, *bytes);
    } else {
      ++not_estimated;
    }
    print_case_row(i, c, e.about_s);
  }
  // Timed phases only: verification and warm-up add about one iteration each per launch.
  std::printf("# estimated run time: about %.3g s, at most %.1f s\n", total.about_s, total.most_s);
  std::printf(
      "# (timed phases, docs/measurement.md step 6; about: each case until its budget or --max-iters with "
      "iterations of at most budget / 100; at most: each case until its --max-time; converging cases stop sooner)\n");
  std::printf("# buffer memory per rank: at most %s (largest case, %d ranks assumed)\n",
              format_bytes(peak_bytes).c_str(), num_ranks);
  if (not_estimated > 0) {
    std::printf("# (%zu case(s) sized by routing not included: estimated up to %d ranks; pass --assume-ranks %d)\n",
                not_estimated, kMaxRoutedRanks, kMaxRoutedRanks);
  }
}

Action setup_sweep(CLI::App& app) {
  auto f = std::make_shared<SweepFlags>();
  app.add_option("file", f->file, "Sweep file (YAML)")->required();
  app.add_flag("--dry-run", f->dry_run, "Print the cases, estimated time and memory; run nothing");
  app.add_option("--assume-ranks", f->assume_ranks, "Rank count for --dry-run estimates")->default_str("2");
  add_stop_flags(app, *&f->stop, false);
  add_repeats_flag(app, f->repeats);
  add_placement_flags(app, f->placement);
  add_output_flags(app, f->output);
  app.footer(
      "Examples:\n"
      "  collbench sweep --dry-run profiles/sweeps/cpu-smoke.yaml\n"
      "  mpiexec -n 4 collbench sweep profiles/sweeps/cpu-smoke.yaml --ranks-per-domain 2 --out results/smoke.jsonl");
  return [f]() -> int {
    plan::Sweep sweep = plan::load_sweep_file(f->file);
    for (auto& c : sweep.cases) apply_stop_flags(f->stop, c);
    if (f->output.layout == "nccl-tests") pair_in_place_twins(sweep);  // twins side by side
    if (f->dry_run) {
      print_dry_run(sweep, f->assume_ranks, f->repeats);
      return 0;
    }
    run::RunnerOptions options = runner_options(f->output, f->placement, 0);
    options.repeats = f->repeats;
    run::Runner runner(options);
    return exit_code_for(runner.run(sweep));
  };
}

}  // namespace

// --dry-run needs no MPI, but a sweep does; MPI singleton init is harmless for --dry-run.
CB_REGISTER_SUBCOMMAND(Subcommand{"sweep", "Run a YAML sweep of many cases (under mpiexec)", 20, &setup_sweep, true});

}  // namespace collbench::cli
