#include "collbench/step/architecture.hpp"

#include <fmt/format.h>

#include <string>
#include <vector>

#include "collbench/core/error.hpp"
#include "collbench/core/names.hpp"

namespace collbench::step {

Architecture architecture_of(const workload::WorkloadProfile& p) {
  const std::pair<const char*, int> required[] = {
      {"num_layers", p.num_layers},
      {"num_moe_layers", p.num_moe_layers},
      {"expert_intermediate_size", p.expert_intermediate_size},
      {"num_attention_heads", p.num_attention_heads},
      {"kv_lora_rank", p.kv_lora_rank},
      {"v_head_dim", p.v_head_dim},
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
  if (p.qk_nope_head_dim + p.qk_rope_head_dim <= 0) missing.emplace_back("model.qk_nope_head_dim");
  if (!missing.empty()) {
    throw InputError(fmt::format("workload profile '{}' ({}) lacks the architecture keys collbench step needs: {}",
                                 p.name, p.source, join(missing)));
  }
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
  a.dense_ffn = p.dense_intermediate_size;
  a.experts = p.num_routed_experts;
  a.shared_experts = p.num_shared_experts;
  a.top_k = p.top_k;
  a.expert_ffn = p.expert_intermediate_size;
  a.vocab = p.vocab_size;
  a.sequence = p.sequence_length;
  a.dispatch_row_bytes = static_cast<double>(p.dispatch.bytes_per_row);
  a.combine_row_bytes = static_cast<double>(p.combine.bytes_per_row);
  return a;
}

double attention_params(const Architecture& a) {
  const double h = a.hidden, n = a.heads, dqk = a.qk_nope + a.qk_rope;
  const double q = a.q_lora_rank > 0 ? h * a.q_lora_rank + static_cast<double>(a.q_lora_rank) * n * dqk : h * n * dqk;
  const double kv = h * (a.kv_lora_rank + a.qk_rope) + static_cast<double>(a.kv_lora_rank) * n * (a.qk_nope + a.v_dim);
  const double out = n * a.v_dim * h;
  return q + kv + out;
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

double attention_core_flops_per_token(const Architecture& a) {
  return 2.0 * a.heads * (a.sequence / 2.0) * (a.qk_nope + a.qk_rope + a.v_dim);
}

double model_flops_per_token(const Architecture& a) {
  return 6.0 * active_matmul_params(a) + 3.0 * a.layers * attention_core_flops_per_token(a);
}

}  // namespace collbench::step
