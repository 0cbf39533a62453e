#include "collbench/step/architecture.hpp"

#include <fmt/format.h>

#include <string>
#include <vector>

#include "collbench/core/error.hpp"
#include "collbench/core/names.hpp"

namespace collbench::step {
namespace {

// What the attention keys lack or set twice: MLA (kv_lora_rank) and GQA (num_key_value_heads,
// head_dim) exclude each other.
void check_attention(const workload::WorkloadProfile& p, std::vector<std::string>& missing) {
  const bool gqa = p.num_key_value_heads > 0 || p.head_dim > 0;
  if (p.kv_lora_rank > 0 && gqa) {
    throw InputError(fmt::format(
        "workload profile '{}' ({}): model.kv_lora_rank {} (MLA) and model.num_key_value_heads {} / model.head_dim {} "
        "(GQA) exclude each other; set one attention kind",
        p.name, p.source, p.kv_lora_rank, p.num_key_value_heads, p.head_dim));
  }
  if (p.kv_lora_rank > 0) {
    if (p.v_head_dim <= 0) missing.emplace_back("model.v_head_dim");
    if (p.qk_nope_head_dim + p.qk_rope_head_dim <= 0) missing.emplace_back("model.qk_nope_head_dim");
  } else if (gqa) {
    if (p.num_key_value_heads <= 0) missing.emplace_back("model.num_key_value_heads");
    if (p.head_dim <= 0) missing.emplace_back("model.head_dim");
    if (p.num_key_value_heads > 0 && p.num_attention_heads % p.num_key_value_heads != 0) {
      throw InputError(
          fmt::format("workload profile '{}' ({}): model.num_key_value_heads {} does not divide "
                      "model.num_attention_heads {}",
                      p.name, p.source, p.num_key_value_heads, p.num_attention_heads));
    }
  } else {
    missing.emplace_back("model.kv_lora_rank (MLA) or model.num_key_value_heads with model.head_dim (GQA)");
  }
  if (p.num_sliding_window_layers > 0 && (p.sliding_window <= 0 || p.num_sliding_window_layers > p.num_layers)) {
    throw InputError(fmt::format(
        "workload profile '{}' ({}): model.num_sliding_window_layers {} needs model.sliding_window > 0 and at most "
        "model.num_layers {} layers (sliding_window {})",
        p.name, p.source, p.num_sliding_window_layers, p.num_layers, p.sliding_window));
  }
}

void check_profile(const workload::WorkloadProfile& p) {
  const std::pair<const char*, int> required[] = {
      {"num_layers", p.num_layers},
      {"num_moe_layers", p.num_moe_layers},
      {"expert_intermediate_size", p.expert_intermediate_size},
      {"num_attention_heads", p.num_attention_heads},
      {"vocab_size", p.vocab_size},
      {"sequence_length", p.sequence_length},
  };
  std::vector<std::string> missing;
  for (const auto& r : required) {
    if (r.second <= 0) missing.push_back(std::string("model.") + r.first);
  }
  if (p.num_layers > p.num_moe_layers && p.dense_intermediate_size <= 0) {
    missing.emplace_back("model.dense_intermediate_size");
  }
  check_attention(p, missing);
  if (!missing.empty()) {
    throw InputError(fmt::format("workload profile '{}' ({}) lacks the architecture keys collbench step needs: {}",
                                 p.name, p.source, join(missing)));
  }
}

}  // namespace

Architecture architecture_of(const workload::WorkloadProfile& p) {
  check_profile(p);
  Architecture a;
  a.layers = p.num_layers;
  a.moe_layers = p.num_moe_layers;
  a.dense_layers = p.num_layers - p.num_moe_layers;
  a.hidden = p.hidden_size;
  a.heads = p.num_attention_heads;
  a.q_lora_rank = p.q_lora_rank;
  a.kv_lora_rank = p.kv_lora_rank;
  a.qk_nope = p.qk_nope_head_dim;
  a.qk_rope = p.qk_rope_head_dim;
  a.v_dim = p.v_head_dim;
  a.kv_heads = p.num_key_value_heads;
  a.head_dim = p.head_dim;
  a.window = p.sliding_window;
  a.window_layers = p.num_sliding_window_layers;
  a.dense_ffn = p.dense_intermediate_size;
  a.experts = p.num_routed_experts;
  a.shared_experts = p.num_shared_experts;
  a.top_k = p.top_k;
  a.expert_ffn = p.expert_intermediate_size;
  a.mtp_layers = p.num_mtp_layers;
  a.vocab = p.vocab_size;
  a.sequence = p.sequence_length;
  a.dispatch_row_bytes = static_cast<double>(p.dispatch.bytes_per_row);
  a.combine_row_bytes = static_cast<double>(p.combine.bytes_per_row);
  return a;
}

namespace {

double mla_params(const Architecture& a) {
  const double h = a.hidden, n = a.heads, dqk = a.qk_nope + a.qk_rope;
  const double q = a.q_lora_rank > 0 ? h * a.q_lora_rank + static_cast<double>(a.q_lora_rank) * n * dqk : h * n * dqk;
  const double kv = h * (a.kv_lora_rank + a.qk_rope) + static_cast<double>(a.kv_lora_rank) * n * (a.qk_nope + a.v_dim);
  const double out = n * a.v_dim * h;
  return q + kv + out;
}

// Query and output n x d wide, key and value kv x d.
double gqa_params(const Architecture& a) {
  const double h = a.hidden, q = static_cast<double>(a.heads) * a.head_dim;
  return h * (q + 2.0 * a.kv_heads * a.head_dim) + q * h;
}

// d_qk and d_v of one head: MLA's nope + rope and value widths, GQA's head_dim for both.
double qk_width(const Architecture& a) {
  return a.mla() ? a.qk_nope + a.qk_rope : a.head_dim;
}

double v_width(const Architecture& a) {
  return a.mla() ? a.v_dim : a.head_dim;
}

// d_qk + d_v of one head.
double head_widths(const Architecture& a) {
  return qk_width(a) + v_width(a);
}

}  // namespace

double attention_params(const Architecture& a) {
  return a.mla() ? mla_params(a) : gqa_params(a);
}

double dense_ffn_params(const Architecture& a) {
  return 3.0 * a.hidden * static_cast<double>(a.dense_ffn);
}

double moe_active_params(const Architecture& a) {
  return (a.top_k + a.shared_experts) * 3.0 * a.hidden * static_cast<double>(a.expert_ffn) +
         static_cast<double>(a.hidden) * a.experts;
}

double moe_total_params(const Architecture& a) {
  return (a.experts + a.shared_experts) * 3.0 * a.hidden * static_cast<double>(a.expert_ffn) +
         static_cast<double>(a.hidden) * a.experts;
}

double head_params(const Architecture& a) {
  return static_cast<double>(a.vocab) * a.hidden;
}
double embedding_params(const Architecture& a) {
  return static_cast<double>(a.vocab) * a.hidden;
}

double active_matmul_params(const Architecture& a) {
  return a.layers * attention_params(a) + a.dense_layers * dense_ffn_params(a) + a.moe_layers * moe_active_params(a) +
         head_params(a);
}

double mtp_params(const Architecture& a) {
  const double ffn = a.moe_layers > 0 ? moe_active_params(a) : dense_ffn_params(a);
  return attention_params(a) + ffn + 2.0 * a.hidden * static_cast<double>(a.hidden) + head_params(a);
}

double mla_up_proj_params(const Architecture& a) {
  if (!a.mla()) return 0.0;
  const double n = a.heads;
  return static_cast<double>(a.q_lora_rank) * n * (a.qk_nope + a.qk_rope) +
         static_cast<double>(a.kv_lora_rank) * n * (a.qk_nope + a.v_dim);
}

double attention_core_flops_per_token(const Architecture& a) {
  return 2.0 * a.heads * (a.sequence / 2.0) * head_widths(a);
}

double attention_backward_flop_ratio(const Architecture& a) {
  return (3.0 * qk_width(a) + 2.0 * v_width(a)) / head_widths(a);
}

double window_core_flops_per_token(const Architecture& a) {
  const double s = a.sequence, w = a.window;
  const double keys = w > 0 && w < s ? w - w * (w - 1.0) / (2.0 * s) : s / 2.0;
  return 2.0 * a.heads * keys * head_widths(a);
}

double mean_core_flops_per_layer(const Architecture& a) {
  const double windowed = a.window_layers * window_core_flops_per_token(a);
  const double full = (a.layers - a.window_layers) * attention_core_flops_per_token(a);
  return (windowed + full) / a.layers;
}

double mtp_flops_per_token(const Architecture& a) {
  return a.mtp_layers * (6.0 * mtp_params(a) + 3.0 * attention_core_flops_per_token(a));
}

double model_flops_per_token(const Architecture& a) {
  return 6.0 * active_matmul_params(a) + 3.0 * a.layers * mean_core_flops_per_layer(a) + mtp_flops_per_token(a);
}

}  // namespace collbench::step
