// NVLink SHARP (in-switch reduction) decisions of the NCCL backend, in plain C++ so that the CPU
// unit tests (tests/unit/test_nccl_nvls_host.cpp) check them in every build:
//   - which NCCL "nodes" a communicator spans (hosts, or NVLink cliques under MNNVL);
//   - whether NCCL's NVLS / NVLSTree and collbench's own cb-multimem kernels can run a case on a
//     communicator, from a capability probe (multicast support, GPU generation, NCCL version,
//     ranks per node, NCCL's LSA team, device-communicator creation): the reason when not, which
//     the runner records as a `waived` case (never a crash, never a silently different algorithm);
//   - what a record says about an in-switch case: accumulation type, modelled wire bytes per GPU
//     and the busbw note.
// The rules restate NCCL 2.28's own (src/graph/tuning.cc, src/enqueue.cc, src/transport/nvls.cc,
// src/dev_runtime.cc): where they name a limit, the comment says where it comes from.
#pragma once

#include <fmt/format.h>

#include <algorithm>
#include <cstddef>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "collbench/backend/nccl/nccl_host.hpp"
#include "collbench/core/dtype.hpp"
#include "collbench/core/in_switch.hpp"
#include "collbench/core/redop.hpp"

namespace collbench::backend::nccl {

inline constexpr int kNcclDeviceApiVersion = nccl_version_code(2, 28, 0);  // ncclDevCommCreate, lsaMultimem
inline constexpr int kNcclMaxNvlsArity = 32;  // NCCL_MAX_NVLS_ARITY: NVLS RS/AG skipped above it (enqueue.cc)

constexpr bool is_in_switch_algo(std::string_view algo) {
  return algo == "nvls" || algo == "nvlstree" || algo == "cb-multimem";
}

// ---- NCCL nodes ---------------------------------------------------------------------------------

// What the backend knows about one rank's GPU and host (gathered into the provenance as
// rank.<r>.*; see gpu_info.hpp).
struct RankPlacementFacts {
  std::string host;
  std::string fabric_state;           // "completed" when the GPU is registered in an NVLink fabric
  std::string fabric_cluster_uuid;    // the NVLink fabric (NVL72 rack partition)
  std::string fabric_clique_id;       // the clique inside it
  std::string fabric_handle_support;  // "1": cuMem fabric handles (needed for multi-node NVLink)
};

// An NVLink fabric cluster UUID as gpu_info writes it (hex) that is all zeros: NVML's answer on a
// GPU with no multi-node NVLink fabric, which NCCL reads as "no MNNVL" (mnnvl.cc).
inline bool zero_cluster_uuid(std::string_view hex) {
  return hex.find_first_not_of('0') == std::string_view::npos;
}

// NCCL's node of each rank. NCCL enables multi-node NVLink (MNNVL) when NCCL_MNNVL_ENABLE is not
// 0 and every rank's GPU is registered in an NVLink fabric with fabric handles and a non-zero
// cluster UUID; its "nodes" are then the NVLink cliques (an NVL72 rack is one node), else the
// hosts. `mnnvl_enable`: the environment's NCCL_MNNVL_ENABLE ("" when unset).
inline std::vector<std::string> nccl_nodes(const std::vector<RankPlacementFacts>& ranks,
                                           std::string_view mnnvl_enable) {
  const bool mnnvl =
      mnnvl_enable != "0" && !ranks.empty() && std::all_of(ranks.begin(), ranks.end(), [](const auto& r) {
        return r.fabric_state == "completed" && r.fabric_handle_support == "1" &&
               !zero_cluster_uuid(r.fabric_cluster_uuid);
      });
  std::vector<std::string> nodes;
  nodes.reserve(ranks.size());
  for (const auto& r : ranks) {
    nodes.push_back(mnnvl ? fmt::format("clique {}/{}", r.fabric_cluster_uuid, r.fabric_clique_id)
                          : fmt::format("host {}", r.host));
  }
  return nodes;
}

// ---- capability probe -----------------------------------------------------------------------

// One rank of the communicator a case runs on.
struct InSwitchRank {
  int multicast = -1;  // CU_DEVICE_ATTRIBUTE_MULTICAST_SUPPORTED: 1, 0, or -1 when it could not be read
  int cc_major = 0;    // compute capability major (9: Hopper, 10: Blackwell)
  std::string node;    // NCCL's node (nccl_nodes)
};

// What is known about a communicator. Stage 1 (every in-switch algorithm) uses the ranks,
// versions, environment and NCCL's LSA team; cb-multimem adds stage 2: the device communicator.
struct InSwitchProbe {
  std::vector<InSwitchRank> ranks;           // in communicator rank order
  int nccl_version = 0;                      // ncclGetVersion() of the loaded libnccl
  std::string nvls_enable;                   // NCCL_NVLS_ENABLE as set in the environment ("" = unset)
  std::string pat_enable;                    // NCCL_PAT_ENABLE as set in the environment ("" = unset)
  int lsa_ranks = 0;                         // ncclTeamLsa(comm).nRanks; 0 = not probed, -1 = ncclTeamLsa failed
  std::optional<std::string> devcomm_error;  // ncclDevCommCreate(lsaMultimem) failed: NCCL's text
  std::string multimem_not_built;            // why this build has no cb-multimem kernels ("" = it has them)

