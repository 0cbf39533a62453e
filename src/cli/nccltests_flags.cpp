// nccl-tests' flags on `collbench run` (nccltests_flags.hpp).
#include "cli/nccltests_flags.hpp"

#include <fmt/format.h>

#include <map>
#include <vector>

#include "collbench/coll/collective.hpp"
#include "collbench/core/error.hpp"

namespace collbench::cli {
namespace {

bool given(const CLI::Option* o) {
  return o != nullptr && o->count() > 0;
}

std::string value_of(const CLI::Option* o) {
  return o->results().empty() ? std::string() : o->results().front();
}

// A flag accepted with the one value collbench supports (nccl-tests' default), refused with the
// collbench way otherwise.
void check_only_value(const char* flag, const std::optional<int>& value, int accepted, const char* why) {
  if (value && *value != accepted)
    throw InputError(fmt::format("{} {}: collbench accepts only {} {} here: {}", flag, *value, flag, accepted, why));
}

// An nccl-tests flag and the collbench flag it maps to, both given: one would override the
// other silently.
void check_not_both(const char* flag, bool nccl_given, const std::string& nccl_value, const CLI::Option* other,
                    const char* maps_to) {
  if (nccl_given && given(other)) {
    throw InputError(fmt::format("{} {} and {} {} both set {}: pass one of them", flag, nccl_value,
                                 other->get_name(false, true), value_of(other), maps_to));
  }
}

void check_step_flags(const NcclTestsFlags& f) {
  if (given(f.stepfactor) && given(f.stepbytes)) {
    throw InputError(fmt::format(
        "-f/--stepfactor {} and -i/--stepbytes {} exclude each other: sizes grow by a factor or by an increment; "
        "pass one of them",
        value_of(f.stepfactor), value_of(f.stepbytes)));
  }
}

void check_single_values(const NcclTestsFlags& f) {
  check_only_value("-g/--ngpus", f.ngpus, 1,
                   "collbench runs one rank per GPU; start one rank per GPU instead (mpiexec -n GPUS, srun "
                   "--ntasks-per-node=GPUS_PER_NODE; docs/launching.md)");
  check_only_value("-t/--nthreads", f.nthreads, 1,
                   "collbench runs one thread per rank and one rank per GPU; start more ranks instead (mpiexec -n)");
  check_only_value("-a/--average", f.average, 3,
                   "each sample's time is its slowest rank's (nccl-tests -a 3, the maximum over ranks); the "
                   "average over ranks (-a 1), the minimum (-a 2) and rank 0's time (-a 0) are not offered "
                   "(each rank's own mean is in the JSONL records, per_rank.mean_us)");
  if (f.per_iter && *f.per_iter != 0 && *f.per_iter != 1)
    throw InputError(fmt::format("-I/--per_iter_timing {}: accepted: 0, 1", *f.per_iter));
}

// -z (blocking mode) picks the timing mode; -m (operations aggregated per iteration) the batch.
void resolve_timing(const NcclTestsFlags& f) {
  static const std::map<int, const char*> blocking_timing = {{0, "pipelined"}, {1, "isolated"}, {3, "pipelined"}};
  if (f.blocking) {
    const auto it = blocking_timing.find(*f.blocking);
    if (it == blocking_timing.end()) {
      throw InputError(fmt::format(
          "-z/--blocking {}: accepted: 0 (--timing pipelined), 1 (--timing isolated), 3 (--timing pipelined: "
          "a barrier before each batch, outside the time); collbench has no wait without a barrier (-z 2)",
          *f.blocking));
    }
    check_not_both("-z/--blocking", true, std::to_string(*f.blocking), f.timing, "the timing mode");
    *f.to.timing = it->second;
  }
  if (!f.agg_iters) return;
  if (*f.agg_iters < 1) throw InputError(fmt::format("-m/--agg_iters {}: must be at least 1", *f.agg_iters));
  check_not_both("-m/--agg_iters", true, std::to_string(*f.agg_iters), f.batch, "the operations per timed sample");
  if (*f.agg_iters > 1 && (given(f.timing) || f.blocking) && *f.to.timing == "isolated") {
    throw InputError(fmt::format(
        "-m/--agg_iters {} times {} operations back to back per sample, which needs --timing pipelined (the "
        "timing here is isolated: one operation per sample)",
        *f.agg_iters, *f.agg_iters));
  }
  f.to.stop->batch = *f.agg_iters;
  if (*f.agg_iters > 1 && !given(f.timing) && !f.blocking) *f.to.timing = "pipelined";
}

// -N k: nccl-tests runs the whole series k times; collbench's --repeats k measures every case k
// times, interleaved across cases, on fresh communicators and buffers, and keeps each pass.
void resolve_run_cycles(const NcclTestsFlags& f) {
  if (!f.run_cycles) return;
  if (*f.run_cycles < 1) {
    throw InputError(fmt::format(
        "-N/--run_cycles {}: must be at least 1 (-N K is --repeats K: every case measured K times); collbench "
        "has no endless run (nccl-tests -N 0)",
        *f.run_cycles));
  }
  check_not_both("-N/--run_cycles", true, std::to_string(*f.run_cycles), f.repeats, "the number of repeats");
  *f.to.repeats = *f.run_cycles;
}

// -T, -R and -J: a collbench flag each.
void resolve_mapped(const NcclTestsFlags& f) {
  if (f.timeout_s) {
    if (*f.timeout_s <= 0) {
      throw InputError(
          fmt::format("-T {}: the watchdog cannot be turned off (nccl-tests -T 0); give seconds > 0, e.g. -T 60 "
                      "(--timeout 60s)",
                      *f.timeout_s));
    }
    check_not_both("-T", true, std::to_string(*f.timeout_s), f.timeout, "the watchdog's timeout");
    f.to.placement->timeout = fmt::format("{}s", *f.timeout_s);
  }
  static const std::map<int, const char*> registration = {{0, ""}, {1, "registered"}, {2, "symmetric"}};
  if (f.local_register) {
    const auto it = registration.find(*f.local_register);
    if (it == registration.end()) {
      throw InputError(
          fmt::format("-R/--local_register {}: accepted: 0 (the backend's default buffers), 1 "
                      "(--buffers registered), 2 (--buffers symmetric)",
                      *f.local_register));
    }
    check_not_both("-R/--local_register", true, std::to_string(*f.local_register), f.buffers, "the buffer kind");
    *f.to.buffers = it->second;
  }
  if (f.json_out) {
    check_not_both("-J/--output_file", true, *f.json_out, f.out, "the results file");
    if (f.json_out->empty()) throw InputError("-J/--output_file '': expected a file name, e.g. -J results/run.jsonl");
    f.to.output->out = *f.json_out;
  }
  f.to.output->per_iteration_columns = f.per_iter.value_or(0) == 1;
}

// --layout nccl-tests measures what nccl-tests measures, unless told otherwise: back-to-back
// batches (pipelined timing) and every size out of place and in place.
void apply_layout_defaults(const NcclTestsFlags& f) {
  if (f.to.output->layout != "nccl-tests") return;
  if (!given(f.timing) && !f.blocking) *f.to.timing = "pipelined";
  if (!given(f.in_place)) {
    *f.to.in_place = coll::find_collective(*f.to.collective).supports_in_place() ? "both" : "off";
  }
}

// Everything that tells a case from its in-place twin, except in_place.
std::string twin_key(const plan::Case& c) {
  std::string params;
  for (const auto& [k, v] : c.params) params += k + "=" + v + ";";
  return fmt::format("{}|{}|{}|{}|{}|{}|{}|{}|{}|{}|{}|{}|{}|{}", c.collective, to_string(c.redop), to_string(c.dtype),
                     c.backend, c.algo, to_string(c.scope), to_string(c.timing), c.buffers, c.graph, c.root, c.bytes,
                     params, c.overlap, c.overlap_chunks);
}

}  // namespace

void add_nccltests_flags(CLI::App& app, NcclTestsFlags& f, RunFlagTargets targets) {
  f.to = targets;
  f.stepfactor = app.get_option("--stepfactor");
  f.stepbytes = app.get_option("--stepbytes");
  f.timing = app.get_option("--timing");
  f.buffers = app.get_option("--buffers");
  f.in_place = app.get_option("--in-place");
  f.batch = app.get_option("--batch");
  f.timeout = app.get_option("--timeout");
  f.out = app.get_option("--out");
  f.repeats = app.get_option("--repeats");
  const std::string group = "nccl-tests flags (docs/results-format.md, nccl-tests layout)";
  app.add_option("-g,--ngpus", f.ngpus, "GPUs per thread: 1 only (collbench runs one rank per GPU)")->group(group);
  app.add_option("-t,--nthreads", f.nthreads, "Threads per process: 1 only (one rank per GPU)")->group(group);
  app.add_option("-N,--run_cycles", f.run_cycles,
                 "Run cycles: --repeats K (every case measured K times, interleaved, on fresh state)")
      ->group(group);
  app.add_option("-a,--average", f.average,
                 "Time across ranks: 3 only (a sample's time is its slowest rank's; nccl-tests' default is 1)")
      ->group(group);
  app.add_option("-I,--per_iter_timing", f.per_iter,
                 "0 or 1; 1 adds the i_min i_max i_p99 i_cv% columns to --layout nccl-tests (every record has them)")
      ->group(group);
  app.add_option("-z,--blocking", f.blocking, "0: --timing pipelined; 1: --timing isolated; 3: --timing pipelined")
      ->group(group);
  app.add_option("-m,--agg_iters", f.agg_iters,
                 "Operations per timed sample: --batch M (and --timing pipelined unless a timing is given)")
      ->group(group);
  app.add_option("-T", f.timeout_s, "Timeout in seconds: --timeout Ss (the watchdog; must be > 0)")->group(group);
  app.add_option("-R,--local_register", f.local_register,
                 "Buffer registration: 0 default, 1 --buffers registered, 2 --buffers symmetric (nccl backend)")
      ->group(group);
  app.add_option("-J,--output_file", f.json_out,
                 "Results file: --out FILE (collbench JSONL records, not nccl-tests' JSON)")
      ->group(group);
}

void resolve_nccltests_flags(const NcclTestsFlags& f) {
  check_step_flags(f);
  check_single_values(f);
  resolve_timing(f);
  resolve_run_cycles(f);
  resolve_mapped(f);
  apply_layout_defaults(f);
}

void pair_in_place_twins(plan::Sweep& sweep) {
  std::map<std::string, std::vector<std::size_t>> in_place_by_key;
  for (std::size_t i = 0; i < sweep.cases.size(); ++i)
    if (sweep.cases[i].in_place) in_place_by_key[twin_key(sweep.cases[i])].push_back(i);
  std::vector<bool> placed(sweep.cases.size(), false);
  std::vector<plan::Case> ordered;
  ordered.reserve(sweep.cases.size());
  for (std::size_t i = 0; i < sweep.cases.size(); ++i) {
    if (placed[i]) continue;
    placed[i] = true;
    ordered.push_back(sweep.cases[i]);
    if (sweep.cases[i].in_place) continue;
    auto& twins = in_place_by_key[twin_key(sweep.cases[i])];
    for (std::size_t k = 0; k < twins.size(); ++k) {
      if (placed[twins[k]]) continue;
      placed[twins[k]] = true;
      ordered.push_back(sweep.cases[twins[k]]);
      break;
    }
  }
  sweep.cases = std::move(ordered);
}

}  // namespace collbench::cli
