// The model's architecture as `collbench step` needs it (docs/step.md): layer counts, widths,
// MLA attention dimensions, experts, vocabulary and sequence length, read from a workload
// profile, and the FLOP and parameter counts derived from them. Pure arithmetic, no I/O.
#pragma once

#include "collbench/workload/profile.hpp"

namespace collbench::step {

struct Architecture {
  int layers = 0, dense_layers = 0, moe_layers = 0;
  int hidden = 0;
  int heads = 0, q_lora_rank = 0, kv_lora_rank = 0, qk_nope = 0, qk_rope = 0, v_dim = 0;
  int dense_ffn = 0;  // FFN width of a dense layer
  int experts = 0, shared_experts = 0, top_k = 0, expert_ffn = 0;
  int vocab = 0, sequence = 0;
  double dispatch_row_bytes = 0, combine_row_bytes = 0;  // wire rows (workload profile)
};

// InputError naming the profile and every missing key when the profile lacks the step's keys.
Architecture architecture_of(const workload::WorkloadProfile& profile);

// Parameters (weights) of one layer's parts.
double attention_params(const Architecture& a);   // MLA projections: q (LoRA or plain), kv, output
double dense_ffn_params(const Architecture& a);   // SwiGLU: 3 x H x F
double moe_active_params(const Architecture& a);  // (top_k + shared) x 3 x H x F_expert + router H x E
double moe_total_params(const Architecture& a);   // (experts + shared) x 3 x H x F_expert + router
double head_params(const Architecture& a);        // output layer V x H
double embedding_params(const Architecture& a);   // V x H (a lookup: no FLOPs)
// Parameters a token passes through in matrix multiplies (attention, FFN/experts, output layer).
double active_matmul_params(const Architecture& a);

// Attention core (QK^T and PV) of one token in one layer, forward, causal: on average s/2 keys,
// 2 x heads x (d_qk + d_v) FLOPs each.
double attention_core_flops_per_token(const Architecture& a);

// Model FLOPs of one token, forward and backward: 6 x active matmul params + 3 x layers x attention core.
double model_flops_per_token(const Architecture& a);

}  // namespace collbench::step
