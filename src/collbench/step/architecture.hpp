// The model's architecture as `collbench step` needs it (docs/step.md): layer counts, widths,
// attention (MLA, or GQA with optional sliding-window layers), experts, multi-token prediction,
// vocabulary and sequence length, read from a workload profile, and the FLOP and parameter counts
// derived from them. Pure arithmetic, no I/O.
#pragma once

#include "collbench/workload/profile.hpp"

namespace collbench::step {

struct Architecture {
  int layers = 0, dense_layers = 0, moe_layers = 0;
  int hidden = 0;
  int heads = 0;
  // MLA (kv_lora_rank > 0): q_lora_rank 0 = a plain query projection.
  int q_lora_rank = 0, kv_lora_rank = 0, qk_nope = 0, qk_rope = 0, v_dim = 0;
  // GQA (kv_lora_rank 0): key/value heads and the head width.
  int kv_heads = 0, head_dim = 0;
  int window = 0, window_layers = 0;  // sliding-window layers attend to `window` keys
  int dense_ffn = 0;                  // FFN width of a dense layer
  int experts = 0, shared_experts = 0, top_k = 0, expert_ffn = 0;
  int mtp_layers = 0;  // multi-token prediction modules after the last layer
  int vocab = 0, sequence = 0;
  double dispatch_row_bytes = 0, combine_row_bytes = 0;  // wire rows (workload profile)

  [[nodiscard]] bool mla() const { return kv_lora_rank > 0; }
};

// InputError naming the profile and every missing or conflicting key when the profile lacks the
// step's keys.
Architecture architecture_of(const workload::WorkloadProfile& profile);

// Parameters (weights) of one layer's parts.
double attention_params(const Architecture& a);   // MLA: q (LoRA or plain), kv, output; GQA: q, k, v, output
double dense_ffn_params(const Architecture& a);   // SwiGLU: 3 x H x F
double moe_active_params(const Architecture& a);  // (top_k + shared) x 3 x H x F_expert + router H x E
double moe_total_params(const Architecture& a);   // (experts + shared) x 3 x H x F_expert + router
double head_params(const Architecture& a);        // output layer V x H
double embedding_params(const Architecture& a);   // V x H (a lookup: no FLOPs)
// Parameters a token passes through in matrix multiplies (attention, FFN/experts, output layer),
// the main model only (multi-token prediction: mtp_params).
double active_matmul_params(const Architecture& a);
// One MTP module: a transformer layer like the last one (its FFN MoE when the model has MoE
// layers), the projection of [hidden; embedding] 2H -> H, and the output layer again.
double mtp_params(const Architecture& a);
// MLA's up projections (q_lora -> heads x d_qk, kv_lora -> heads x (d_nope + d_v)); 0 for GQA.
double mla_up_proj_params(const Architecture& a);

// Attention core (QK^T and PV) of one token in one full-attention layer, forward, causal: on
// average s/2 keys, 2 x heads x (d_qk + d_v) FLOPs each.
double attention_core_flops_per_token(const Architecture& a);
// The attention core's backward over its forward in FLOPs, (3 d_qk + 2 d_v) / (d_qk + d_v): the
// FlashAttention backward's five matrix multiplies (S = QK^T again, dV = P^T dO, dP = dO V^T,
// dQ = dS K, dK = dS^T Q) against the forward's two. 2.6 for DeepSeek-V3 (192, 128), 2.5 for GQA.
double attention_backward_flop_ratio(const Architecture& a);
// The same in a sliding-window layer: W - W (W - 1) / (2 s) keys on average (s/2 when W >= s).
double window_core_flops_per_token(const Architecture& a);
// Mean over the main model's layers (full and sliding-window).
double mean_core_flops_per_layer(const Architecture& a);

// FLOPs of the MTP modules for one token, forward and backward: mtp_layers x (6 x mtp_params +
// 3 x a full-attention core).
double mtp_flops_per_token(const Architecture& a);
// Model FLOPs of one token, forward and backward: 6 x active matmul params + 3 x the attention
// cores of every layer + the MTP modules.
double model_flops_per_token(const Architecture& a);

}  // namespace collbench::step
