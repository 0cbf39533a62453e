// A parallel layout for `collbench step` (profiles/layouts/*.yaml, docs/step.md): tensor, expert
// and pipeline parallel sizes with virtual stages, micro and global batch, recomputation, GEMM
// precision and the collective dtypes of the data-parallel exchange. Data parallelism is what the
// GPU count leaves: DP = N / (TP x PP). Experts are folded onto the TP x DP ranks of a stage
// (Megatron-Core's MoE parallel folding, expert TP = 1): expert DP = TP x DP / EP.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "collbench/core/limits.hpp"
#include "collbench/step/architecture.hpp"

namespace collbench::step {

// selective: the attention core again; mla_up_proj: MLA's up projections (q and kv) again, as
// Megatron's --recompute-modules mla_up_proj; full: the whole forward again.
enum class Recompute { none, selective, full, mla_up_proj };
enum class Precision { bf16, fp8 };

// A step figure NVIDIA published for this layout (docs/step.md, "Predicted against published").
struct Published {
  std::string release;  // software release, e.g. "26.06" (NeMo container)
  int gpus = 0;
  double tokens_per_s_per_gpu = 0.0;
  double tflops_per_gpu = 0.0;
  bool counts_mtp = false;  // the published FLOP count includes multi-token prediction
  std::string source;
};

struct Layout {
  std::string name, description, source;
  std::vector<std::string> workloads;  // the workload profiles it serves (the first: as published)
  std::string system;                  // the system it was published for: the default of each pair
  int tp = 1, ep = 1, pp = 1, vpp = 1;
  int micro_batch = 1;          // sequences per micro-batch
  int global_batch = 0;         // sequences per step at `gpus`; grows with DP (weak scaling)
  int gpus = 0;                 // the GPU count global_batch is given for
  int first_stage_layers = -1;  // layers of the first virtual stage; -1 = even split
  int last_stage_layers = -1;   // of the last one (0: the output layer and loss only)
  Recompute recompute = Recompute::none;
  Precision precision = Precision::bf16;  // of the model's GEMMs (attention core stays BF16)
  int grad_bytes = 4;                     // bytes per gradient element in the DP reduce-scatter
  int param_bytes = 2;                    // bytes per parameter element in the DP all-gather
  std::vector<std::string> sources;
  std::vector<Published> published;
};

std::string_view to_string(Recompute r);
std::string_view to_string(Precision p);

Layout parse_layout(const std::string& yaml_text, const std::string& origin);
// A name (profiles/layouts/NAME.yaml on the profile search path) or a file path.
Layout load_layout(const std::string& name_or_path);
std::vector<std::string> list_layouts();
// The layout whose `workloads` and `system` keys name this pair (the system's published layout, the
// default of `collbench step`); InputError listing the layouts and their pairs when none or several do.
Layout default_layout(const std::string& workload, const std::string& system);

// The shape of one step at N GPUs.
struct Shape {
  int gpus = 0;
  int dp = 0, edp = 0;            // DP = N / (TP x PP); expert DP = TP x DP / EP
  int global_batch = 0;           // sequences per step: layout.global_batch x N / layout.gpus
  int micro_batches = 0;          // per pipeline per step: global_batch / (micro_batch x DP)
  std::vector<int> stage_layers;  // layers of each virtual stage (PP x VPP of them, in model order)
};

// The most GPUs a step is projected for (issue 37 item 4): kMaxRanks, 2^20; global_batch x N
// then stays far inside 64 bits.
inline constexpr int kMaxGpus = kMaxRanks;

// InputError naming the flag or key and the numbers that do not divide: N by TP x PP, TP x DP by
// EP, experts by EP, the global batch by micro_batch x DP, the layers by the virtual stages; N
// above kMaxGpus, and a global batch at N past 2^31 - 1 sequences.
Shape shape_at(const Layout& layout, const Architecture& arch, int gpus);

}  // namespace collbench::step
