// nccl-tests' flags on `collbench run` (issue 20 item 13): each one maps to a collbench flag
// (-z: --timing, -m: --batch, -T: --timeout, -R: --buffers, -J: --out, -N: --repeats, -I 1:
// per-iteration columns of --layout nccl-tests), or is accepted with the one value collbench
// supports (-g 1, -t 1, -a 3) and refused otherwise with exit 2 saying the collbench way. A flag and the
// collbench flag it maps to, both given, are refused naming both. Also the checks between run's
// own nccl-tests-style flags (-f with -i) and the defaults --layout nccl-tests brings (pipelined
// timing, in and out of place). docs/results-format.md, "nccl-tests layout", has the table.
#pragma once

#include <CLI/CLI.hpp>
#include <optional>
#include <string>

#include "cli/common_options.hpp"
#include "collbench/plan/sweep.hpp"

namespace collbench::cli {

// The run flags the nccl-tests flags set (owned by the subcommand).
struct RunFlagTargets {
  const std::string* collective = nullptr;
  std::string* timing = nullptr;
  std::string* buffers = nullptr;
  std::string* in_place = nullptr;
  StopFlags* stop = nullptr;
  OutputFlags* output = nullptr;
  PlacementFlags* placement = nullptr;
  int* repeats = nullptr;  // -N k: --repeats k
};

struct NcclTestsFlags {
  std::optional<int> ngpus, nthreads, run_cycles, average, per_iter, blocking, agg_iters, timeout_s, local_register;
  std::optional<std::string> json_out;
  RunFlagTargets to;
  // The collbench options of the same command, to tell a given flag from its default.
  const CLI::Option *stepfactor = nullptr, *stepbytes = nullptr, *timing = nullptr, *buffers = nullptr,
                    *in_place = nullptr, *batch = nullptr, *timeout = nullptr, *out = nullptr, *repeats = nullptr;
};

// Declares -g -t -N -a -I -z -m -T -R -J on `app`; call it after run's own flags (-f, -i,
// --timing, --buffers, --in-place, --batch, --timeout, --out, --repeats), which it looks up.
void add_nccltests_flags(CLI::App& app, NcclTestsFlags& f, RunFlagTargets targets);

// Checks the flags and writes what they map to into the targets; InputError (exit 2) naming the
// flag, its value and the collbench way.
void resolve_nccltests_flags(const NcclTestsFlags& f);

// --layout nccl-tests prints an out-of-place case and its in-place twin on one row: each
// in-place case moves to just after its out-of-place twin (same case otherwise); the rest keeps
// its order.
void pair_in_place_twins(plan::Sweep& sweep);

}  // namespace collbench::cli
