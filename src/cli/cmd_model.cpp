// `collbench model COLLECTIVE`: the analytic bound and expected value of a collective on a system
// profile, for any rank counts and packings (e.g. 256..1,024 GPUs in NVL72 racks), as a table,
// JSON or CSV. For the MoE collectives (moe-dispatch, moe-combine, moe-roundtrip): the message
// sizes of a workload per EP size (docs/hardware-context.md section 6), with bounds when --system is given.
// Pure computation: no MPI, no GPU, no mpiexec.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "cli/common_options.hpp"
#include "cli/subcommand.hpp"
#include "collbench/coll/collective.hpp"
#include "collbench/coll/moe_plan.hpp"
#include "collbench/core/collective_facts.hpp"
#include "collbench/core/dtype.hpp"
#include "collbench/core/error.hpp"
#include "collbench/core/limits.hpp"
#include "collbench/core/names.hpp"
#include "collbench/core/placement.hpp"
#include "collbench/core/units.hpp"
#include "collbench/model/estimate.hpp"
#include "collbench/model/profile_overrides.hpp"
#include "collbench/model/published.hpp"
#include "collbench/model/system_profile.hpp"
#include "collbench/model/traffic.hpp"
#include "collbench/plan/case.hpp"
#include "collbench/report/model_table.hpp"
#include "collbench/report/writer_registries.hpp"
#include "collbench/workload/expected.hpp"
#include "collbench/workload/profile.hpp"
#include "collbench/workload/routing.hpp"

