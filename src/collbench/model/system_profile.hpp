// System profiles (profiles/systems/*.yaml and the calibrated cpu-local profile): what the
// hardware of one system allows, per GPU (per rank on CPU) and per direction, in SI units.
// The model reads only these structs; the YAML loader validates every key strictly so that a
// typo can never silently become a default. Pure C++ with yaml-cpp; no hardware needed.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "collbench/core/collective_facts.hpp"
#include "collbench/core/dtype.hpp"

namespace collbench::model {

// The scale-up domain (an NVLink/NVSwitch domain; on CPU: ranks sharing one host's memory).
struct ScaleUp {
  int domain_size = 0;         // GPUs per domain; 0 = not fixed (CPU: simulated domains)
  double bytes_per_s = 0.0;    // per GPU, per direction (1.8TB/s bidirectional -> 900e9)
  double hop_latency_s = 0.0;  // alpha of one step over the scale-up fabric
};

// Reduction inside the scale-out network (InfiniBand SHARP through NCCL CollNet Direct/Chain,
// or an Ethernet equivalent): the switches reduce what every domain sends, so each NIC sends and
// receives its share once. Off unless the profile says so (`scale_out.in_network_reduction`).
struct InNetworkReduction {
  bool supported = false;
  std::vector<Dtype> dtypes;  // element types the switches reduce
  double latency_s = 0.0;     // the network part of one operation (NCCL: CollNet's NET latency)

  [[nodiscard]] bool reduces(Dtype dtype) const;
};

// How the fabric spreads flows over equal paths: adaptive routing (or anything that spreads
// them evenly; the default) or static ECMP hashing (docs/model.md, "Expected from 1 to 20 racks").
enum class Routing { adaptive, ecmp };

// The scale-out fabric between domains.
struct ScaleOut {
  int nics_per_gpu = 1;
  double nic_bytes_per_s = 0.0;   // per NIC, per direction (800Gb/s -> 100e9)
  double hop_latency_s = 0.0;     // alpha of one step over the network
  std::string fabric;             // rail-optimized, fat-tree, ... (documentation only)
  double oversubscription = 1.0;  // 1 = non-blocking; 2 = 2:1 tapered
  InNetworkReduction in_network;  // off by default
  // Optional topology facts (all neutral by default; docs/model.md, fabric terms):
  int leaf_domains = 0;                 // domains one leaf (or rail group) serves; 0 = not stated
  Routing routing = Routing::adaptive;  // ecmp: hash collisions on the leaf's uplinks (expected only)
  int ecmp_uplinks = 0;                 // u: a leaf's equal uplinks to the spine (routing ecmp)
  int ecmp_flows = 0;                   // f: equal flows a leaf hashes onto them at once; 0 = u

  // What one GPU can push off-domain per direction: its NICs, divided by the taper.
  [[nodiscard]] double per_gpu_bytes_per_s() const { return nics_per_gpu * nic_bytes_per_s / oversubscription; }
};

// A calibrated throughput cap of the switch's reduction, from a measured NVLS all-reduce.
// It limits the *expected* value only; the physical bound never uses it.
struct ReductionCap {
  double busbw_bytes_per_s = 0.0;  // measured all-reduce busbw
  int num_ranks = 0;               // ... on this many GPUs (busbw = algbw x 2(n-1)/n)
  // The per-GPU all-reduce algbw the switch sustains: busbw / (2(n-1)/n).
  [[nodiscard]] double algbw_bytes_per_s() const {
    return busbw_bytes_per_s / collbench::busbw_factor(BusbwRule::two_n_minus_1_over_n, num_ranks);
  }
};

// NVLink SHARP: reductions performed by the switch (multimem.ld_reduce / multimem.st).
struct InSwitch {
  bool supported = false;
  std::vector<Dtype> dtypes;        // element types the switch can reduce
  double latency_s = 0.0;           // one NVLS operation inside a domain
  double tree_hop_latency_s = 0.0;  // each network hop of NVLS-tree across domains
  std::optional<ReductionCap> reduction_cap;

