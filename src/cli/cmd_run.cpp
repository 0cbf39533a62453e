// `collbench run COLLECTIVE`: one collective over a size range, nccl-tests style flags. The MoE
// collectives (moe-dispatch, moe-combine, moe-roundtrip) take their size from a workload
// instead (--workload, --tokens, --routing, ...; docs/moe.md): -b/-e/-f/-i and -d do not apply
// to them, and the MoE flags do not apply to the other collectives (both are usage errors).
#include <fmt/format.h>

#include <algorithm>
#include <cstdio>
#include <map>
#include <nlohmann/json.hpp>
#include <vector>

#include "cli/common_options.hpp"
#include "cli/nccltests_flags.hpp"
#include "cli/subcommand.hpp"
#include "collbench/backend/registry.hpp"
#include "collbench/coll/collective.hpp"
#include "collbench/coll/moe_plan.hpp"
#include "collbench/core/collective_facts.hpp"
#include "collbench/core/error.hpp"
#include "collbench/core/names.hpp"
#include "collbench/core/placement.hpp"
#include "collbench/core/units.hpp"
#include "collbench/overlap/spec.hpp"

namespace collbench::cli {
namespace {

// MoE case parameters (coll::moe_param_keys()); each flag takes a comma list of alternatives
// (--routing: repeat the flag), and the alternatives expand as a cross product.
struct MoeFlags {
  std::optional<std::string> workload, tokens, ep_size, imbalance, seed, rows, counts_exchange;
  std::vector<std::string> routing;
};

struct RunFlags {
  std::string collective;
  SizeFlags sizes;  // -b -e -f -i
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
  std::string overlap;  // --overlap COMPUTE (docs/overlap.md)
  int overlap_chunks = 0;
  bool list = false;
  bool list_json = false;
  int list_ranks = 16;  // --list-ranks: domains_needed covers 1..N ranks
  const CLI::Option* list_ranks_option = nullptr;
  StopFlags stop;
  PlacementFlags placement;
  OutputFlags output;
  NcclTestsFlags nccl;  // -g -t -N -a -I -z -m -T -R -J (cli/nccltests_flags.hpp)
  MoeFlags moe;
  std::optional<std::string> dp_bytes;  // ep-dp-concurrent: the all-reduce across domains
  int repeats = 1;                      // --repeats k
  // Set when the flag was given (the defaults of -b/-e/-d make no sense for moe-*).
  std::vector<NamedOption> size_options;
};

// A --routing value as the flow-YAML map the MoE parameters take: `{popularity: lognormal,
// sigma: 0.5}` as is; `popularity=lognormal,sigma=0.5` as key=value pairs, optionally led by a
// bare popularity name (`lognormal,sigma=0.5`); a bare name (`uniform`, `lognormal`, `zipf`,
// `one-hot-rank`) alone as {popularity: NAME}.
std::string routing_map_text(const std::string& value) {
  std::string v = value;
  v.erase(0, v.find_first_not_of(" \t"));
  v.erase(v.find_last_not_of(" \t") + 1);
  if (v.empty())
    throw InputError("--routing '': expected e.g. lognormal, popularity=lognormal,sigma=0.5 or '{popularity: zipf}'");
  if (v.front() == '{') return v;
  if (v.find_first_of("=,") == std::string::npos) return "{popularity: " + v + "}";
  std::string out;
  const auto items = split_list(v, "--routing");
  for (std::size_t i = 0; i < items.size(); ++i) {
    const std::string& item = items[i];
    const auto eq = item.find('=');
    if (i == 0 && eq == std::string::npos) {  // lognormal,sigma=0.8
      out = "popularity: " + item;
      continue;
    }
    if (eq == std::string::npos || eq == 0 || eq + 1 == item.size()) {
      throw InputError(fmt::format("--routing '{}': '{}' is not key=value (keys: {})", value, item,
                                   join(workload::routing_setting_keys())));
    }
    out += fmt::format("{}{}: {}", out.empty() ? "" : ", ", item.substr(0, eq), item.substr(eq + 1));
  }
  return "{" + out + "}";
}

// The MoE flags given, as (flag, key, alternatives) in the order of coll::moe_param_keys().
using MoeAxes = std::vector<std::tuple<std::string, std::string, std::vector<std::string>>>;

MoeAxes moe_flag_axes(const MoeFlags& m) {
  MoeAxes axes;
  const auto list_axis = [&](const char* flag, const char* key, const std::optional<std::string>& value) {
    if (value) axes.emplace_back(flag, key, split_list(*value, flag));
  };
  list_axis("--workload", "workload", m.workload);
  list_axis("--tokens", "tokens", m.tokens);
  if (!m.routing.empty()) {
    std::vector<std::string> maps;
    for (const auto& r : m.routing) maps.push_back(routing_map_text(r));
    axes.emplace_back("--routing", "routing", maps);
  }
  list_axis("--ep-size", "ep_size", m.ep_size);
  list_axis("--imbalance", "imbalance", m.imbalance);
  list_axis("--seed", "seed", m.seed);
  list_axis("--rows", "rows", m.rows);
  list_axis("--counts-exchange", "counts_exchange", m.counts_exchange);
  return axes;
}

// The size flags have no meaning for an MoE collective (the workload sets the size): refused.
void moe_refuse_size_flags(const RunFlags& f) {
  for (const auto& [flag, opt] : f.size_options) {
    if (opt->count() == 0) continue;
    if (flag == "-d/--dtype") {
      throw InputError(
          fmt::format("-d/--dtype does not apply to {}: the workload's wire format sets the dtype "
                      "(e.g. --workload deepseek-v3-bf16 for BF16 dispatch)",
                      f.collective));
    }
    if (flag == "-o/--redop") {
      throw InputError(fmt::format("-o/--redop does not apply to {} (combine sums weighted rows)", f.collective));
    }
    throw InputError(
        fmt::format("{} does not apply to {}: its size comes from the workload (rows per token x "
                    "tokens per rank); use --tokens N (e.g. --tokens 128,4096) and --workload NAME",
                    flag, f.collective));
  }
}

// Each value on its own, so that the message names the flag.
void moe_check_axes(const MoeAxes& axes) {
  for (const auto& [flag, key, values] : axes) {
    for (const auto& v : values) {
      try {
        coll::check_moe_params(coll::parse_moe_params({{key, v}}));
      } catch (const InputError& e) {
        throw InputError(fmt::format("{} '{}': {}", flag, v, e.what()));
      }
    }
  }
}

// Every combination of the axes' alternatives.
std::vector<std::map<std::string, std::string>> moe_combinations(const MoeAxes& axes) {
  std::vector<std::map<std::string, std::string>> sets{{}};
  for (const auto& [flag, key, values] : axes) {
    std::vector<std::map<std::string, std::string>> next;
    for (const auto& base : sets) {
      for (const auto& v : values) {
        auto p = base;
        p[key] = v;
        next.push_back(std::move(p));
      }
    }
    sets = std::move(next);
  }
  return sets;
}

// Every combination of the MoE flags' alternatives, each validated now (the message names the
// flag and the value). One empty set for the other collectives.
std::vector<std::map<std::string, std::string>> moe_param_sets(const RunFlags& f) {
  const MoeAxes axes = moe_flag_axes(f.moe);
  if (!is_moe_collective(f.collective)) {
    if (!axes.empty()) {
      throw InputError(
          fmt::format("{} applies only to the MoE collectives (moe-dispatch, moe-combine, "
                      "moe-roundtrip), not {}",
                      std::get<0>(axes.front()), f.collective));
    }
    return {{}};
  }
  moe_refuse_size_flags(f);
  moe_check_axes(axes);
  return moe_combinations(axes);
}

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
  std::puts("overlap compute loads (--overlap NAME[:key=value,...]):");
  for (const auto& l : overlap::compute_loads()) {
    std::printf("  %-14s %s; keys: %s\n", l.name.c_str(), l.description.c_str(), join(l.keys).c_str());
  }
}

// For 1..max_ranks ranks, the fewest equal domains a family runs in with its default parameters
// (its own waiver() asked; ep-dp-concurrent: 2), or 0 where it runs in none (MoE: 256 experts do
// not split over 3 ranks, nor over 24 or 72 in one domain).
constexpr int kMaxListRanks = 4096;
std::vector<int> domains_needed(const coll::Collective& c, int max_ranks) {
  std::vector<int> out;
  for (int n = 1; n <= max_ranks; ++n) {
    int needed = 0;
    for (int d = 1; d <= n && needed == 0; ++d) {
      if (n % d != 0) continue;
      coll::CaseContext ctx;
      ctx.num_ranks = n;
      ctx.placement = placement_from_sizes(n, std::vector<int>(static_cast<std::size_t>(d), n / d));
      if (!c.waiver(ctx)) needed = d;
    }
    out.push_back(needed);
  }
  return out;
}

// --list-json: what scripts (scripts/gpu-smoke) need to drive every collective without knowing
// it: the size flags it takes (-b/-e, or --tokens for the MoE families), reductions, in-place
// form, the smallest communicator it runs on (min_ranks in min_domains domains) and, for 1..max_ranks
// ranks (--list-ranks, default 16), the domains it needs (domains_needed[n - 1], 0: waived there);
// list_ranks, dtypes, reductions, algorithms, backends.
void print_list_json(int max_ranks) {
  nlohmann::json out;
  out["list_ranks"] = max_ranks;
  out["collectives"] = nlohmann::json::array();
  for (const auto& c : coll::collective_registry()) {
    const std::vector<int> domains = domains_needed(*c, max_ranks);
    const auto first = std::find_if(domains.begin(), domains.end(), [](int d) { return d > 0; });
    const bool runs = first != domains.end();
    out["collectives"].push_back({{"name", std::string(c->name())},
                                  {"sizes", is_moe_collective(c->name()) ? "tokens" : "bytes"},
                                  {"has_redop", c->has_redop()},
                                  {"in_place", c->supports_in_place()},
                                  {"uses_levels", c->uses_levels()},
                                  {"min_ranks", runs ? static_cast<int>(first - domains.begin()) + 1 : 0},
                                  {"min_domains", runs ? *first : 0},
                                  {"domains_needed", domains}});
  }
  out["dtypes"] = dtype_names();
  out["redops"] = redop_names();
  out["algorithms"] = algorithm_names();
  out["backends"] = nlohmann::json::array();
  for (const auto& b : backend::backend_registry()) out["backends"].push_back({{"name", b.name}, {"built", b.built}});
  std::puts(out.dump(2).c_str());
}

// The MoE parameter sets of the command line, with --dp-bytes (ep-dp-concurrent only) in each.
std::vector<std::map<std::string, std::string>> param_sets_of(const RunFlags& f) {
  auto param_sets = moe_param_sets(f);
  if (!f.dp_bytes) return param_sets;
  if (!coll::find_collective(f.collective).uses_levels()) {
    throw InputError(fmt::format("--dp-bytes applies only to ep-dp-concurrent, not {}", f.collective));
  }
  try {
    coll::find_collective(f.collective).check_params({{"dp_bytes", *f.dp_bytes}});
  } catch (const InputError& e) {
    throw InputError(fmt::format("--dp-bytes: {}", e.what()));
  }
  for (auto& p : param_sets) p["dp_bytes"] = *f.dp_bytes;
  return param_sets;
}

// The lists the cases are the product of: -d, -o, --algo, --scope, --in-place.
struct RunAxes {
  std::vector<Dtype> dtypes;
  std::vector<Redop> redops;
  std::vector<std::string> algos;
  std::vector<Scope> scopes;
  std::vector<bool> places;
};
RunAxes run_axes(const RunFlags& f) {
  RunAxes x;
  for (const auto& d : split_list(f.dtypes == "all" ? join(dtype_names(), ",") : f.dtypes, "-d/--dtype")) {
    x.dtypes.push_back(parse_dtype(d));
  }
  for (const auto& r : split_list(f.redops == "all" ? join(redop_names(), ",") : f.redops, "-o/--redop")) {
    x.redops.push_back(parse_redop(r));
  }
  // A collective without a reduction (all-to-all, all-gather, ...) has one case per size whatever
  // -o says: `-o all` across a mixed list of collectives must not repeat identical cases.
  if (!coll::find_collective(f.collective).has_redop()) x.redops.resize(1);
  for (const auto& a : split_list(f.algos, "--algo")) x.algos.push_back(parse_algorithm(a));
  for (const auto& sc : split_list(f.scopes, "--scope")) x.scopes.push_back(parse_scope(sc));
  if (f.in_place == "off")
    x.places = {false};
  else if (f.in_place == "on")
    x.places = {true};
  else if (f.in_place == "both")
    x.places = {false, true};
  else
    throw InputError(unknown_name_message("--in-place mode", f.in_place, {"off", "on", "both"}));
  return x;
}

// -c and the overlap flags, checked before any case is built.
void check_case_flags(const RunFlags& f) {
  if (f.check != 0 && f.check != 1) throw InputError(fmt::format("-c/--check {}: accepted: 0, 1", f.check));
  if (!f.overlap.empty()) overlap::parse_compute_spec(f.overlap);  // names --overlap and the accepted values
  if (f.overlap_chunks < 0) throw InputError(fmt::format("--overlap-chunks {}: must be at least 1", f.overlap_chunks));
  if (f.overlap_chunks > 0 && f.overlap.empty()) {
    throw InputError("--overlap-chunks needs --overlap COMPUTE (e.g. --overlap gemm:workload=deepseek-v3)");
  }
}

plan::Sweep build_sweep(const RunFlags& f) {
  plan::Sweep sweep;
  sweep.name = "run-" + f.collective;
  sweep.source = "<command line>";
  sweep.system = f.system;
  coll::find_collective(f.collective);
  const auto param_sets = param_sets_of(f);
  // MoE cases carry no requested size (0): the workload sets it, and the record says what ran.
  const auto sizes = is_moe_collective(f.collective) ? std::vector<std::uint64_t>{0} : size_series(f.sizes);
  const RunAxes axes = run_axes(f);
  plan::Case base;
  base.collective = f.collective;
  base.backend = parse_backend(f.backend);
  base.buffers = f.buffers.empty() ? (base.backend == "mpi" ? "host" : "plain") : parse_buffer_kind(f.buffers);
  base.timing = parse_timing(f.timing);
  check_case_flags(f);
  base.root = f.root;
  base.graph = f.graph;
  base.check = f.check == 1;
  base.overlap = f.overlap;
  base.overlap_chunks = f.overlap_chunks;
  apply_stop_flags(f.stop, base);
  for (Dtype d : axes.dtypes) {
    for (Redop r : axes.redops) {
      for (const auto& a : axes.algos) {
        for (Scope sc : axes.scopes) {
          for (bool ip : axes.places) {
            for (const auto& params : param_sets) {
              for (auto bytes : sizes) {
                plan::Case c = base;
                c.dtype = d;
                c.redop = r;
                c.algo = a;
                c.scope = sc;
                c.in_place = ip;
                c.bytes = bytes;
                c.params = params;
                sweep.cases.push_back(c);
              }
            }
          }
        }
      }
    }
  }
  return sweep;
}

// The size axes: -b, -e, -f, -i, -d and -o.
void add_size_options(CLI::App& app, RunFlags& f) {
  f.size_options = add_size_flags(app, f.sizes);
  f.size_options.emplace_back(
      "-d/--dtype", app.add_option("-d,--dtype", f.dtypes, "Dtype(s), comma list or 'all': " + join(dtype_names()))
                        ->default_str("float32"));
  f.size_options.emplace_back(
      "-o/--redop", app.add_option("-o,--redop", f.redops, "Reduction(s), comma list or 'all': sum, prod, min, max")
                        ->default_str("sum"));
}

// What each case is: check, algorithm, backend, buffers, timing, scope, in place, root, graph, system, --list.
void add_case_options(CLI::App& app, RunFlags& f) {
  app.add_option("-c,--check", f.check, "Verify results before timing (0/1)")->default_str("1");
  app.add_option("--algo", f.algos, "Algorithm(s), comma list run side by side: " + join(algorithm_names()))
      ->default_str("auto");
  app.add_option("--backend", f.backend, "Backend: mpi (host buffers) or nccl (GPU buffers)")->default_str("mpi");
  app.add_option("--buffers", f.buffers, "Buffer kind: host (mpi); plain, registered, symmetric (nccl)");
  app.add_option("--timing", f.timing, "isolated (barrier, then one op) or pipelined (back-to-back batches)")
      ->default_str("isolated");
  app.add_option("--scope", f.scopes, "global (all ranks) and/or domain (each domain at once)")->default_str("global");
  app.add_option("--in-place", f.in_place, "off, on or both")->default_str("off");
  app.add_option("-r,--root", f.root, "Root rank for broadcast")->default_str("0");
  app.add_option("-G,--graph", f.graph,
                 "Launches per CUDA graph, replayed once per sample (nccl backend, as nccl-tests -G)")
      ->default_str("0");
  add_system_option(app, f.system, "System profile for bounds");
  app.add_flag("--list", f.list, "List collectives, dtypes, backends and algorithms");
  app.add_flag("--list-json", f.list_json,
               "--list as JSON: each collective's size flags (bytes: -b/-e, tokens: --tokens), reductions, in-place "
               "form and smallest communicator (min_ranks, min_domains), and the domains it needs on 1..N ranks "
               "(domains_needed; N: --list-ranks)");
  f.list_ranks_option =
      app.add_option("--list-ranks", f.list_ranks, "With --list-json: domains_needed covers 1..N ranks (1-4096)")
          ->default_str("16");
}

// Overlap mode and the EP/DP concurrent all-reduce size.
void add_overlap_options(CLI::App& app, RunFlags& f) {
  app.add_option("--overlap", f.overlap,
                 "Overlap mode: run a compute load beside the collective and report t_comm, t_compute, t_both, "
                 "exposed time and overlap efficiency; COMPUTE = " +
                     join(overlap::compute_load_names(), " | ") +
                     "[:key=value,...], e.g. gemm:m=512,n=512,k=512, gemm:workload=deepseek-v3,tokens_per_expert=256, "
                     "stream:bytes=64M, sleep:time=20ms (docs/overlap.md)");
  app.add_option("--overlap-chunks", f.overlap_chunks,
                 "Pipeline: split the micro-batch into N chunks, chunk i's communication beside chunk i-1's "
                 "compute (moe-roundtrip: dispatch, expert compute, combine)");
  app.add_option("--dp-bytes", f.dp_bytes,
                 "ep-dp-concurrent: per-rank all-reduce buffer across domains, e.g. 64M (default: the -b/-e size)");
}

// The MoE families' workload, routing and EP options.
void add_moe_options(CLI::App& app, RunFlags& f) {
  const std::string moe_group = "MoE (moe-dispatch, moe-combine, moe-roundtrip; comma lists expand as cases)";
  app.add_option("--workload", f.moe.workload, "Workload profile(s), name or file (default deepseek-v3)")
      ->group(moe_group);
  app.add_option("--tokens", f.moe.tokens, "Tokens per rank, e.g. 128,4096 (default: the profile's)")->group(moe_group);
  app.add_option("--routing", f.moe.routing,
                 "Routing: a popularity name (uniform, lognormal, zipf, one-hot-rank), key=value pairs "
                 "(popularity=lognormal,sigma=0.5,groups_per_token=4) or a YAML map; repeat for several")
      ->group(moe_group)
      ->allow_extra_args(false);
  app.add_option("--ep-size", f.moe.ep_size, "Ranks per EP group, e.g. 64 (default: all ranks)")->group(moe_group);
  app.add_option("--imbalance", f.moe.imbalance, "Target max/mean rank load, e.g. 1.25 (log-normal; sets sigma)")
      ->group(moe_group);
  app.add_option("--counts-exchange", f.moe.counts_exchange,
                 "timed (counts all-to-all inside the timed region, default) or untimed")
      ->group(moe_group);
  app.add_option("--seed", f.moe.seed, "Routing seed(s)")->group(moe_group);
  app.add_option("--rows", f.moe.rows, "copy (one row per token-expert) or dedup (per token-rank)")->group(moe_group);
}

Action setup_run(CLI::App& app) {
  auto f = std::make_shared<RunFlags>();
  app.add_option("collective", f->collective, "Collective: " + join(coll::collective_names()));
  add_size_options(app, *f);
  add_case_options(app, *f);
  add_overlap_options(app, *f);
  add_moe_options(app, *f);
  add_stop_flags(app, f->stop, true);
  add_repeats_flag(app, f->repeats);
  add_placement_flags(app, f->placement);
  add_output_flags(app, f->output);
  add_nccltests_flags(
      app, f->nccl,
      {&f->collective, &f->timing, &f->buffers, &f->in_place, &f->stop, &f->output, &f->placement, &f->repeats});
  app.footer(
      "Examples:\n"
      "  mpiexec -n 2 collbench run allreduce -b 8 -e 128M -f 2\n"
      "  mpiexec -n 4 collbench run alltoall -b 1K -e 16M -f 4 --ranks-per-domain 2 --scope domain,global\n"
      "  mpiexec -n 2 collbench run allreduce -d bfloat16 -o max --in-place both --out results/ar.jsonl\n"
      "  mpiexec -n 4 collbench run moe-dispatch --tokens 128 --routing uniform --routing lognormal,sigma=0.8 \\\n"
      "      --ranks-per-domain 2 --algo flat,hierarchical\n"
      "  mpiexec -n 2 collbench run allreduce -b 1M -e 16M -f 4 --overlap gemm:m=512,n=512,k=512\n"
      "  mpiexec -n 4 collbench run moe-roundtrip --tokens 512 --overlap gemm:workload=deepseek-v3 --overlap-chunks 4");
  return [f]() -> int {
    if (f->list) {
      print_list();
      return 0;
    }
    if (f->list_ranks_option->count() > 0 && !f->list_json) {
      throw InputError("--list-ranks applies only to --list-json");
    }
    if (f->list_json) {
      if (f->list_ranks < 1 || f->list_ranks > kMaxListRanks) {
        throw InputError(
            fmt::format("--list-ranks {}: expected a rank count from 1 to {}", f->list_ranks, kMaxListRanks));
      }
      print_list_json(f->list_ranks);
      return 0;
    }
    if (f->collective.empty()) {
      throw InputError("missing COLLECTIVE; accepted: " + join(coll::collective_names()));
    }
    resolve_nccltests_flags(f->nccl);
    plan::Sweep sweep = build_sweep(*f);
    if (f->output.layout == "nccl-tests") pair_in_place_twins(sweep);
    run::RunnerOptions options = runner_options(f->output, f->placement, 0);
    options.repeats = f->repeats;
    run::Runner runner(options);
    return exit_code_for(runner.run(sweep));
  };
}

}  // namespace

CB_REGISTER_SUBCOMMAND(Subcommand{"run", "Measure one collective over a size range (under mpiexec)", 10, &setup_run,
                                  true});

}  // namespace collbench::cli