namespace collbench::cli {
namespace {

struct ModelFlags {
  std::string collective;
  std::optional<std::string> system;
  std::vector<std::string> sets;  // --set KEY=VALUE on the profile
  std::optional<std::string> ranks;
  std::optional<int> ranks_per_domain;
  std::optional<std::string> domain_sizes;
  SizeFlags sizes;  // -b -e -f -i
  std::string dtypes = "float32";
  std::string algos = "auto";
  std::string scopes = "global";
  std::vector<std::string> formats;           // --format FMT[=PATH]
  std::vector<report::OutputTarget> targets;  // parsed from formats before anything is computed
  bool list_systems = false;
  bool published = false;  // --published: the system's published points against the model
  // MoE message-size table (moe-* only).
  std::optional<std::string> workload, tokens, ep_sizes, rows;
  std::vector<NamedOption> size_options;  // -b -e -f -i -d --algo --scope
};

std::vector<int> parse_rank_list(const std::string& text) {
  std::vector<int> out;
  for (const auto& item : split_list(text, "--ranks")) {
    int v = 0;
    if (const auto why = count_problem(item, kMaxRanks, v)) {
      throw InputError(fmt::format("--ranks '{}': '{}' {} (expected e.g. 256,512,1024)", text, item, *why));
    }
    out.push_back(v);
  }
  return out;
}

model::SystemProfile resolve_system(const ModelFlags& f) {
  if (f.system) return model::load_system_profile(*f.system, f.sets);
  if (!f.sets.empty()) throw InputError("--set needs --system NAME|FILE: the profile it overrides");
  const auto names = model::list_system_profiles();
  if (std::find(names.begin(), names.end(), "cpu-local") != names.end()) return model::load_system_profile("cpu-local");
  throw InputError("--system NAME|FILE is required (no calibrated cpu-local profile); known: " + join(names));
}

// The placements to model: one per rank count, packed by --domain-sizes, --ranks-per-domain or
// the profile's domain size (on CPU, where domains are simulated, one domain per rank count).
std::vector<Placement> resolve_placements(const ModelFlags& f, const model::SystemProfile& s) {
  if (f.ranks_per_domain && f.domain_sizes)
    throw InputError("--ranks-per-domain and --domain-sizes exclude each other");
  const int system_domain = s.scale_up.domain_size;
  const auto check_fits = [&](int largest, const std::string& flag) {
    if (!s.is_cpu() && system_domain > 0 && largest > system_domain) {
      throw InputError(fmt::format("{}: a domain of {} ranks exceeds the {}-GPU scale-up domain of '{}'", flag, largest,
                                   system_domain, s.name));
    }
  };
  if (f.domain_sizes) {
    const auto sizes = parse_domain_sizes(*f.domain_sizes);
    int total = 0;
    for (int v : sizes) total += v;
    if (f.ranks) {
      const auto ranks = parse_rank_list(*f.ranks);
      if (ranks.size() != 1 || ranks[0] != total) {
        throw InputError(fmt::format("--domain-sizes {} describes {} ranks; drop --ranks or make it {}",
                                     *f.domain_sizes, total, total));
      }
    }
    Placement p = placement_from_sizes(total, sizes);
    check_fits(p.largest_domain(), "--domain-sizes");
    return {p};
  }
  std::vector<int> ranks;
  if (f.ranks) {
    ranks = parse_rank_list(*f.ranks);
  } else if (system_domain > 0) {
    ranks = {system_domain};
  } else if (s.calibrated) {
    ranks = {s.calibrated->num_ranks};
  } else {
    throw InputError(fmt::format("--ranks is required for '{}' (it fixes no domain size)", s.name));
  }
  std::vector<Placement> out;
  for (const int n : ranks) {
    if (f.ranks_per_domain) {
      check_fits(*f.ranks_per_domain, "--ranks-per-domain");
      out.push_back(placement_from_ranks_per_domain(n, *f.ranks_per_domain));
    } else if (system_domain > 0) {
      out.push_back(placement_from_ranks_per_domain(n, system_domain));
      out.back().source = "system";
    } else {
      out.push_back(placement_from_ranks_per_domain(n, n));
      out.back().source = "single";
    }
  }
  return out;
}

std::vector<report::ModelRow> build_rows(const ModelFlags& f, const model::SystemProfile& s) {
  const auto& traits = coll::find_collective(f.collective);
  if (!traits.facts().modelled) {
    throw InputError(
        fmt::format("'{}' is not modelled per collective call (MoE exchanges are modelled from their "
                    "traffic matrix by the workload harness); modelled here: {}",
                    f.collective, join(model::modelled_collectives())));
  }
  std::vector<Dtype> dtypes;
  for (const auto& d : split_list(f.dtypes, "-d/--dtype")) dtypes.push_back(parse_dtype(d));
  std::vector<std::string> algos;
  for (const auto& a : split_list(f.algos, "--algo")) algos.push_back(parse_algorithm(a));
  std::vector<Scope> scopes;
  for (const auto& sc : split_list(f.scopes, "--scope")) scopes.push_back(parse_scope(sc));
  const auto sizes = size_series(f.sizes);
  const auto placements = resolve_placements(f, s);

  std::vector<report::ModelRow> rows;
  for (const auto& algo : algos) {
    for (const Scope scope : scopes) {
      for (const Dtype dtype : dtypes) {
        for (const auto& placement : placements) {
          // Bytes rounded exactly as `collbench run` rounds them (the collective's own shape),
          // on the communicator the case runs on.
          const int comm_ranks = scope == Scope::global ? placement.num_ranks() : placement.largest_domain();
          for (const auto requested : sizes) {
            report::ModelRow r;
            r.algo = algo;
            r.scope = scope;
            r.dtype = dtype;
            r.placement = placement;
            r.bytes = traits.shape(requested, dtype, 0, comm_ranks).bytes;
            model::CaseGeometry g;
            g.collective = f.collective;
            g.algo = algo;
            g.dtype = dtype;
            g.bytes = r.bytes;
            g.placement = placement;
            g.scope = scope;
            r.outcome = model::model_case(s, g);
            rows.push_back(std::move(r));
          }
        }
      }
    }
  }
  return rows;
}

// ---------------------------------------------------------------------------------------------
// MoE: the message sizes of one dispatch and combine per GPU, per EP size (docs/hardware-context.md section 6).

int parse_positive(const std::string& flag, const std::string& item) {
  int v = 0;
  if (const auto why = count_problem(item, kMaxRanks, v))
    throw InputError(fmt::format("{} '{}': {}", flag, item, *why));
  return v;
}

report::MoeWorkloadFacts workload_facts(const workload::WorkloadProfile& pr) {
  report::MoeWorkloadFacts w;
  w.name = pr.name;
  w.source = pr.source;
  w.hidden_size = pr.hidden_size;
  w.num_routed_experts = pr.num_routed_experts;
  w.top_k = pr.top_k;
  w.groups_per_token = pr.routing.groups_per_token;
  w.popularity = std::string(to_string(pr.routing.popularity));
  w.dispatch_dtype = std::string(to_string(pr.dispatch.dtype));
  w.combine_dtype = std::string(to_string(pr.combine.dtype));
  w.dispatch_bytes_per_row = static_cast<long long>(pr.dispatch.bytes_per_row);
  w.combine_bytes_per_row = static_cast<long long>(pr.combine.bytes_per_row);
  return w;
}

// The profile's routing (group limit, popularity), one EP group, the tokens of rank 0: destination
// ranks and rows per token as simulated, into r's *_routed fields.
void add_routed(const workload::WorkloadProfile& pr, workload::RowConvention rows, int tokens_per_rank,
                report::MoeModelRow& r) {
  const int p = r.ep_size;
  workload::RoutingConfig cfg = workload::routing_config(pr, p);
  cfg.tokens_per_rank = tokens_per_rank;
  cfg.rows = rows;
  cfg.settings.ep_size = 0;
  cfg.settings.num_redundant_experts = 0;
  std::optional<workload::RoutingGenerator> gen;
  try {
    gen.emplace(cfg);
  } catch (const InputError& e) {
    throw InputError(fmt::format("--ep-size {} with workload '{}': {}", p, pr.name, e.what()));
  }
  const auto counts = gen->count_destinations(0);
  const double tokens = std::max(1, gen->num_tokens(0));
  double dedup = 0, copy = 0;
  for (const auto v : counts.dedup_rows) dedup += static_cast<double>(v);
  for (const auto v : counts.copy_rows) copy += static_cast<double>(v);
  r.dest_ranks_routed = dedup / tokens;
  r.rows_per_token_routed = (rows == workload::RowConvention::copy ? copy : dedup) / tokens;
  r.dispatch_bytes_routed =
      static_cast<double>(tokens_per_rank) * r.rows_per_token_routed * static_cast<double>(pr.dispatch.bytes_per_row);
  r.combine_bytes_routed =
      static_cast<double>(tokens_per_rank) * r.rows_per_token_routed * static_cast<double>(pr.combine.bytes_per_row);
}

// The bound of the uniform expected matrix: every pair (self included) carries T x rows per
// token / P rows of the op's row bytes.
void add_bound(const ModelFlags& f, const model::SystemProfile& system, const workload::WorkloadProfile& pr,
               int tokens_per_rank, report::MoeModelRow& r) {
  const int p = r.ep_size;
  const coll::MoeOp op = coll::moe_op_of(f.collective);
  ModelFlags one = f;
  one.ranks = std::to_string(p);
  r.placement = resolve_placements(one, system).front();
  const double per_pair_rows = static_cast<double>(tokens_per_rank) * r.rows_per_token / p;
  const double row_bytes = static_cast<double>((op != coll::MoeOp::combine ? pr.dispatch.bytes_per_row : 0) +
                                               (op != coll::MoeOp::dispatch ? pr.combine.bytes_per_row : 0));
  model::TrafficMatrix m;
  m.num_ranks = p;
  m.bytes.assign(static_cast<std::size_t>(p) * static_cast<std::size_t>(p),
                 static_cast<std::uint64_t>(std::llround(per_pair_rows * row_bytes)));
  r.bound = model::estimate_from_traffic(system, m, *r.placement);
}

report::MoeModelTable build_moe_table(const ModelFlags& f, const std::optional<model::SystemProfile>& system) {
  const workload::WorkloadProfile pr = workload::load_workload_profile(f.workload.value_or("deepseek-v3"));
  const workload::RowConvention rows = f.rows ? workload::parse_row_convention(*f.rows) : pr.rows;
  report::MoeModelTable t;
  t.workload = workload_facts(pr);
  t.row_convention = std::string(to_string(rows));
  t.tokens_per_rank = f.tokens ? parse_positive("--tokens", *f.tokens) : pr.tokens_per_rank;
  std::vector<int> ep_sizes;
  for (const auto& item : split_list(f.ep_sizes.value_or("8,16,32,64,256"), "--ep-size")) {
    const int p = parse_positive("--ep-size", item);
    if (pr.num_routed_experts % p != 0) {
      throw InputError(fmt::format("--ep-size {}: the {} experts of '{}' do not split evenly over {} ranks", p,
                                   pr.num_routed_experts, pr.name, p));
    }
    ep_sizes.push_back(p);
  }
  const auto tokens = static_cast<double>(t.tokens_per_rank);
  for (const int p : ep_sizes) {
    report::MoeModelRow r;
    r.ep_size = p;
    r.dest_ranks_uniform = workload::expected_destination_ranks(pr.num_routed_experts, p, pr.top_k);
    r.rows_per_token = workload::expected_rows_per_token(pr.num_routed_experts, p, pr.top_k, rows);
    r.dispatch_bytes = tokens * r.rows_per_token * static_cast<double>(pr.dispatch.bytes_per_row);
    r.combine_bytes = tokens * r.rows_per_token * static_cast<double>(pr.combine.bytes_per_row);
    add_routed(pr, rows, t.tokens_per_rank, r);
    if (system) add_bound(f, *system, pr, t.tokens_per_rank, r);
    t.rows.push_back(std::move(r));
  }
  return t;
}

int run_moe_model(const ModelFlags& f) {
  for (const auto& [flag, opt] : f.size_options) {
    if (opt->count() > 0) {
      throw InputError(
          fmt::format("{} does not apply to {}: its sizes come from the workload; use --workload, "
                      "--tokens, --ep-size and --rows",
                      flag, f.collective));
    }
  }
  if (f.ranks) {
    throw InputError(
        fmt::format("--ranks does not apply to {}: per-GPU message sizes depend on the EP group, not "
                    "on the job size (1,024 GPUs = 4 x EP256 or 16 x EP64); use --ep-size",
                    f.collective));
  }
  std::optional<model::SystemProfile> system;
  if (f.system) system = model::load_system_profile(*f.system, f.sets);
  const report::MoeModelTable t = build_moe_table(f, system);
  report::WriterMultiplex<report::MoeModelOutput>(report::moe_model_writers(), f.targets)
      .write(report::MoeModelOutput{f.collective, &system, &t});
  return 0;
}

int list_systems() {
  int status = 0;
  for (const auto& name : model::list_system_profiles()) {
    try {
      const auto p = model::load_system_profile(name);
      std::printf("%-16s %s\n%-16s (%s)\n", name.c_str(), p.description.c_str(), "", p.path.c_str());
    } catch (const InputError& e) {
      std::printf("%-16s invalid: %s\n", name.c_str(), e.what());
      status = static_cast<int>(ExitCode::bad_input);
    }
  }
  std::printf("search path: %s; cpu-local: %s\n", join(model::system_profile_search_dirs()).c_str(),
              model::cpu_local_profile_path().c_str());
  return status;
}

// The system profile, its overrides and the placement.
void add_system_options(CLI::App& app, ModelFlags& f) {
  add_system_option(app, f.system, "System profile");
  app.add_option(
         "--set", f.sets,
         "Override a profile key, validated as in the file (repeatable): KEY=VALUE, e.g. scale_out.oversubscription=2")
      ->expected(1)
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
  app.add_option("--ranks", f.ranks, "Rank counts, comma list (e.g. 256,512,1024); default: one domain");
  app.add_option("--ranks-per-domain", f.ranks_per_domain,
                 "Ranks per scale-up domain, rack-major, last domain partial (default: the profile's)");
  app.add_option("--domain-sizes", f.domain_sizes, "Explicit domain sizes, e.g. 72,72,72,40");
}

// The size axes: -b, -e, -f, -i, -d, --algo and --scope.
void add_size_options(CLI::App& app, ModelFlags& f) {
  f.size_options = add_size_flags(app, f.sizes);
  f.size_options.emplace_back(
      "-d/--dtype",
      app.add_option("-d,--dtype", f.dtypes, "Dtype(s), comma list: " + join(dtype_names()))->default_str("float32"));
  f.size_options.emplace_back(
      "--algo",
      app.add_option("--algo", f.algos, "Algorithm(s), comma list: " + join(algorithm_names()))->default_str("auto"));
  f.size_options.emplace_back(
      "--scope", app.add_option("--scope", f.scopes, "global (all ranks) and/or domain (each domain at once)")
                     ->default_str("global"));
}

// The MoE message sizes' workload, tokens, EP sizes and rows.
void add_moe_options(CLI::App& app, ModelFlags& f) {
  const std::string moe_group = "MoE message sizes (moe-dispatch, moe-combine, moe-roundtrip)";
  app.add_option("--workload", f.workload, "Workload profile, name or file (default deepseek-v3)")->group(moe_group);
  app.add_option("--tokens", f.tokens, "Tokens per rank (default: the profile's)")->group(moe_group);
  app.add_option("--ep-size", f.ep_sizes, "EP sizes, comma list (default 8,16,32,64,256)")->group(moe_group);
  app.add_option("--rows", f.rows, "copy (one row per token-expert) or dedup (per token-rank; default: the profile's)")
      ->group(moe_group);
}

// How far the model has been checked for this collective on the system, once per rank count
// (docs/model.md, "Validated range").
std::vector<std::string> checked_lines(const std::string& collective, const model::SystemProfile& system,
                                       const std::vector<report::ModelRow>& rows) {
  const model::PublishedPoints points = model::load_published_points(system.name);
  std::vector<int> counts;
  for (const auto& r : rows) {
    if (std::find(counts.begin(), counts.end(), r.placement.num_ranks()) == counts.end()) {
      counts.push_back(r.placement.num_ranks());
    }
  }
  std::vector<std::string> out;
  for (const int n : counts) {
    std::string line = model::checked_range_line(system, points, collective, n);
    if (out.empty() || out.back() != line) out.push_back(std::move(line));
  }
  return out;
}

// --published: every published point of the system for this collective, measured against the
// model's bound and expected value.
int run_published(const ModelFlags& f, const model::SystemProfile& system) {
  const model::PublishedPoints points = model::load_published_points(system.name);
  std::printf("published %s points on %s (%s)\n", f.collective.c_str(), system.name.c_str(),
              points.path.empty() ? "none shipped" : points.path.c_str());
  std::printf("%6s %-10s %8s %10s %10s %10s %9s %9s %-12s %s\n", "GPUs", "packing", "bytes", "measured", "bound",
              "expected", "meas/exp", "meas/bnd", "modelled", "source");
  for (const auto& p : points.points) {
    if (p.collective != f.collective) continue;
    const model::CheckedPoint c = model::check_point(system, p);
    const std::string packing = model::packing_string(placement_from_sizes(p.gpus(), p.domain_sizes));
    if (!c.estimate) {
      std::printf("%6d %-10s %8s %10.2f %10s %10s %9s %9s %-12s %s\n", p.gpus(), packing.c_str(),
                  format_bytes(p.bytes).c_str(), p.measured_busbw_gbps, "-", "-", "-", "-", "not modelled",
                  p.source.c_str());
      continue;
    }
    std::printf("%6d %-10s %8s %10.2f %10.2f %10.2f %9.3f %9.3f %-12s %s\n", p.gpus(), packing.c_str(),
                format_bytes(p.bytes).c_str(), p.measured_busbw_gbps, c.estimate->bound_busbw_gbps,
                c.estimate->expected_busbw_gbps, c.measured_over_expected, c.measured_over_bound,
                c.estimate->algo_modelled.c_str(), p.source.c_str());
  }
  return 0;
}

// A regular collective's bounds and expected values on the profile, in --format.
int run_collective_model(const ModelFlags& f) {
  for (const auto* flag : {&f.workload, &f.tokens, &f.ep_sizes, &f.rows}) {
    if (flag->has_value()) {
      throw InputError(
          fmt::format("--workload, --tokens, --ep-size and --rows apply only to moe-dispatch, "
                      "moe-combine and moe-roundtrip, not {}",
                      f.collective));
    }
  }
  const model::SystemProfile system = resolve_system(f);
  if (f.published) return run_published(f, system);
  const std::vector<report::ModelRow> rows = build_rows(f, system);
  const report::ModelOutput output{f.collective, std::string(coll::find_collective(f.collective).bytes_convention()),
                                   &system, &rows, checked_lines(f.collective, system, rows)};
  report::WriterMultiplex<report::ModelOutput>(report::model_writers(), f.targets).write(output);
  return 0;
}

Action setup_model(CLI::App& app) {
  auto f = std::make_shared<ModelFlags>();
  app.add_option("collective", f->collective,
                 "Collective: " + join(model::modelled_collectives()) +
                     "; moe-dispatch, moe-combine, moe-roundtrip "
                     "(message sizes per EP size)");
  add_system_options(app, *f);
  add_size_options(app, *f);
  add_moe_options(app, *f);
  add_format_option(app, f->formats, report::model_writers().names(), "table", "Output");
  app.add_flag("--list-systems", f->list_systems, "List the system profiles and where they are found");
  app.add_flag("--published", f->published,
               "Print the system's published points for COLLECTIVE (profiles/published/) against the model");
  app.footer(
      "See docs/model.md for every formula.\n"
      "Examples (no mpiexec needed):\n"
      "  collbench model alltoall --system gb300-nvl72 --ranks 256,512,1024 --ranks-per-domain 72 -b 1M -e 1G\n"
      "  collbench model allreduce --system gb300-nvl72 --ranks 256,512,1024 --algo ring,nvlstree,hierarchical\n"
      "  collbench model allreduce --system h100-hgx --algo nvls,ring -b 8 -e 8G -f 4 --format csv\n"
      "  collbench model allreduce --system b200-hgx --ranks 64 --set scale_out.in_network_reduction.supported=true "
      "\\\n"
      "      --set 'scale_out.in_network_reduction.dtypes=[float32, bfloat16]' --set "
      "scale_out.in_network_reduction.latency=31us\n"
      "  collbench model moe-dispatch --ep-size 8,16,32,64,256 --tokens 4096\n"
      "  collbench model moe-combine --system gb300-nvl72 --ep-size 64,256 --ranks-per-domain 64");
  return [f]() -> int {
    f->targets = report::parse_output_targets(f->formats, report::model_writers().names(), "table");
    if (f->list_systems) return list_systems();
    if (f->collective.empty()) {
      throw InputError("missing COLLECTIVE; accepted: " + join(model::modelled_collectives()) +
                       ", moe-dispatch, moe-combine, moe-roundtrip");
    }
    if (is_moe_collective(f->collective)) {
      coll::find_collective(f->collective);
      return run_moe_model(*f);
    }
    return run_collective_model(*f);
  };
}

}  // namespace

CB_REGISTER_SUBCOMMAND(Subcommand{"model", "Bounds and expected values on a system profile (no mpiexec needed)", 30,
                                  &setup_model, false});

}  // namespace collbench::cli
