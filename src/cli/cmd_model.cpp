// `collbench model COLLECTIVE`: the analytic bound and expected value of a collective on a system
// profile, for any rank counts and packings (e.g. 256..1,024 GPUs in NVL72 racks), as a table,
// JSON or CSV. For the MoE collectives (moe-dispatch, moe-combine, moe-roundtrip): the message
// sizes of a workload per EP size (docs/hardware-context.md section 6), with bounds when --system is given.
// Pure computation: no MPI, no GPU, no mpiexec.
#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <cstdio>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "cli/subcommand.hpp"
#include "collbench/coll/collective.hpp"
#include "collbench/coll/moe_plan.hpp"
#include "collbench/core/collective_facts.hpp"
#include "collbench/core/dtype.hpp"
#include "collbench/core/error.hpp"
#include "collbench/core/names.hpp"
#include "collbench/core/placement.hpp"
#include "collbench/core/units.hpp"
#include "collbench/model/estimate.hpp"
#include "collbench/model/system_profile.hpp"
#include "collbench/model/traffic.hpp"
#include "collbench/plan/case.hpp"
#include "collbench/workload/expected.hpp"
#include "collbench/workload/profile.hpp"
#include "collbench/workload/routing.hpp"

namespace collbench::cli {
namespace {

struct ModelFlags {
  std::string collective;
  std::optional<std::string> system;
  std::optional<std::string> ranks;
  std::optional<int> ranks_per_domain;
  std::optional<std::string> domain_sizes;
  std::string min_bytes = "32M";
  std::string max_bytes = "32M";
  double factor = 2.0;
  std::string increment = "0";
  std::string dtypes = "float32";
  std::string algos = "auto";
  std::string scopes = "global";
  std::string format = "table";
  bool list_systems = false;
  // MoE message-size table (moe-* only).
  std::optional<std::string> workload, tokens, ep_sizes, rows;
  std::vector<std::pair<std::string, const CLI::Option*>> size_options;  // -b -e -f -i -d --algo --scope
};

// One row of output: a case and what the model says about it.
struct Row {
  std::string algo;
  Scope scope = Scope::global;
  Dtype dtype = Dtype::float32;
  Placement placement;
  std::uint64_t bytes = 0;
  model::ModelOutcome outcome;
};

std::vector<int> parse_rank_list(const std::string& text) {
  std::vector<int> out;
  for (const auto& item : split_list(text, "--ranks")) {
    int v = 0;
    const auto res = std::from_chars(item.data(), item.data() + item.size(), v);
    if (res.ec != std::errc{} || res.ptr != item.data() + item.size() || v <= 0) {
      throw InputError(
          fmt::format("--ranks '{}': '{}' is not a positive integer (expected e.g. 256,512,1024)", text, item));
    }
    out.push_back(v);
  }
  return out;
}

model::SystemProfile resolve_system(const ModelFlags& f) {
  if (f.system) return model::load_system_profile(*f.system);
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

std::vector<Row> build_rows(const ModelFlags& f, const model::SystemProfile& s) {
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
  const auto sizes =
      plan::size_series(parse_bytes(f.min_bytes), parse_bytes(f.max_bytes), f.factor, parse_bytes(f.increment));
  const auto placements = resolve_placements(f, s);

  std::vector<Row> rows;
  for (const auto& algo : algos) {
    for (const Scope scope : scopes) {
      for (const Dtype dtype : dtypes) {
        for (const auto& placement : placements) {
          // Bytes rounded exactly as `collbench run` rounds them (the collective's own shape),
          // on the communicator the case runs on.
          const int comm_ranks = scope == Scope::global ? placement.num_ranks() : placement.largest_domain();
          for (const auto requested : sizes) {
            Row r;
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

bool uneven(const Placement& p) {
  return p.num_domains() > 1 && !p.uniform();
}

std::string system_line(const model::SystemProfile& s) {
  std::string line = fmt::format("system {} ({}, digest {}): ", s.name, s.path.empty() ? "<text>" : s.path, s.digest);
  if (s.scale_up.domain_size > 0) line += fmt::format("{}-GPU domain, ", s.scale_up.domain_size);
  line += fmt::format("scale-up {:.4g} GB/s and scale-out {:.4g} GB/s per {} per direction; efficiency {:.3g} / {:.3g}",
                      s.scale_up.bytes_per_s / kBytesPerGB, s.scale_out.per_gpu_bytes_per_s() / kBytesPerGB,
                      s.is_cpu() ? "rank" : "GPU", s.efficiency.scale_up, s.efficiency.scale_out);
  if (s.in_switch.supported) line += "; in-switch reduction";
  if (s.calibrated)
    line += fmt::format("; calibrated {} on {} (margin {:.3g})", s.calibrated->date, s.calibrated->host,
                        s.calibrated->margin);
  return line;
}

void print_table(const ModelFlags& f, const model::SystemProfile& s, const std::vector<Row>& rows) {
  std::printf("# %s\n", system_line(s).c_str());
  std::printf(
      "# %s: bytes = %s; GB = 1e9 B; bound = link rates only (no run may beat it); "
      "expected = bound x efficiency, calibrated caps, + latency\n",
      f.collective.c_str(), std::string(coll::find_collective(f.collective).bytes_convention()).c_str());
  std::printf("%-13s %-6s %-10s %6s %-11s %9s %12s %11s %11s %12s %11s %10s  %s\n", "algo", "scope", "dtype", "ranks",
              "packing", "bytes", "bound_us", "bound_algbw", "bound_busbw", "expected_us", "exp_busbw", "wire_MB",
              "note");
  bool any_uneven = false;
  for (const auto& r : rows) {
    const bool flag = uneven(r.placement);
    any_uneven = any_uneven || flag;
    const std::string packing = model::packing_string(r.placement) + (flag ? "*" : "");
    const std::string algo = r.outcome.estimate && r.outcome.estimate->algo_modelled != r.algo
                                 ? r.algo + ">" + r.outcome.estimate->algo_modelled
                                 : r.algo;
    std::printf("%-13s %-6s %-10s %6d %-11s %9s ", algo.c_str(), std::string(to_string(r.scope)).c_str(),
                std::string(to_string(r.dtype)).c_str(), r.placement.num_ranks(), packing.c_str(),
                format_bytes(r.bytes).c_str());
    if (const auto& e = r.outcome.estimate) {
      std::printf("%12.2f %11.2f %11.2f %12.2f %11.2f %10.3f  %s\n", e->bound_time_us, e->bound_algbw_gbps,
                  e->bound_busbw_gbps, e->expected_time_us, e->expected_busbw_gbps, e->wire_bytes_per_rank / 1e6,
                  e->note.c_str());
    } else {
      std::printf("%12s %11s %11s %12s %11s %10s  not modelled: %s\n", "-", "-", "-", "-", "-", "-",
                  r.outcome.why_not.c_str());
    }
  }
  if (any_uneven) {
    std::puts(
        "* uneven packing: the smallest domain's ranks send the largest off-domain fraction, and NCCL's "
        "NVLS team shrinks to the gcd of the domain sizes");
  }
}

nlohmann::json row_json(const Row& r) {
  nlohmann::json j{{"algo_requested", r.algo},
                   {"scope", to_string(r.scope)},
                   {"dtype", to_string(r.dtype)},
                   {"num_ranks", r.placement.num_ranks()},
                   {"domain_sizes", r.placement.domain_sizes},
                   {"num_domains", r.placement.num_domains()},
                   {"packing", model::packing_string(r.placement)},
                   {"uneven_packing", uneven(r.placement)},
                   {"bytes", r.bytes},
                   {"modelled", r.outcome.estimate.has_value()}};
  if (const auto& e = r.outcome.estimate) {
    j["algo_modelled"] = e->algo_modelled;
    j["bound_time_us"] = e->bound_time_us;
    j["bound_algbw_gbps"] = e->bound_algbw_gbps;
    j["bound_busbw_gbps"] = e->bound_busbw_gbps;
    j["expected_time_us"] = e->expected_time_us;
    j["expected_algbw_gbps"] = e->expected_algbw_gbps;
    j["expected_busbw_gbps"] = e->expected_busbw_gbps;
    j["wire_bytes_per_rank"] = e->wire_bytes_per_rank;
    j["busbw_ranks"] = e->busbw_ranks;
    j["note"] = e->note;
    j["reason"] = nullptr;
  } else {
    j["reason"] = r.outcome.why_not;
  }
  return j;
}

void print_json(const ModelFlags& f, const model::SystemProfile& s, const std::vector<Row>& rows) {
  nlohmann::json out{{"kind", "model"},
                     {"collective", f.collective},
                     {"system", {{"name", s.name}, {"path", s.path}, {"digest", s.digest}}},
                     {"rows", nlohmann::json::array()}};
  for (const auto& r : rows) out["rows"].push_back(row_json(r));
  std::puts(out.dump(2).c_str());
}

std::string csv_field(const std::string& text) {
  if (text.find_first_of(",\"\n") == std::string::npos) return text;
  std::string quoted = "\"";
  for (const char c : text) {
    if (c == '"') quoted += '"';
    quoted += c;
  }
  return quoted + "\"";
}

void print_csv(const ModelFlags& f, const model::SystemProfile& s, const std::vector<Row>& rows) {
  std::puts(
      "system,collective,algo_requested,algo_modelled,scope,dtype,num_ranks,domain_sizes,uneven_packing,bytes,"
      "bound_time_us,bound_algbw_gbps,bound_busbw_gbps,expected_time_us,expected_busbw_gbps,"
      "wire_bytes_per_rank,note");
  for (const auto& r : rows) {
    std::vector<std::string> sizes;
    for (int d : r.placement.domain_sizes) sizes.push_back(std::to_string(d));
    std::string line = fmt::format("{},{},{},", csv_field(s.name), f.collective, r.algo);
    if (const auto& e = r.outcome.estimate) {
      line += fmt::format("{},{},{},{},{},{},{},{:.6g},{:.6g},{:.6g},{:.6g},{:.6g},{:.6g},{}", e->algo_modelled,
                          to_string(r.scope), to_string(r.dtype), r.placement.num_ranks(), csv_field(join(sizes, ",")),
                          uneven(r.placement) ? "true" : "false", r.bytes, e->bound_time_us, e->bound_algbw_gbps,
                          e->bound_busbw_gbps, e->expected_time_us, e->expected_busbw_gbps, e->wire_bytes_per_rank,
                          csv_field(e->note));
    } else {
      line += fmt::format(",{},{},{},{},{},{},,,,,,,{}", to_string(r.scope), to_string(r.dtype),
                          r.placement.num_ranks(), csv_field(join(sizes, ",")), uneven(r.placement) ? "true" : "false",
                          r.bytes, csv_field("not modelled: " + r.outcome.why_not));
    }
    std::puts(line.c_str());
  }
}

// ---------------------------------------------------------------------------------------------
// MoE: the message sizes of one dispatch and combine per GPU, per EP size (docs/hardware-context.md section 6).

bool is_moe(std::string_view collective) {
  const auto id = collective_id(collective);
  return id == CollectiveId::moe_dispatch || id == CollectiveId::moe_combine || id == CollectiveId::moe_roundtrip;
}

struct MoeRow {
  int ep_size = 0;
  double dest_ranks_uniform = 0;  // U, closed form: uniform popularity, no group limit
  double rows_per_token = 0;      // closed form in the row convention (copy: k, dedup: U)
  double dest_ranks_routed = 0;   // U simulated with the profile's routing (group limit, skew)
  double rows_per_token_routed = 0;
  double dispatch_bytes = 0;  // per GPU, closed form: T x rows per token x row bytes
  double combine_bytes = 0;
  double dispatch_bytes_routed = 0;
  double combine_bytes_routed = 0;
  std::optional<Placement> placement;           // with --system
  std::optional<model::TrafficEstimate> bound;  // for the closed-form uniform matrix
};

struct MoeTable {
  workload::WorkloadProfile profile;
  workload::RowConvention rows = workload::RowConvention::dedup;
  int tokens_per_rank = 0;
  std::vector<MoeRow> table;
};

int parse_positive(const std::string& flag, const std::string& item) {
  int v = 0;
  const auto res = std::from_chars(item.data(), item.data() + item.size(), v);
  if (res.ec != std::errc{} || res.ptr != item.data() + item.size() || v <= 0) {
    throw InputError(fmt::format("{} '{}': not a positive integer", flag, item));
  }
  return v;
}

MoeTable build_moe_table(const ModelFlags& f, const std::optional<model::SystemProfile>& system) {
  MoeTable t;
  t.profile = workload::load_workload_profile(f.workload.value_or("deepseek-v3"));
  const auto& pr = t.profile;
  t.rows = f.rows ? workload::parse_row_convention(*f.rows) : pr.rows;
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
  const coll::MoeOp op = coll::moe_op_of(f.collective);
  for (const int p : ep_sizes) {
    MoeRow r;
    r.ep_size = p;
    r.dest_ranks_uniform = workload::expected_destination_ranks(pr.num_routed_experts, p, pr.top_k);
    r.rows_per_token = workload::expected_rows_per_token(pr.num_routed_experts, p, pr.top_k, t.rows);
    r.dispatch_bytes =
        static_cast<double>(t.tokens_per_rank) * r.rows_per_token * static_cast<double>(pr.dispatch.bytes_per_row);
    r.combine_bytes =
        static_cast<double>(t.tokens_per_rank) * r.rows_per_token * static_cast<double>(pr.combine.bytes_per_row);
    // The profile's routing (group limit, popularity), one EP group, the tokens of rank 0.
    workload::RoutingConfig cfg = workload::routing_config(pr, p);
    cfg.tokens_per_rank = t.tokens_per_rank;
    cfg.rows = t.rows;
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
    r.rows_per_token_routed = (t.rows == workload::RowConvention::copy ? copy : dedup) / tokens;
    r.dispatch_bytes_routed = static_cast<double>(t.tokens_per_rank) * r.rows_per_token_routed *
                              static_cast<double>(pr.dispatch.bytes_per_row);
    r.combine_bytes_routed = static_cast<double>(t.tokens_per_rank) * r.rows_per_token_routed *
                             static_cast<double>(pr.combine.bytes_per_row);
    if (system) {
      ModelFlags one = f;
      one.ranks = std::to_string(p);
      r.placement = resolve_placements(one, *system).front();
      // Uniform expected matrix: every pair (self included) carries T x rows per token / P rows.
      const double per_pair_rows = static_cast<double>(t.tokens_per_rank) * r.rows_per_token / p;
      const double row_bytes = static_cast<double>((op != coll::MoeOp::combine ? pr.dispatch.bytes_per_row : 0) +
                                                   (op != coll::MoeOp::dispatch ? pr.combine.bytes_per_row : 0));
      model::TrafficMatrix m;
      m.num_ranks = p;
      m.bytes.assign(static_cast<std::size_t>(p) * static_cast<std::size_t>(p),
                     static_cast<std::uint64_t>(std::llround(per_pair_rows * row_bytes)));
      r.bound = model::estimate_from_traffic(*system, m, *r.placement);
    }
    t.table.push_back(std::move(r));
  }
  return t;
}

void print_moe_table(const ModelFlags& f, const std::optional<model::SystemProfile>& s, const MoeTable& t) {
  const auto& pr = t.profile;
  std::printf("# %s: workload %s (%s): H %d, %d experts, top-%d; dispatch %s %lld B/row, combine %s %lld B/row\n",
              f.collective.c_str(), pr.name.c_str(), pr.source.c_str(), pr.hidden_size, pr.num_routed_experts, pr.top_k,
              std::string(to_string(pr.dispatch.dtype)).c_str(), static_cast<long long>(pr.dispatch.bytes_per_row),
              std::string(to_string(pr.combine.dtype)).c_str(), static_cast<long long>(pr.combine.bytes_per_row));
  std::printf(
      "# per GPU per exchange, T = %d tokens per rank, %s rows; MB = 1e6 B; per peer = / ep_size (self "
      "included)\n",
      t.tokens_per_rank, std::string(to_string(t.rows)).c_str());
  std::printf(
      "# U: destination ranks per token, uniform popularity without group limit (closed form); U_routed and "
      "*_routed: the profile's routing (groups_per_token %d, %s), simulated over rank 0's tokens\n",
      pr.routing.groups_per_token, std::string(to_string(pr.routing.popularity)).c_str());
  if (s) std::printf("# %s\n# bound: the uniform closed-form matrix on that packing\n", system_line(*s).c_str());
  std::printf("%7s %7s %8s %10s %11s %9s %11s %9s %11s %11s", "ep_size", "U", "U_routed", "rows/token", "dispatch_MB",
              "peer_MB", "combine_MB", "peer_MB", "disp_rt_MB", "comb_rt_MB");
  if (s) std::printf(" %-11s %10s %11s %11s", "packing", "bound_us", "bound_algbw", "expected_us");
  std::printf("\n");
  for (const auto& r : t.table) {
    std::printf("%7d %7.3f %8.3f %10.3f %11.1f %9.3f %11.1f %9.3f %11.1f %11.1f", r.ep_size, r.dest_ranks_uniform,
                r.dest_ranks_routed, r.rows_per_token, r.dispatch_bytes / 1e6, r.dispatch_bytes / 1e6 / r.ep_size,
                r.combine_bytes / 1e6, r.combine_bytes / 1e6 / r.ep_size, r.dispatch_bytes_routed / 1e6,
                r.combine_bytes_routed / 1e6);
    if (r.bound) {
      std::printf(" %-11s %10.1f %11.2f %11.1f", model::packing_string(*r.placement).c_str(),
                  r.bound->estimate.bound_time_us, r.bound->estimate.bound_algbw_gbps,
                  r.bound->estimate.expected_time_us);
    }
    std::printf("\n");
  }
}

nlohmann::json moe_json(const ModelFlags& f, const std::optional<model::SystemProfile>& s, const MoeTable& t) {
  const auto& pr = t.profile;
  nlohmann::json out{{"kind", "moe_model"},
                     {"collective", f.collective},
                     {"workload",
                      {{"name", pr.name},
                       {"hidden_size", pr.hidden_size},
                       {"num_routed_experts", pr.num_routed_experts},
                       {"top_k", pr.top_k},
                       {"groups_per_token", pr.routing.groups_per_token},
                       {"popularity", to_string(pr.routing.popularity)},
                       {"dispatch_bytes_per_row", pr.dispatch.bytes_per_row},
                       {"combine_bytes_per_row", pr.combine.bytes_per_row}}},
                     {"tokens_per_rank", t.tokens_per_rank},
                     {"row_convention", to_string(t.rows)},
                     {"system", s ? nlohmann::json{{"name", s->name}, {"digest", s->digest}} : nlohmann::json(nullptr)},
                     {"table", nlohmann::json::array()}};
  for (const auto& r : t.table) {
    nlohmann::json j{{"ep_size", r.ep_size},
                     {"dest_ranks_per_token", r.dest_ranks_uniform},
                     {"rows_per_token", r.rows_per_token},
                     {"dispatch_bytes_per_rank", r.dispatch_bytes},
                     {"dispatch_bytes_per_peer", r.dispatch_bytes / r.ep_size},
                     {"combine_bytes_per_rank", r.combine_bytes},
                     {"combine_bytes_per_peer", r.combine_bytes / r.ep_size},
                     {"routed",
                      {{"dest_ranks_per_token", r.dest_ranks_routed},
                       {"rows_per_token", r.rows_per_token_routed},
                       {"dispatch_bytes_per_rank", r.dispatch_bytes_routed},
                       {"combine_bytes_per_rank", r.combine_bytes_routed}}},
                     {"model", nullptr}};
    if (r.bound) {
      const auto& e = r.bound->estimate;
      j["model"] = {{"domain_sizes", r.placement->domain_sizes},
                    {"packing", model::packing_string(*r.placement)},
                    {"bytes_max_rank", r.bound->traffic.bytes_max_rank},
                    {"bytes_in_domain", r.bound->traffic.bytes_in_domain},
                    {"bytes_off_domain", r.bound->traffic.bytes_off_domain},
                    {"bound_time_us", e.bound_time_us},
                    {"bound_algbw_gbps", e.bound_algbw_gbps},
                    {"bound_busbw_gbps", e.bound_busbw_gbps},
                    {"expected_time_us", e.expected_time_us},
                    {"expected_busbw_gbps", e.expected_busbw_gbps},
                    {"note", e.note}};
    }
    out["table"].push_back(std::move(j));
  }
  return out;
}

void print_moe_csv(const std::optional<model::SystemProfile>& s, const MoeTable& t) {
  std::puts(
      "workload,tokens_per_rank,row_convention,ep_size,dest_ranks_per_token,rows_per_token,"
      "dispatch_bytes_per_rank,dispatch_bytes_per_peer,combine_bytes_per_rank,combine_bytes_per_peer,"
      "routed_dest_ranks_per_token,routed_dispatch_bytes_per_rank,routed_combine_bytes_per_rank,system,"
      "packing,bound_time_us,bound_algbw_gbps,expected_time_us");
  for (const auto& r : t.table) {
    std::string line =
        fmt::format("{},{},{},{},{:.6g},{:.6g},{:.6g},{:.6g},{:.6g},{:.6g},{:.6g},{:.6g},{:.6g},",
                    csv_field(t.profile.name), t.tokens_per_rank, to_string(t.rows), r.ep_size, r.dest_ranks_uniform,
                    r.rows_per_token, r.dispatch_bytes, r.dispatch_bytes / r.ep_size, r.combine_bytes,
                    r.combine_bytes / r.ep_size, r.dest_ranks_routed, r.dispatch_bytes_routed, r.combine_bytes_routed);
    if (r.bound) {
      line += fmt::format("{},{},{:.6g},{:.6g},{:.6g}", csv_field(s->name),
                          csv_field(model::packing_string(*r.placement)), r.bound->estimate.bound_time_us,
                          r.bound->estimate.bound_algbw_gbps, r.bound->estimate.expected_time_us);
    } else {
      line += ",,,,";
    }
    std::puts(line.c_str());
  }
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
  if (f.system) system = model::load_system_profile(*f.system);
  const MoeTable t = build_moe_table(f, system);
  if (f.format == "json") {
    std::puts(moe_json(f, system, t).dump(2).c_str());
  } else if (f.format == "csv") {
    print_moe_csv(system, t);
  } else {
    print_moe_table(f, system, t);
  }
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

Action setup(CLI::App& app) {
  auto f = std::make_shared<ModelFlags>();
  app.add_option("collective", f->collective,
                 "Collective: " + join(model::modelled_collectives()) +
                     "; moe-dispatch, moe-combine, moe-roundtrip "
                     "(message sizes per EP size)");
  app.add_option("--system", f->system, "System profile: a name (see --list-systems) or a YAML file");
  app.add_option("--ranks", f->ranks, "Rank counts, comma list (e.g. 256,512,1024); default: one domain");
  app.add_option("--ranks-per-domain", f->ranks_per_domain,
                 "Ranks per scale-up domain, rack-major, last domain partial (default: the profile's)");
  app.add_option("--domain-sizes", f->domain_sizes, "Explicit domain sizes, e.g. 72,72,72,40");
  f->size_options = {
      {"-b/--minbytes",
       app.add_option("-b,--minbytes", f->min_bytes, "Smallest size (8, 4K, 128MiB, 1G; K/M/G = 1024^n)")
           ->default_str("32M")},
      {"-e/--maxbytes", app.add_option("-e,--maxbytes", f->max_bytes, "Largest size")->default_str("32M")},
      {"-f/--stepfactor", app.add_option("-f,--stepfactor", f->factor, "Size multiplication factor")->default_str("2")},
      {"-i/--stepbytes",
       app.add_option("-i,--stepbytes", f->increment, "Size increment (instead of -f)")->default_str("0")},
      {"-d/--dtype",
       app.add_option("-d,--dtype", f->dtypes, "Dtype(s), comma list: " + join(dtype_names()))->default_str("float32")},
      {"--algo",
       app.add_option("--algo", f->algos, "Algorithm(s), comma list: " + join(algorithm_names()))->default_str("auto")},
      {"--scope", app.add_option("--scope", f->scopes, "global (all ranks) and/or domain (each domain at once)")
                      ->default_str("global")},
  };
  const std::string moe_group = "MoE message sizes (moe-dispatch, moe-combine, moe-roundtrip)";
  app.add_option("--workload", f->workload, "Workload profile, name or file (default deepseek-v3)")->group(moe_group);
  app.add_option("--tokens", f->tokens, "Tokens per rank (default: the profile's)")->group(moe_group);
  app.add_option("--ep-size", f->ep_sizes, "EP sizes, comma list (default 8,16,32,64,256)")->group(moe_group);
  app.add_option("--rows", f->rows, "copy (one row per token-expert) or dedup (per token-rank; default: the profile's)")
      ->group(moe_group);
  app.add_option("--format", f->format, "Output: table, json or csv")
      ->check(CLI::IsMember({"table", "json", "csv"}))
      ->default_str("table");
  app.add_flag("--list-systems", f->list_systems, "List the system profiles and where they are found");
  app.footer(
      "See docs/model.md for every formula.\n"
      "Examples (no mpiexec needed):\n"
      "  collbench model alltoall --system gb300-nvl72 --ranks 256,512,1024 --ranks-per-domain 72 -b 1M -e 1G\n"
      "  collbench model allreduce --system gb300-nvl72 --ranks 256,512,1024 --algo ring,nvlstree,hierarchical\n"
      "  collbench model allreduce --system h100-hgx --algo nvls,ring -b 8 -e 8G -f 4 --format csv\n"
      "  collbench model moe-dispatch --ep-size 8,16,32,64,256 --tokens 4096\n"
      "  collbench model moe-combine --system gb300-nvl72 --ep-size 64,256 --ranks-per-domain 64");
  return [f]() -> int {
    if (f->list_systems) return list_systems();
    if (f->collective.empty()) {
      throw InputError("missing COLLECTIVE; accepted: " + join(model::modelled_collectives()) +
                       ", moe-dispatch, moe-combine, moe-roundtrip");
    }
    if (is_moe(f->collective)) {
      coll::find_collective(f->collective);
      return run_moe_model(*f);
    }
    for (const auto* flag : {&f->workload, &f->tokens, &f->ep_sizes, &f->rows}) {
      if (flag->has_value()) {
        throw InputError(
            fmt::format("--workload, --tokens, --ep-size and --rows apply only to moe-dispatch, "
                        "moe-combine and moe-roundtrip, not {}",
                        f->collective));
      }
    }
    const model::SystemProfile system = resolve_system(*f);
    const std::vector<Row> rows = build_rows(*f, system);
    if (f->format == "json") {
      print_json(*f, system, rows);
    } else if (f->format == "csv") {
      print_csv(*f, system, rows);
    } else {
      print_table(*f, system, rows);
    }
    return 0;
  };
}

}  // namespace

CB_REGISTER_SUBCOMMAND(Subcommand{"model", "Bounds and expected values on a system profile (no mpiexec needed)", 30,
                                  &setup, false});

}  // namespace collbench::cli
