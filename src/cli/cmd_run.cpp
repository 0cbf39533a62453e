// `collbench run COLLECTIVE`: one collective over a size range, nccl-tests style flags.
#include <cstdio>

#include <fmt/format.h>

#include "cli/common_options.hpp"
#include "cli/subcommand.hpp"
#include "collbench/backend/registry.hpp"
#include "collbench/coll/collective.hpp"
#include "collbench/core/error.hpp"
#include "collbench/core/names.hpp"
#include "collbench/core/units.hpp"

namespace collbench::cli {
namespace {

struct RunFlags {
  std::string collective;
  std::string min_bytes = "32M";
  std::string max_bytes = "32M";
  double factor = 2.0;
  std::string increment = "0";
  std::string dtypes = "float32";
  std::string redops = "sum";
  int check = 1;
  std::string algos = "auto";
  std::string backend = "mpi";
  std::string buffers;
  std::string timing = "isolated";
  std::string scopes = "global";
  std::string in_place = "off";
  int root = 0;
  int graph = 0;
  std::optional<std::string> system;
  bool list = false;
  StopFlags stop;
  PlacementFlags placement;
  OutputFlags output;
};

void print_list() {
  std::puts("collectives:");
  for (const auto& c : coll::collective_registry()) {
    std::printf("  %-14s %s; bytes = %s\n", std::string(c->name()).c_str(), std::string(c->description()).c_str(),
                std::string(c->bytes_convention()).c_str());
  }
  std::printf("dtypes:      %s\n", join(dtype_names()).c_str());
  std::printf("redops:      %s\n", join(redop_names()).c_str());
  std::puts("backends:");
  for (const auto& b : backend::backend_registry()) {
    std::printf("  %-14s %s%s\n", b.name.c_str(), b.description.c_str(), b.built ? "" : " [not built]");
  }
  std::printf("algorithms:  %s\n", join(algorithm_names()).c_str());
  std::puts("scopes:      domain, global");
  std::puts("timing:      isolated, pipelined");
}

plan::Sweep build_sweep(const RunFlags& f) {
  plan::Sweep sweep;
  sweep.name = "run-" + f.collective;
  sweep.source = "<command line>";
  sweep.system = f.system;
  coll::find_collective(f.collective);
  const auto sizes = plan::size_series(parse_bytes(f.min_bytes), parse_bytes(f.max_bytes), f.factor,
                                       parse_bytes(f.increment));
  std::vector<Dtype> dtypes;
  for (const auto& d : split_list(f.dtypes == "all" ? join(dtype_names(), ",") : f.dtypes, "-d/--dtype")) {
    dtypes.push_back(parse_dtype(d));
  }
  std::vector<Redop> redops;
  for (const auto& r : split_list(f.redops == "all" ? join(redop_names(), ",") : f.redops, "-o/--redop")) {
    redops.push_back(parse_redop(r));
  }
  std::vector<std::string> algos;
  for (const auto& a : split_list(f.algos, "--algo")) algos.push_back(parse_algorithm(a));
  std::vector<Scope> scopes;
  for (const auto& s : split_list(f.scopes, "--scope")) scopes.push_back(parse_scope(s));
  std::vector<bool> places;
  if (f.in_place == "off") places = {false};
  else if (f.in_place == "on") places = {true};
  else if (f.in_place == "both") places = {false, true};
  else throw InputError(unknown_name_message("--in-place mode", f.in_place, {"off", "on", "both"}));
  const std::string backend = parse_backend(f.backend);
  const std::string buffers = f.buffers.empty() ? (backend == "mpi" ? "host" : "plain") : parse_buffer_kind(f.buffers);
  const Timing timing = parse_timing(f.timing);
  if (f.check != 0 && f.check != 1) throw InputError(fmt::format("-c/--check {}: accepted: 0, 1", f.check));

  for (Dtype d : dtypes) {
    for (Redop r : redops) {
      for (const auto& a : algos) {
        for (Scope s : scopes) {
          for (bool ip : places) {
            for (auto bytes : sizes) {
              plan::Case c;
              c.collective = f.collective;
              c.dtype = d;
              c.redop = r;
              c.algo = a;
              c.scope = s;
              c.in_place = ip;
              c.backend = backend;
              c.buffers = buffers;
              c.timing = timing;
              c.root = f.root;
              c.graph = f.graph;
              c.check = f.check == 1;
              c.bytes = bytes;
              apply_stop_flags(f.stop, c);
              sweep.cases.push_back(c);
            }
          }
        }
      }
    }
  }
  return sweep;
}

Action setup(CLI::App& app) {
  auto f = std::make_shared<RunFlags>();
  app.add_option("collective", f->collective, "Collective: " + join(coll::collective_names()));
  app.add_option("-b,--minbytes", f->min_bytes, "Smallest size (8, 4K, 128MiB, 1G; K/M/G = 1024^n)")->default_str("32M");
  app.add_option("-e,--maxbytes", f->max_bytes, "Largest size")->default_str("32M");
  app.add_option("-f,--stepfactor", f->factor, "Size multiplication factor")->default_str("2");
  app.add_option("-i,--stepbytes", f->increment, "Size increment (instead of -f)")->default_str("0");
  app.add_option("-d,--dtype", f->dtypes, "Dtype(s), comma list or 'all': " + join(dtype_names()))->default_str("float32");
  app.add_option("-o,--redop", f->redops, "Reduction(s), comma list or 'all': sum, prod, min, max")->default_str("sum");
  app.add_option("-c,--check", f->check, "Verify results before timing (0/1)")->default_str("1");
  app.add_option("--algo", f->algos, "Algorithm(s), comma list run side by side: " + join(algorithm_names()))
      ->default_str("auto");
  app.add_option("--backend", f->backend, "Backend: mpi (host buffers) or nccl (GPU buffers)")->default_str("mpi");
  app.add_option("--buffers", f->buffers, "Buffer kind: host (mpi); plain, registered, symmetric (nccl)");
  app.add_option("--timing", f->timing, "isolated (barrier, then one op) or pipelined (back-to-back batches)")
      ->default_str("isolated");
  app.add_option("--scope", f->scopes, "global (all ranks) and/or domain (each domain at once)")->default_str("global");
  app.add_option("--in-place", f->in_place, "off, on or both")->default_str("off");
  app.add_option("-r,--root", f->root, "Root rank for broadcast")->default_str("0");
  app.add_option("-G,--graph", f->graph, "CUDA-graph replays per sample (nccl backend)")->default_str("0");
  app.add_option("--system", f->system, "System profile (name or file) for bounds");
  app.add_flag("--list", f->list, "List collectives, dtypes, backends and algorithms");
  add_stop_flags(app, f->stop, true);
  add_placement_flags(app, f->placement);
  add_output_flags(app, f->output);
  app.footer(
      "Examples:\n"
      "  mpiexec -n 2 collbench run allreduce -b 8 -e 128M -f 2\n"
      "  mpiexec -n 4 collbench run alltoall -b 1K -e 16M -f 4 --ranks-per-domain 2 --scope domain,global\n"
      "  mpiexec -n 2 collbench run allreduce -d bfloat16 -o max --in-place both --out results/ar.jsonl");
  return [f]() -> int {
    if (f->list) {
      print_list();
      return 0;
    }
    if (f->collective.empty()) {
      throw InputError("missing COLLECTIVE; accepted: " + join(coll::collective_names()));
    }
    const plan::Sweep sweep = build_sweep(*f);
    run::Runner runner(runner_options(f->output, f->placement, 0));
    return exit_code_for(runner.run(sweep));
  };
}

}  // namespace

CB_REGISTER_SUBCOMMAND(Subcommand{"run", "Measure one collective over a size range (under mpiexec)", 10, &setup, true});

}  // namespace collbench::cli