  [[nodiscard]] std::map<std::string, int> ranks_per_node() const {
    std::map<std::string, int> m;
    for (const auto& r : ranks) ++m[r.node];
    return m;
  }
};

// How a communicator's ranks group into NVSwitch domains (NCCL "nodes": hosts, or NVLink cliques
// under MNNVL) for every in-switch decision. NCCL's own grouping where it says it: NCCL 2.28's LSA
// team (ncclTeamLsa: the ranks one GPU reaches by load/store) is the gcd of the runs of
// consecutive ranks on one node (dev_runtime.cc computeLsaSize), the same on every rank, and
// ncclTeamRail has nRanks / lsa ranks; so the communicator is one node exactly when the LSA team
// is all of it, and spans nRanks / lsa teams otherwise (as many as its nodes when they are of
// equal size). Where NCCL cannot say (before 2.28 ncclTeamLsa does not exist; its symmetric
// runtime needs CUDA VMM), the nodes of nccl_nodes() from NVML's fabric facts stand in.
struct InSwitchGrouping {
  int domains = 0;   // NCCL nodes (LSA teams)
  int smallest = 0;  // ranks in the smallest and the largest
  int largest = 0;
  std::string_view source;  // whose grouping: kGroupingNccl or kGroupingNvml
};

inline constexpr std::string_view kGroupingNccl = "NCCL's LSA team";
inline constexpr std::string_view kGroupingNvml = "NVML's host and fabric facts; NCCL's LSA team unknown";

inline InSwitchGrouping in_switch_grouping(const InSwitchProbe& p) {
  const int n = static_cast<int>(p.ranks.size());
  if (p.lsa_ranks > 0 && n % p.lsa_ranks == 0) return {n / p.lsa_ranks, p.lsa_ranks, p.lsa_ranks, kGroupingNccl};
  InSwitchGrouping g{0, n, 0, kGroupingNvml};
  for (const auto& [node, count] : p.ranks_per_node()) {
    ++g.domains;
    g.smallest = std::min(g.smallest, count);
    g.largest = std::max(g.largest, count);
  }
  return g;
}

// NCCL's NVLS reduces these (ncclNvlsSupported, src/include/device.h in 2.28): sum on int32,
// int64, float16, bfloat16, float32, float64; min/max on the integer and 16-bit float types;
// never prod, never fp8. All-gather moves any type.
constexpr bool nccl_nvls_reduces(Dtype dtype, Redop redop) {
  switch (dtype) {
    case Dtype::int32:
    case Dtype::int64:
    case Dtype::float16:
    case Dtype::bfloat16:
      return redop == Redop::sum || redop == Redop::min || redop == Redop::max;
    case Dtype::float32:
    case Dtype::float64:
      return redop == Redop::sum;
    case Dtype::float8e4m3:
    case Dtype::float8e5m2:
      return false;
  }
  return false;
}

// cb-multimem reduces float32 (multimem.ld_reduce .add.v4.f32) and bfloat16 / float16
// (.add.acc::f32.v4.bf16x2 / .f16x2), summing; all-gather (multimem.st only) moves any type.
constexpr bool multimem_reduces(Dtype dtype) {
  return dtype == Dtype::float32 || dtype == Dtype::bfloat16 || dtype == Dtype::float16;
}

// The NCCL operations collbench's in-switch kernels implement, and of them those that reduce.
inline bool multimem_op(NcclOp op) {
  return op == NcclOp::allreduce || op == NcclOp::reducescatter || op == NcclOp::allgather;
}

inline bool multimem_collective(std::string_view collective) {
  return multimem_op(op_of_collective(collective));
}

inline bool is_reduction(std::string_view collective) {
  const NcclOp op = op_of_collective(collective);
  return op == NcclOp::allreduce || op == NcclOp::reducescatter;
}

namespace detail {

inline std::optional<std::string> first_rank_without_multicast(const InSwitchProbe& p) {
  for (std::size_t r = 0; r < p.ranks.size(); ++r) {
    if (p.ranks[r].multicast == 0) {
      return fmt::format(
          "multicast unsupported: CU_DEVICE_ATTRIBUTE_MULTICAST_SUPPORTED is 0 on rank {} (NVLink SHARP needs GPUs "
          "behind third-generation or newer NVSwitches: H100/H200 HGX, GB200/GB300 NVL72; PCIe and directly "
          "linked GPUs have none)",
          r);
    }
  }
  for (std::size_t r = 0; r < p.ranks.size(); ++r) {
    if (p.ranks[r].multicast < 0) {
      return fmt::format(
          "multicast support unknown: CU_DEVICE_ATTRIBUTE_MULTICAST_SUPPORTED could not be read on rank {} (the "
          "driver's cuDeviceGetAttribute entry point is unavailable)",
          r);
    }
  }
  return std::nullopt;
}

// The domain rules of in_switch_waiver, on NCCL's grouping (in_switch_grouping).
inline std::optional<std::string> domain_waiver(std::string_view algo, std::string_view collective,
                                                const InSwitchProbe& p) {
  const InSwitchGrouping g = in_switch_grouping(p);
  if (g.smallest < 2) {
    return fmt::format(
        "domain too small: {} GPU(s) of this communicator share an NVSwitch domain ({} rank(s) in {} domain(s), by "
        "{}); in-switch reduction needs at least 2",
        g.smallest, p.ranks.size(), g.domains, g.source);
  }
  if (algo == "nvls" && g.domains > 1) {
    return fmt::format(
        "NCCL runs NVLS inside one node or NVLink clique (tuning.cc disables it across nodes without CollNet); this "
        "communicator spans {} nodes (by {}): use nvlstree, or --scope domain",
        g.domains, g.source);
  }
  if (algo == "nvlstree" && g.domains == 1) {
    return fmt::format(
        "NCCL disables NVLSTree on a single node or NVLink clique (tuning.cc); this communicator is one (by {}): use "
        "nvls",
        g.source);
  }
  if (algo == "nvls" && op_of_collective(collective) != NcclOp::allreduce && g.largest > kNcclMaxNvlsArity) {
    return fmt::format(
        "NCCL skips NVLS {} above {} GPUs per node (NCCL_MAX_NVLS_ARITY, enqueue.cc); this node has {} (by {})",
        collective, kNcclMaxNvlsArity, g.largest, g.source);
  }
  return std::nullopt;
}

// cb-multimem's rules on NCCL's LSA team and the device communicator (stage 2).
inline std::optional<std::string> multimem_team_waiver(const InSwitchProbe& p) {
  if (p.lsa_ranks < 0) {
    return std::string(
        "NCCL's LSA team could not be determined (ncclTeamLsa: NCCL's symmetric-memory runtime did not start; it "
        "needs CUDA VMM and NCCL_CUMEM_ENABLE=1)");
  }
  if (p.lsa_ranks > 0) {
    if (p.lsa_ranks < 2) {
      return fmt::format("domain too small: NCCL's LSA team (GPUs reachable by NVLink load/store) has {} rank",
                         p.lsa_ranks);
    }
    if (p.lsa_ranks != static_cast<int>(p.ranks.size())) {
      return fmt::format(
          "the communicator has {} ranks but NCCL's LSA team (GPUs reachable by NVLink load/store) has {}: "
          "cb-multimem runs inside one NVLink domain (use --scope domain)",
          p.ranks.size(), p.lsa_ranks);
    }
  }
  if (p.devcomm_error) {
    return fmt::format("ncclDevCommCreate with lsaMultimem failed: {}", *p.devcomm_error);
  }
  return std::nullopt;
}

}  // namespace detail

// Why `algo` (nvls, nvlstree, cb-multimem) cannot run `collective` here, or nullopt; nullopt for
// every other algorithm. NCCL with a forced algorithm it cannot use fails the call ("no
// algorithm/protocol available"), so each rule below is a case NCCL would refuse.
inline std::optional<std::string> in_switch_waiver(std::string_view algo, std::string_view collective, Dtype dtype,
                                                   Redop redop, const InSwitchProbe& p) {
  if (!is_in_switch_algo(algo)) return std::nullopt;
  const bool multimem = algo == "cb-multimem";
  const bool reduction = is_reduction(collective);

  // What the algorithm implements.
  if (multimem && !multimem_collective(collective)) {
    return fmt::format("cb-multimem implements allreduce, reducescatter and allgather, not {}", collective);
  }
  if (multimem && reduction && !multimem_reduces(dtype)) {
    return fmt::format(
        "dtype unsupported: cb-multimem reduces float32, bfloat16 and float16 in the switch "
        "(multimem.ld_reduce add .f32 / .acc::f32 .bf16x2, .f16x2), not {}",
        to_string(dtype));
  }
  if (multimem && reduction && redop != Redop::sum) {
    return fmt::format("cb-multimem reduces with sum only (got {})", to_string(redop));
  }
  if (!multimem && reduction && !nccl_nvls_reduces(dtype, redop)) {
    return fmt::format(
        "NCCL's NVLS does not reduce {} with {} (it reduces sum on int32, int64, float16, bfloat16, float32, float64 "
        "and min/max on the integer and 16-bit types)",
        to_string(dtype), to_string(redop));
  }

  // Library and environment.
  if (p.nvls_enable == "0") {
    return std::string("NCCL_NVLS_ENABLE=0 in the environment turns NVLink SHARP off in NCCL");
  }
  if (multimem && !p.multimem_not_built.empty()) {
    return fmt::format("cb-multimem is not in this build: {}", p.multimem_not_built);
  }
  if (multimem && p.nccl_version < kNcclDeviceApiVersion) {
    return fmt::format(
        "cb-multimem needs NCCL >= 2.28 (device API: ncclDevCommCreate with lsaMultimem); the loaded "
        "libnccl is {}",
        format_nccl_version(p.nccl_version));
  }

  // Hardware.
  for (std::size_t r = 0; r < p.ranks.size(); ++r) {
    if (p.ranks[r].cc_major > 0 && p.ranks[r].cc_major < 9) {
      return fmt::format("multicast needs sm_90 or newer GPUs; rank {} is sm_{}x", r, p.ranks[r].cc_major);
    }
  }
  if (auto why = detail::first_rank_without_multicast(p)) return why;

  // Domain: ranks per NVSwitch domain as NCCL sees it.
  if (auto why = detail::domain_waiver(algo, collective, p)) return why;

  // cb-multimem: NCCL's LSA team and the device communicator.
  if (multimem) return detail::multimem_team_waiver(p);
  return std::nullopt;
}

// ---- PAT ---------------------------------------------------------------------------------------

// Why NCCL would refuse --algo pat for `collective` on the probed communicator, or nullopt. NCCL
// 2.28.9 src/graph/tuning.cc, ncclPatEnable: PAT needs sm_60 or newer on every rank; then
// NCCL_PAT_ENABLE=0 or 1 decides, and unset (2) it is on only with one GPU per node (nNodes ==
// nRanks) and without network device offload (not known here: NCCL's refusal covers it, see
// backend::Unsupported). PAT runs reduce-scatter and all-gather only (nccl_algo_waiver says so
// for the others). Forced alone, a disabled PAT leaves NCCL no algorithm: a refusal (is_refusal).
inline std::optional<std::string> pat_waiver(std::string_view collective, const InSwitchProbe& p) {
  const NcclOp op = op_of_collective(collective);
  if (op != NcclOp::reducescatter && op != NcclOp::allgather) return std::nullopt;
  for (std::size_t r = 0; r < p.ranks.size(); ++r) {
    if (p.ranks[r].cc_major > 0 && p.ranks[r].cc_major < 6) {
      return fmt::format("NCCL's PAT needs sm_60 or newer GPUs (tuning.cc); rank {} is sm_{}x", r, p.ranks[r].cc_major);
    }
  }
  if (p.pat_enable == "0") return std::string("NCCL_PAT_ENABLE=0 in the environment turns PAT off in NCCL");
  if (p.pat_enable == "1") return std::nullopt;
  int largest = 0;
  const auto per_node = p.ranks_per_node();
  for (const auto& [node, n] : per_node) largest = std::max(largest, n);
  if (largest > 1) {
    return fmt::format(
        "NCCL runs PAT only with one GPU per node (tuning.cc ncclPatEnable: nNodes == nRanks); this communicator has "
        "{} ranks on {} node(s), up to {} on one (use ring; NCCL_PAT_ENABLE=1 overrides NCCL's rule)",
        p.ranks.size(), per_node.size(), largest);
  }
  return std::nullopt;
}

// ---- records ----------------------------------------------------------------------------------

// What a record of an in-switch case adds (docs/results-format.md): the accumulation type of
// collbench's kernels, the modelled bytes each GPU moves per direction (core/in_switch.hpp:
// (1 + 1/m) S for an NVLS-style all-reduce on m GPUs, S for reduce-scatter and all-gather), and
// the reminder that busbw is a ring-equivalent number.
struct InSwitchAccounting {
  std::optional<std::string> accumulation_dtype;
  std::optional<double> wire_bytes_per_gpu;
  std::optional<std::string> busbw_note;
};

inline InSwitchAccounting in_switch_accounting(std::string_view algo, std::string_view collective, Dtype dtype,
                                               double bytes, int comm_ranks) {
  InSwitchAccounting a;
  if (!is_in_switch_algo(algo)) return a;
  if (algo == "cb-multimem" && is_reduction(collective) && multimem_reduces(dtype)) {
    a.accumulation_dtype = "float32";  // .f32, and .acc::f32 for the 16-bit types
  }
  const NcclOp op = op_of_collective(collective);
  if ((algo == "nvls" || algo == "cb-multimem") && comm_ranks > 0) {
    if (op == NcclOp::allreduce) {
      a.wire_bytes_per_gpu = nvls_allreduce_wire_bytes(bytes, comm_ranks);
    } else if (op == NcclOp::reducescatter || op == NcclOp::allgather) {
      a.wire_bytes_per_gpu = nvls_gather_scatter_wire_bytes(bytes);
    }
  }
  if (op == NcclOp::allreduce) {
    a.busbw_note =
        "in-switch reduction: busbw (ring-equivalent, 2(n-1)/n x algbw) can exceed the per-direction link rate; "
        "judge it against the in-switch bound (2(m-1)/(m+1) x link for NVLS all-reduce)";
  }
  return a;
}

}  // namespace collbench::backend::nccl
