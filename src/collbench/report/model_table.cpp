// `collbench model`'s writers (docs/model.md, docs/moe.md): render rows computed by the CLI.
#include "collbench/report/model_table.hpp"

#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "collbench/core/error.hpp"
#include "collbench/core/names.hpp"
#include "collbench/core/units.hpp"

namespace collbench::report {
namespace {

bool uneven(const Placement& p) {
  return p.num_domains() > 1 && !p.uniform();
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

std::string table_row(const ModelRow& r) {
  const bool flag = uneven(r.placement);
  const std::string packing = model::packing_string(r.placement) + (flag ? "*" : "");
  const std::string algo = r.outcome.estimate && r.outcome.estimate->algo_modelled != r.algo
                               ? r.algo + ">" + r.outcome.estimate->algo_modelled
                               : r.algo;
  std::string line = fmt::format("{:<13} {:<6} {:<10} {:6} {:<11} {:>9} ", algo, to_string(r.scope), to_string(r.dtype),
                                 r.placement.num_ranks(), packing, format_bytes(r.bytes));
  if (const auto& e = r.outcome.estimate) {
    line += fmt::format("{:12.2f} {:11.2f} {:11.2f} {:12.2f} {:11.2f} {:10.3f}  {}\n", e->bound_time_us,
                        e->bound_algbw_gbps, e->bound_busbw_gbps, e->expected_time_us, e->expected_busbw_gbps,
                        e->wire_bytes_per_rank / 1e6, e->note);
  } else {
    line += fmt::format("{:>12} {:>11} {:>11} {:>12} {:>11} {:>10}  not modelled: {}\n", "-", "-", "-", "-", "-", "-",
                        r.outcome.why_not);
  }
  return line;
}

nlohmann::json row_json(const ModelRow& r) {
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

std::string csv_row(std::string_view collective, const model::SystemProfile& s, const ModelRow& r) {
  std::vector<std::string> sizes;
  for (int d : r.placement.domain_sizes) sizes.push_back(std::to_string(d));
  std::string line = fmt::format("{},{},{},", csv_field(s.name), collective, r.algo);
  if (const auto& e = r.outcome.estimate) {
    line += fmt::format("{},{},{},{},{},{},{},{:.6g},{:.6g},{:.6g},{:.6g},{:.6g},{:.6g},{}", e->algo_modelled,
                        to_string(r.scope), to_string(r.dtype), r.placement.num_ranks(), csv_field(join(sizes, ",")),
                        uneven(r.placement) ? "true" : "false", r.bytes, e->bound_time_us, e->bound_algbw_gbps,
                        e->bound_busbw_gbps, e->expected_time_us, e->expected_busbw_gbps, e->wire_bytes_per_rank,
                        csv_field(e->note));
  } else {
    line += fmt::format(",{},{},{},{},{},{},,,,,,,{}", to_string(r.scope), to_string(r.dtype), r.placement.num_ranks(),
                        csv_field(join(sizes, ",")), uneven(r.placement) ? "true" : "false", r.bytes,
                        csv_field("not modelled: " + r.outcome.why_not));
  }
  return line + "\n";
}

}  // namespace

std::string model_system_line(const model::SystemProfile& s) {
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

std::string render_model_table(std::string_view collective, std::string_view bytes_convention,
                               const model::SystemProfile& s, const std::vector<ModelRow>& rows) {
  std::string out = fmt::format("# {}\n", model_system_line(s));
  out += fmt::format(
      "# {}: bytes = {}; GB = 1e9 B; bound = link rates only (no run may beat it); "
      "expected = bound x efficiency, calibrated caps, + latency\n",
      collective, bytes_convention);
  out += fmt::format("{:<13} {:<6} {:<10} {:>6} {:<11} {:>9} {:>12} {:>11} {:>11} {:>12} {:>11} {:>10}  {}\n", "algo",
                     "scope", "dtype", "ranks", "packing", "bytes", "bound_us", "bound_algbw", "bound_busbw",
                     "expected_us", "exp_busbw", "wire_MB", "note");
  bool any_uneven = false;
  for (const auto& r : rows) {
    any_uneven = any_uneven || uneven(r.placement);
    out += table_row(r);
  }
  if (any_uneven) {
    out +=
        "* uneven packing: the smallest domain's ranks send the largest off-domain fraction, and NCCL's "
        "NVLS team shrinks to the gcd of the domain sizes\n";
  }
  return out;
}

std::string render_model_json(std::string_view collective, const model::SystemProfile& s,
                              const std::vector<ModelRow>& rows) {
  nlohmann::json out{{"kind", "model"},
                     {"collective", collective},
                     {"system", {{"name", s.name}, {"path", s.path}, {"digest", s.digest}}},
                     {"rows", nlohmann::json::array()}};
  for (const auto& r : rows) out["rows"].push_back(row_json(r));
  return out.dump(2) + "\n";
}

std::string render_model_csv(std::string_view collective, const model::SystemProfile& s,
                             const std::vector<ModelRow>& rows) {
  std::string out =
      "system,collective,algo_requested,algo_modelled,scope,dtype,num_ranks,domain_sizes,uneven_packing,bytes,"
      "bound_time_us,bound_algbw_gbps,bound_busbw_gbps,expected_time_us,expected_busbw_gbps,"
      "wire_bytes_per_rank,note\n";
  for (const auto& r : rows) out += csv_row(collective, s, r);
  return out;
}

// ---- MoE ------------------------------------------------------------------------------------

std::string render_moe_model_table(std::string_view collective, const std::optional<model::SystemProfile>& s,
                                   const MoeModelTable& t) {
  const auto& w = t.workload;
  std::string out =
      fmt::format("# {}: workload {} ({}): H {}, {} experts, top-{}; dispatch {} {} B/row, combine {} {} B/row\n",
                  collective, w.name, w.source, w.hidden_size, w.num_routed_experts, w.top_k, w.dispatch_dtype,
                  w.dispatch_bytes_per_row, w.combine_dtype, w.combine_bytes_per_row);
  out += fmt::format(
      "# per GPU per exchange, T = {} tokens per rank, {} rows; MB = 1e6 B; per peer = / ep_size (self "
      "included)\n",
      t.tokens_per_rank, t.row_convention);
  out += fmt::format(
      "# U: destination ranks per token, uniform popularity without group limit (closed form); U_routed and "
      "*_routed: the profile's routing (groups_per_token {}, {}), simulated over rank 0's tokens\n",
      w.groups_per_token, w.popularity);
  if (s) out += fmt::format("# {}\n# bound: the uniform closed-form matrix on that packing\n", model_system_line(*s));
  out += fmt::format("{:>7} {:>7} {:>8} {:>10} {:>11} {:>9} {:>11} {:>9} {:>11} {:>11}", "ep_size", "U", "U_routed",
                     "rows/token", "dispatch_MB", "peer_MB", "combine_MB", "peer_MB", "disp_rt_MB", "comb_rt_MB");
  if (s) out += fmt::format(" {:<11} {:>10} {:>11} {:>11}", "packing", "bound_us", "bound_algbw", "expected_us");
  out += "\n";
  for (const auto& r : t.rows) {
    out += fmt::format("{:7} {:7.3f} {:8.3f} {:10.3f} {:11.1f} {:9.3f} {:11.1f} {:9.3f} {:11.1f} {:11.1f}", r.ep_size,
                       r.dest_ranks_uniform, r.dest_ranks_routed, r.rows_per_token, r.dispatch_bytes / 1e6,
                       r.dispatch_bytes / 1e6 / r.ep_size, r.combine_bytes / 1e6, r.combine_bytes / 1e6 / r.ep_size,
                       r.dispatch_bytes_routed / 1e6, r.combine_bytes_routed / 1e6);
    if (r.bound) {
      out += fmt::format(" {:<11} {:10.1f} {:11.2f} {:11.1f}", model::packing_string(*r.placement),
                         r.bound->estimate.bound_time_us, r.bound->estimate.bound_algbw_gbps,
                         r.bound->estimate.expected_time_us);
    }
    out += "\n";
  }
  return out;
}

std::string render_moe_model_json(std::string_view collective, const std::optional<model::SystemProfile>& s,
                                  const MoeModelTable& t) {
  const auto& w = t.workload;
  nlohmann::json out{{"kind", "moe_model"},
                     {"collective", collective},
                     {"workload",
                      {{"name", w.name},
                       {"hidden_size", w.hidden_size},
                       {"num_routed_experts", w.num_routed_experts},
                       {"top_k", w.top_k},
                       {"groups_per_token", w.groups_per_token},
                       {"popularity", w.popularity},
                       {"dispatch_bytes_per_row", w.dispatch_bytes_per_row},
                       {"combine_bytes_per_row", w.combine_bytes_per_row}}},
                     {"tokens_per_rank", t.tokens_per_rank},
                     {"row_convention", t.row_convention},
                     {"system", s ? nlohmann::json{{"name", s->name}, {"digest", s->digest}} : nlohmann::json(nullptr)},
                     {"table", nlohmann::json::array()}};
  for (const auto& r : t.rows) {
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
  return out.dump(2) + "\n";
}

std::string render_moe_model_csv(const std::optional<model::SystemProfile>& s, const MoeModelTable& t) {
  std::string out =
      "workload,tokens_per_rank,row_convention,ep_size,dest_ranks_per_token,rows_per_token,"
      "dispatch_bytes_per_rank,dispatch_bytes_per_peer,combine_bytes_per_rank,combine_bytes_per_peer,"
      "routed_dest_ranks_per_token,routed_dispatch_bytes_per_rank,routed_combine_bytes_per_rank,system,"
      "packing,bound_time_us,bound_algbw_gbps,expected_time_us\n";
  for (const auto& r : t.rows) {
    out +=
        fmt::format("{},{},{},{},{:.6g},{:.6g},{:.6g},{:.6g},{:.6g},{:.6g},{:.6g},{:.6g},{:.6g},",
                    csv_field(t.workload.name), t.tokens_per_rank, t.row_convention, r.ep_size, r.dest_ranks_uniform,
                    r.rows_per_token, r.dispatch_bytes, r.dispatch_bytes / r.ep_size, r.combine_bytes,
                    r.combine_bytes / r.ep_size, r.dest_ranks_routed, r.dispatch_bytes_routed, r.combine_bytes_routed);
    if (r.bound) {
      out += fmt::format("{},{},{:.6g},{:.6g},{:.6g}", csv_field(s->name),
                         csv_field(model::packing_string(*r.placement)), r.bound->estimate.bound_time_us,
                         r.bound->estimate.bound_algbw_gbps, r.bound->estimate.expected_time_us);
    } else {
      out += ",,,,";
    }
    out += "\n";
  }
  return out;
}

}  // namespace collbench::report
