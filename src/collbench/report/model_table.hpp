// `collbench model`'s writers: the bound and expected value of each modelled case (table, JSON,
// CSV) and the MoE message-size table. They only render: the rows are computed by the CLI.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "collbench/core/dtype.hpp"
#include "collbench/core/placement.hpp"
#include "collbench/model/estimate.hpp"
#include "collbench/model/system_profile.hpp"
#include "collbench/model/traffic.hpp"

namespace collbench::report {

// One case and what the model says about it.
struct ModelRow {
  std::string algo;
  Scope scope = Scope::global;
  Dtype dtype = Dtype::float32;
  Placement placement;
  std::uint64_t bytes = 0;
  model::ModelOutcome outcome;
};

// "system NAME (PATH, digest D): 72-GPU domain, scale-up ... ; in-switch reduction; calibrated ...".
std::string model_system_line(const model::SystemProfile& s);

// bytes_convention: the collective's byte convention, printed in the header.
std::string render_model_table(std::string_view collective, std::string_view bytes_convention,
                               const model::SystemProfile& s, const std::vector<ModelRow>& rows);
std::string render_model_json(std::string_view collective, const model::SystemProfile& s,
                              const std::vector<ModelRow>& rows);
std::string render_model_csv(std::string_view collective, const model::SystemProfile& s,
                             const std::vector<ModelRow>& rows);

// ---- MoE message sizes per EP size (moe-dispatch, moe-combine, moe-roundtrip) ----------------

// The workload facts the MoE table prints (from a workload profile).
struct MoeWorkloadFacts {
  std::string name, source;
  int hidden_size = 0, num_routed_experts = 0, top_k = 0, groups_per_token = 0;
  std::string popularity;
  std::string dispatch_dtype, combine_dtype;
  long long dispatch_bytes_per_row = 0, combine_bytes_per_row = 0;
};

struct MoeModelRow {
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

struct MoeModelTable {
  MoeWorkloadFacts workload;
  std::string row_convention;  // copy | dedup
  int tokens_per_rank = 0;
  std::vector<MoeModelRow> rows;
};

std::string render_moe_model_table(std::string_view collective, const std::optional<model::SystemProfile>& s,
                                   const MoeModelTable& t);
std::string render_moe_model_json(std::string_view collective, const std::optional<model::SystemProfile>& s,
                                  const MoeModelTable& t);
std::string render_moe_model_csv(const std::optional<model::SystemProfile>& s, const MoeModelTable& t);

}  // namespace collbench::report