  [[nodiscard]] bool reduces(Dtype dtype) const;
};

// The kernel that moves MoE dispatch/combine rows (DeepEP, HybridEP, ...): the SMs it is given
// and what each peer costs. Optional `ep_kernel:` section; it limits the *expected* value of
// traffic-matrix estimates only (docs/model.md "MoE kernel resources"), never the bound.
struct EpKernel {
  int sms = 0;                      // SMs given to communication; 0 = no SM cap
  double per_sm_bytes_per_s = 0.0;  // rows moved per SM (self included), bytes/s
  double per_peer_s = 0.0;          // fixed time per peer rank a rank sends to or receives from

  // What the kernel's SMs move at most: sms x per-SM rate (0 when no SM cap is set).
  [[nodiscard]] double sm_bytes_per_s() const { return sms * per_sm_bytes_per_s; }
};

// Achievable fraction of each link's line rate (calibration, never physics).
struct Efficiency {
  double scale_up = 1.0;
  double scale_out = 1.0;
};

// Compute figures for `collbench step` (docs/step.md): dense peaks per GPU (no sparsity) and
// the achievable fractions of them (calibration knobs, never physics).
struct Compute {
  double peak_bf16_flops = 0.0;       // FLOP/s per GPU, dense BF16 tensor cores
  double peak_fp8_flops = 0.0;        // FLOP/s per GPU, dense FP8 tensor cores
  double gemm_efficiency = 0.0;       // achieved / peak for the model's GEMMs
  double attention_efficiency = 0.0;  // achieved / peak BF16 for the attention core (QK^T, PV), forward
  // The same for its backward (FlashAttention's five matrix multiplies); 0: attention_efficiency.
  double attention_backward_efficiency = 0.0;
};

// Provenance of a profile measured by `collbench calibrate`.
struct Calibration {
  std::string date;  // ISO 8601 UTC
  std::string host;
  int num_ranks = 0;
  int repetitions = 0;
  double margin = 0.0;  // relative spread of the repetitions: a run may beat a figure by this much
};

struct SystemProfile {
  std::string name;
  std::string description;
  std::string kind;  // "gpu" or "cpu"
  ScaleUp scale_up;
  ScaleOut scale_out;
  InSwitch in_switch;
  std::optional<EpKernel> ep_kernel;              // optional `ep_kernel:` section (MoE expected)
  std::optional<double> memory_copy_bytes_per_s;  // per rank, all ranks copying at once
  double launch_latency_s = 0.0;                  // fixed cost of one collective call
  Efficiency efficiency;
  std::optional<Calibration> calibrated;
  std::optional<Compute> compute;  // optional `compute:` section (collbench step)
  std::vector<std::string> sources;
  std::string path;    // where it was loaded from ("" when parsed from text)
  std::string digest;  // FNV-1a 64 of the file bytes, 16 hex digits

  [[nodiscard]] bool is_cpu() const { return kind == "cpu"; }
};

// Parses and validates profile text. `origin` names the file in messages. Every problem is an
// InputError "ORIGIN:LINE: key 'a.b': what is wrong; accepted ... (did you mean ...?)".
SystemProfile parse_system_profile(std::string_view yaml_text, const std::string& origin);

// Loads a profile by name (profiles/systems/NAME.yaml, see system_profile_search_dirs) or by
// path (anything containing '/' or ending in .yaml/.yml). `cpu-local` resolves to
// cpu_local_profile_path(). InputError with the known names when nothing matches.
SystemProfile load_system_profile(const std::string& name_or_path);

// Directories holding systems/<name>.yaml, in search order (core/paths.hpp profile_search_dirs:
// $COLLBENCH_PROFILE_PATH, $COLLBENCH_PROFILE_DIR, ~/.config/collbench/profiles, the installed
// share/collbench/profiles, the source tree for build-tree binaries). Only existing ones.
std::vector<std::string> system_profile_search_dirs();

// $XDG_CONFIG_HOME/collbench/cpu-local.yaml (default ~/.config/collbench/cpu-local.yaml).
std::string cpu_local_profile_path();

// Every profile name that load_system_profile accepts, sorted; cpu-local only once calibrated.
std::vector<std::string> list_system_profiles();

// FNV-1a 64-bit hash of `bytes` as 16 lowercase hex digits (the profile digest in run headers).
std::string fnv1a64_hex(std::string_view bytes);

}  // namespace collbench::model
