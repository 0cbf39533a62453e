// MoE workload profiles (profiles/workloads/*.yaml): the model's shape (hidden size, experts,
// top-k, expert groups), the wire format of dispatch and combine rows, tokens per rank, and the
// routing defaults that a sweep or the command line may override. Loading is strict: unknown
// keys (with the closest valid one suggested), wrong types, missing keys and bad units are
// InputErrors (exit 2) naming file, line and key. Pure C++ (yaml-cpp), no hardware needed.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "collbench/core/dtype.hpp"

namespace YAML {
class Node;
}

namespace collbench::workload {

// How often each expert is chosen (before top-k): see routing.hpp for the definitions.
enum class Popularity : std::uint8_t { uniform, lognormal, zipf, one_hot_rank };
// Tokens per source rank: fixed T; `linear` = T - rank_idx; `uniform` = uniform in [min, max].
enum class TokenDistribution : std::uint8_t { fixed, linear, uniform };
// Row conventions. copy: one row per (token, expert), T*k rows per source rank. dedup: one row
// per (token, destination rank); a destination holding several of the token's experts gets the
// token once (DeepEP style).
enum class RowConvention : std::uint8_t { copy, dedup };

std::string_view to_string(Popularity p);
std::string_view to_string(TokenDistribution t);
std::string_view to_string(RowConvention c);
const std::vector<std::string>& popularity_names();          // uniform lognormal zipf one-hot-rank
const std::vector<std::string>& token_distribution_names();  // fixed linear uniform
const std::vector<std::string>& row_convention_names();      // copy dedup
Popularity parse_popularity(std::string_view name);          // InputError with suggestions
TokenDistribution parse_token_distribution(std::string_view name);
RowConvention parse_row_convention(std::string_view name);

// The routing knobs a profile sets as defaults and a sweep (`routing: {...}`) or the command line
// overrides. Keys in YAML are the names in routing_setting_keys().
struct RoutingSettings {
  Popularity popularity = Popularity::uniform;
  double sigma = 0.0;               // lognormal: w_e = exp(sigma * z_e), z_e ~ N(0, 1)
  std::optional<double> imbalance;  // lognormal: target I = max/mean rank load; sets sigma
  double zipf_s = 1.0;              // zipf: w = 1 / position^s over a seeded permutation
  int hot_rank_idx = 0;             // one-hot-rank: rank within each EP group whose experts...
  double hot_factor = 4.0;          // ...are this many times more popular than the others
  int groups_per_token = 0;         // group-limited routing: at most M expert groups; 0 = unlimited
  TokenDistribution tokens = TokenDistribution::fixed;
  int min_tokens = -1;  // uniform: inclusive bounds; -1 = T - T/2 and T + T/2
  int max_tokens = -1;
  int ep_size = 0;                // ranks per EP group; 0 = all ranks
  int num_redundant_experts = 0;  // extra expert slots per EP group (replicas of hot experts)
  std::uint64_t seed = 1;
  int layer = 0;  // popularity differs per layer; routing per (layer, iteration)
};

// Keys accepted in a `routing:` map, in the order documented in profiles/workloads/README.md.
const std::vector<std::string>& routing_setting_keys();

// Applies one `key: value` routing setting (from YAML, a sweep or a flag). `where` prefixes error
// messages, e.g. "sweep.yaml:12: key 'routing.sigma'". Unknown keys suggest the closest one.
void apply_routing_setting(RoutingSettings& settings, std::string_view key, std::string_view value,
                           const std::string& where);

// Applies every entry of a YAML `routing:` map (strict, with file:line locations).
void apply_routing_map(RoutingSettings& settings, const YAML::Node& routing_map, const std::string& source);

// Wire format of one row: `hidden_size` elements of `dtype`, plus one `scale_dtype` value per
// `scale_block_channels` channels when block scaling is used (FP8 dispatch).
struct RowFormat {
  Dtype dtype = Dtype::bfloat16;
  int scale_block_channels = 0;  // 0: no scales
  Dtype scale_dtype = Dtype::float32;
  std::int64_t bytes_per_row = 0;  // derived: see row_bytes()
};

// H * size(dtype) + ceil(H / block) * size(scale_dtype). DeepSeek-V3 FP8 dispatch:
// 7168 * 1 + 56 * 4 = 7392 B; BF16: 7168 * 2 = 14336 B.
std::int64_t row_bytes(int hidden_size, const RowFormat& format);

struct WorkloadProfile {
  std::string name;
  std::string description;
  std::string source;  // file the profile came from
  // model
  int hidden_size = 0;
  int num_routed_experts = 0;
  int num_shared_experts = 0;  // informational: a shared expert is computed locally, never sent
  int top_k = 0;
  int num_expert_groups = 1;  // contiguous experts per group = num_routed_experts / num_expert_groups
  int num_layers = 0;         // informational (0 = not given)
  int num_moe_layers = 0;     // informational (0 = not given)
  // Columns of one expert's up-projection (hidden -> this), sizing the overlap mode's GEMM
  // (docs/overlap.md); 0 = not given.
  int expert_intermediate_size = 0;
  // Architecture keys read by `collbench step` (docs/step.md); 0 = not given. Attention is MLA
  // (DeepSeek-V2/V3: kv_lora_rank > 0; q_lora_rank 0 means a plain query projection) or GQA
  // (num_key_value_heads and head_dim).
  int dense_intermediate_size = 0;  // FFN width of the dense (non-MoE) layers
  int num_attention_heads = 0;
  int q_lora_rank = 0;
  int kv_lora_rank = 0;
  int qk_nope_head_dim = 0;
  int qk_rope_head_dim = 0;
  int v_head_dim = 0;
  int num_key_value_heads = 0;        // GQA: key/value heads
  int head_dim = 0;                   // GQA: width of one head
  int sliding_window = 0;             // keys a sliding-window layer attends to (0 = none)
  int num_sliding_window_layers = 0;  // layers with the sliding window (the rest attend fully)
  int num_mtp_layers = 0;             // multi-token prediction modules (DeepSeek-V3: 1)
  int vocab_size = 0;
  int sequence_length = 0;  // tokens per training sequence
  // wire formats
  RowFormat dispatch;
  RowFormat combine;
  RowConvention rows = RowConvention::dedup;
  // run shape
  int tokens_per_rank = 0;
  RoutingSettings routing;
};

// Parses profile text; `source` names it in messages. Strict (see top of file).
WorkloadProfile parse_workload_profile(const std::string& yaml_text, const std::string& source);

// A name ("deepseek-v3") or a path (anything with '/' or ending in .yaml/.yml). Names resolve to
// <dir>/workloads/<name>.yaml for dir in workload_profile_search_dirs(), first match wins.
WorkloadProfile load_workload_profile(const std::string& name_or_path);

// core/paths.hpp profile_search_dirs(): $COLLBENCH_PROFILE_PATH, $COLLBENCH_PROFILE_DIR,
// ~/.config/collbench/profiles, <install prefix>/share/collbench/profiles, <source>/profiles.
std::vector<std::string> workload_profile_search_dirs();

// Names of every profile found in the search directories (sorted, duplicates removed).
std::vector<std::string> list_workload_profiles();

}  // namespace collbench::workload
