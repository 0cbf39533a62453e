// Host-side logic of the NCCL backend that needs neither CUDA nor NCCL headers, so that the
// CPU unit tests (tests/unit/test_nccl_host_*.cpp) check it in every build:
//   - NCCL/CUDA version codes and their strings;
//   - dtype and reduction mapping onto NCCL's enum values (a stable ABI: nccl_backend.cpp
//     static_asserts them against nccl.h) and which dtypes a given NCCL supports;
//   - the --algo names of docs/interfaces.md section 1 -> NCCL_ALGO / NCCL_PROTO (+ the environment
//     a communicator is created under) and what algo_used() can truthfully report;
//   - which answers of NCCL to a collective are refusals (backend::Unsupported), not failures;
//   - --buffers kinds;
//   - the grouped send/recv list of an all-to-all-v.
#pragma once

#include <fmt/format.h>

#include <cctype>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "collbench/backend/backend.hpp"
#include "collbench/core/collective_facts.hpp"
#include "collbench/core/dtype.hpp"
#include "collbench/core/error.hpp"
#include "collbench/core/redop.hpp"

namespace collbench::backend::nccl {

// ---- versions ---------------------------------------------------------------------------------

// NCCL_VERSION(X,Y,Z) of nccl.h: X*1000+Y*100+Z up to 2.8, X*10000+Y*100+Z from 2.9 on.
constexpr int nccl_version_code(int major, int minor, int patch) {
  return (major <= 2 && minor <= 8) ? major * 1000 + minor * 100 + patch : major * 10000 + minor * 100 + patch;
}

inline std::string format_nccl_version(int code) {
  if (code <= 0) return "unknown";
  if (code < 10000) return fmt::format("{}.{}.{}", code / 1000, (code % 1000) / 100, code % 100);
  return fmt::format("{}.{}.{}", code / 10000, (code % 10000) / 100, code % 100);
}

// cudaRuntimeGetVersion / cudaDriverGetVersion: 1000*major + 10*minor (13000 -> "13.0").
inline std::string format_cuda_version(int code) {
  if (code <= 0) return "unknown";
  return fmt::format("{}.{}", code / 1000, (code % 1000) / 10);
}

inline constexpr int kNcclFp8Version = nccl_version_code(2, 24, 0);              // ncclFloat8e4m3/e5m2
inline constexpr int kNcclPerFunctionAlgoVersion = nccl_version_code(2, 24, 0);  // "allreduce:tree"
inline constexpr int kNcclWindowVersion = nccl_version_code(2, 27, 0);           // ncclCommWindowRegister
inline constexpr int kNcclAlltoAllVersion = nccl_version_code(2, 28, 0);         // ncclAlltoAll

// ---- dtypes and reductions ----------------------------------------------------------------------

// ncclDataType_t values (nccl.h).
inline constexpr int kNcclInt32 = 2, kNcclInt64 = 4, kNcclFloat16 = 6, kNcclFloat32 = 7, kNcclFloat64 = 8,
                     kNcclBfloat16 = 9, kNcclFloat8e4m3 = 10, kNcclFloat8e5m2 = 11;

constexpr int nccl_dtype_code(Dtype dtype) {
  switch (dtype) {
    case Dtype::int32:
      return kNcclInt32;
    case Dtype::int64:
      return kNcclInt64;
    case Dtype::float32:
      return kNcclFloat32;
    case Dtype::float64:
      return kNcclFloat64;
    case Dtype::float16:
      return kNcclFloat16;
    case Dtype::bfloat16:
      return kNcclBfloat16;
    case Dtype::float8e4m3:
      return kNcclFloat8e4m3;
    case Dtype::float8e5m2:
      return kNcclFloat8e5m2;
  }
  return -1;
}

// ncclRedOp_t values (nccl.h: sum 0, prod 1, max 2, min 3; note max before min).
constexpr int nccl_redop_code(Redop redop) {
  switch (redop) {
    case Redop::sum:
      return 0;
    case Redop::prod:
      return 1;
    case Redop::max:
      return 2;
    case Redop::min:
      return 3;
  }
  return -1;
}

constexpr bool is_fp8(Dtype d) {
  return d == Dtype::float8e4m3 || d == Dtype::float8e5m2;
}

// Why NCCL cannot run `dtype` here, or nullopt. `header_version`: the nccl.h collbench was built
// against; `runtime_version`: ncclGetVersion(); `cc_major`: the GPU's compute capability major.
inline std::optional<std::string> nccl_dtype_unsupported(Dtype dtype, int header_version, int runtime_version,
                                                         int cc_major, bool reduction) {
  if (!is_fp8(dtype)) return std::nullopt;
  if (header_version < kNcclFp8Version) {
    return fmt::format("dtype {} needs NCCL >= 2.24; collbench was built against NCCL {}", to_string(dtype),
                       format_nccl_version(header_version));
  }
  if (runtime_version < kNcclFp8Version) {
    return fmt::format("dtype {} needs NCCL >= 2.24; the loaded libnccl is {}", to_string(dtype),
                       format_nccl_version(runtime_version));
  }
  if (reduction && cc_major < 9) {
    return fmt::format("NCCL reduces {} only on sm_90 or newer GPUs (this GPU is sm_{}x)", to_string(dtype), cc_major);
  }
  return std::nullopt;
}

// ---- operations and algorithms -------------------------------------------------------------

// The Comm operations, as NCCL names its functions where it has them (core/collective_facts.hpp).
using collbench::NcclOp;

// How a --algo name is realised on NCCL. NCCL reads NCCL_ALGO / NCCL_PROTO when a communicator
// is created (tuning happens in ncclCommInitRank / ncclCommSplit), so each setting needs its own
// communicators: the backend sets `env` around communicator creation and restores it after.
struct AlgoSettings {
  std::string algo;                                            // the collbench name (docs/interfaces.md section 1)
  std::string nccl_algo;                                       // NCCL_ALGO value; empty: leave the environment alone
  std::string nccl_proto;                                      // NCCL_PROTO value; empty: leave the environment alone
  std::vector<std::pair<std::string, std::string>> extra_env;  // e.g. NCCL_COLLNET_ENABLE=1
  std::vector<NcclOp> forced_ops;                              // the operations the forced algorithm applies to
  bool needs_symmetric_buffers = false;                        // `symmetric`: window-registered buffers
};

namespace detail {

struct AlgoRow {
  std::string_view name;
  std::string_view nccl_algo;   // per-function form (NCCL >= 2.24)
  std::string_view plain_algo;  // form older NCCL understands (applies to every function)
  std::string_view nccl_proto;
  std::string_view plain_proto;
  std::vector<NcclOp> ops;
};

inline const std::vector<AlgoRow>& algo_rows() {
  using O = NcclOp;
  // Which NCCL functions support which algorithm (NCCL 2.28 tuning.cc): Ring all five; Tree and
  // NVLSTree all-reduce only; NVLS all-reduce, reduce-scatter, all-gather (Simple protocol
  // only); PAT reduce-scatter and all-gather (Simple, one GPU per node); CollNet all-reduce
  // (Direct, Chain) and reduce-scatter/all-gather (Direct). Forcing an algorithm on a function
  // that lacks it makes NCCL fail ("no algorithm"), hence the per-function form.
  static const std::vector<AlgoRow> kRows{
      {"ring", "ring", "ring", "", "", {O::allreduce, O::reducescatter, O::allgather, O::broadcast}},
      {"tree", "allreduce:tree", "tree", "", "", {O::allreduce}},
      {"nvls",
       "allreduce:nvls;reducescatter:nvls;allgather:nvls",
       "nvls",
       "allreduce:simple;reducescatter:simple;allgather:simple",
       "simple",
       {O::allreduce, O::reducescatter, O::allgather}},
      {"nvlstree", "allreduce:nvlstree", "nvlstree", "allreduce:simple", "simple", {O::allreduce}},
      {"pat",
       "reducescatter:pat;allgather:pat",
       "pat",
       "reducescatter:simple;allgather:simple",
       "simple",
       {O::reducescatter, O::allgather}},
      {"collnet",
       "allreduce:collnetdirect,collnetchain;reducescatter:collnetdirect;allgather:collnetdirect",
       "collnetdirect,collnetchain",
       "",
       "",
       {O::allreduce, O::reducescatter, O::allgather}},
      {"collnet-direct", "allreduce:collnetdirect", "collnetdirect", "", "", {O::allreduce}},
      {"collnet-chain", "allreduce:collnetchain", "collnetchain", "", "", {O::allreduce}},
      // NVLS across nodes runs only with CollNet (NVLS in the node, in-network reduction across).
      {"nvls-collnet", "allreduce:nvls", "nvls", "allreduce:simple", "simple", {O::allreduce}},
  };
  return kRows;
}

}  // namespace detail

// The settings for `algo` on an NCCL of version `runtime_version`. InputError for names that
// are not the nccl backend's. cb-multimem is collbench's own in-switch kernels (multimem_kernels.cu,
// NCCL 2.28 device API), not an NCCL algorithm: no NCCL_ALGO; it needs window-registered buffers
// and runs all-reduce, reduce-scatter and all-gather itself (other operations stay NCCL's).
inline AlgoSettings algo_settings(std::string_view algo, int runtime_version) {
  AlgoSettings s;
  s.algo = std::string(algo);
  if (algo == "auto" || algo == "flat" || algo == "hierarchical") return s;  // NCCL's own choice
  // linear (the MPI backend's posted all-to-all) is how NCCL runs every all-to-all: nothing to force.
  if (algo == "linear") return s;
  if (algo == "symmetric") {
    s.needs_symmetric_buffers = true;  // NCCL picks its symmetric kernels on window buffers
    return s;
  }
  if (algo == "cb-multimem") {
    s.needs_symmetric_buffers = true;  // multimem pointers exist only for symmetric windows
    s.forced_ops = {NcclOp::allreduce, NcclOp::reducescatter, NcclOp::allgather};
    return s;
  }
  const bool per_function = runtime_version >= kNcclPerFunctionAlgoVersion;
  for (const auto& row : detail::algo_rows()) {
    if (row.name != algo) continue;
    s.nccl_algo = std::string(per_function ? row.nccl_algo : row.plain_algo);
    s.nccl_proto = std::string(per_function ? row.nccl_proto : row.plain_proto);
    s.forced_ops = row.ops;
    if (algo.starts_with("collnet") || algo == "nvls-collnet") s.extra_env.emplace_back("NCCL_COLLNET_ENABLE", "1");
    return s;
  }
  throw InputError(
      unknown_name_message("algorithm for --backend nccl", algo,
                           {"auto", "flat", "hierarchical", "ring", "tree", "nvls", "nvlstree", "pat", "collnet",
                            "collnet-direct", "collnet-chain", "nvls-collnet", "symmetric", "cb-multimem", "linear"}));
}

// What algo_used() reports after `op`: the forced algorithm where it applies to that operation
// (NCCL fails rather than silently falling back when only one algorithm is enabled for a
// function, so a forced algorithm that ran is the one used); otherwise empty = unknown (NCCL
// chose; NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=TUNING logs its choice per call).
inline std::string algo_used_for(const AlgoSettings& s, NcclOp op) {
  for (NcclOp forced : s.forced_ops) {
    if (forced == op) return s.algo;
  }
  return {};
}

// ncclResult_t values (nccl.h; a stable ABI: nccl_comm.cpp static_asserts them against nccl.h).
inline constexpr int kNcclResultSuccess = 0, kNcclResultInternalError = 3, kNcclResultInvalidArgument = 4,
                     kNcclResultInvalidUsage = 5;

// Whether NCCL's answer `rc` to ncclDevCommCreate (cb-multimem's device communicator) is a verdict
// every rank reaches alike before any exchange with its peers, so that the runner may agree on it
// as a waiver: no symmetric-memory support (ncclInvalidUsage, checked first in ncclDevCommCreate)
// or multicast asked for where the communicator has none (ncclInvalidArgument, "Multicast support
// requested for team but none available", before the team's handle is broadcast; dev_runtime.cc,
// 2.28.9). Any other answer can come from one rank while its peers wait inside NCCL's bootstrap
// (the multicast group's creation on the team's rank 0, the world barrier after it): a failure
// that ends the job (exit 3), not a waiver that ranks stuck in NCCL could never agree on.
inline constexpr bool devcomm_refusal(int rc) {
  return rc == kNcclResultInvalidUsage || rc == kNcclResultInvalidArgument;
}

// The warning NCCL (enqueue.cc) leaves as its last error when no algorithm/protocol pair is left
// for a call, compared without case: "Error : no algorithm/protocol available" up to 2.29, "No
// algorithm/protocol available" from 2.30, "No algorithm/protocol nor symKernelId available" later.
inline constexpr std::string_view kNcclNoAlgorithmText = "no algorithm/protocol";

// NCCL's answer `rc` to a collective `op` as collbench reads it. With a forced algorithm NCCL
// has no algorithm left for `op` on some communicators (PAT on several GPUs per node, NVLS where
// multicast is off or across nodes, CollNet without a plugin) and says so at the call: a refusal,
// thrown as backend::Unsupported, which the runner waives when every rank refused (run/measure.cpp
// launch_or_refusal); a blocking communicator is unharmed (group.cc groupCleanup sets no async
// error). From 2.24 NCCL answers ncclInvalidUsage when NCCL_ALGO or NCCL_PROTO is in the
// environment at the call (it reads it again there, enqueue.cc), and ncclInternalError with the
// "no algorithm/protocol available" warning otherwise: collbench's case, as it sets NCCL_ALGO only
// while a communicator is created. Before 2.24 it always answered ncclInternalError with that
// warning. NCCL's last error is the thread's latest warning, not cleared by a later success: where
// the warning names its function (2.24 on: "for function AllReduce") it must be `op`'s, so a stale
// refusal of another operation does not turn an unrelated internal error into a waiver. Any other
// answer, and either of these where no algorithm is forced for `op` (collbench's bug: bad
// arguments), is left to the caller as a failure (exit 3). `comm_label` and `nccl_text`
// (nccl_error_text, with NCCL's last error) go into the reason.
inline bool is_refusal(int rc, std::string_view nccl_text, NcclOp op) {
  if (rc == kNcclResultInvalidUsage) return true;
  if (rc != kNcclResultInternalError) return false;
  std::string lower(nccl_text);
  for (char& ch : lower) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
  const std::size_t at = lower.find(kNcclNoAlgorithmText);
  if (at == std::string::npos) return false;
  constexpr std::string_view kFunction = "for function ";
  const std::size_t fn = lower.find(kFunction, at);
  if (fn == std::string::npos) return true;  // NCCL before 2.24 does not name it
  const std::size_t begin = fn + kFunction.size();
  std::size_t end = begin;
  while (end < lower.size() && std::isalpha(static_cast<unsigned char>(lower[end])) != 0) ++end;
  return std::string_view(lower).substr(begin, end - begin) == to_string(op);  // AllReduce: allreduce
}

inline void throw_if_refused(int rc, const AlgoSettings& s, NcclOp op, std::string_view comm_label,
                             std::string_view nccl_text) {
  if (!is_refusal(rc, nccl_text, op) || algo_used_for(s, op).empty()) return;
  throw Unsupported(fmt::format("NCCL refused {} with --algo {} (NCCL_ALGO={}) on communicator {}: {}", to_string(op),
                                s.algo, s.nccl_algo, comm_label, nccl_text));
}

// The operation a collective family runs on a Comm (MoE dispatch/combine are all-to-all-v).
inline NcclOp op_of_collective(std::string_view collective) {
  const CollectiveFacts* f = find_collective_facts(collective);
  return f ? f->nccl_op : NcclOp::none;
}

// Why a case with --backend nccl --algo `algo` should be waived (a record with the reason, not a
// run), or nullopt. A forced NCCL algorithm that NCCL does not implement for the collective
// would leave NCCL's own choice in place, so the case would silently measure `auto` under
// another name. For the runner's algo_waiver; pure, so usable in every build.
inline std::optional<std::string> nccl_algo_waiver(std::string_view algo, std::string_view collective) {
  if (algo == "cb-multimem") {
    const NcclOp op = op_of_collective(collective);
    if (op == NcclOp::allreduce || op == NcclOp::reducescatter || op == NcclOp::allgather) return std::nullopt;
    return fmt::format(
        "cb-multimem (collbench's in-switch kernels) implements allreduce, reducescatter and "
        "allgather, not {}",
        collective);
  }
  if (algo == "auto" || algo == "flat" || algo == "hierarchical" || algo == "symmetric") return std::nullopt;
  const NcclOp op = op_of_collective(collective);
  if (algo == "linear") {
    if (op == NcclOp::alltoall || op == NcclOp::alltoallv) return std::nullopt;
    return fmt::format("linear is an all-to-all schedule (NCCL's own for alltoall, alltoallv and MoE); {} runs none",
                       collective);
  }
  if (const CollectiveFacts* f = find_collective_facts(collective); f != nullptr && f->nccl_p2p) {
    return fmt::format(
        "--algo {} selects an NCCL collective algorithm; {} runs on NCCL's point-to-point "
        "transport, which NCCL_ALGO does not affect (use --algo auto)",
        algo, collective);
  }
  const AlgoSettings s = algo_settings(algo, kNcclPerFunctionAlgoVersion);
  if (op == NcclOp::none || algo_used_for(s, op).empty()) {
    std::string supported;
    for (NcclOp o : s.forced_ops) supported += (supported.empty() ? "" : ", ") + std::string(to_string(o));
    return fmt::format("NCCL implements {} only for {}, not for {}", algo, supported, collective);
  }
  return std::nullopt;
}

// One environment change made while a communicator is created.
struct EnvChange {
  std::string name;
  std::string value;
};

inline std::vector<EnvChange> algo_env(const AlgoSettings& s) {
  std::vector<EnvChange> env;
  if (!s.nccl_algo.empty()) env.push_back({"NCCL_ALGO", s.nccl_algo});
  if (!s.nccl_proto.empty()) env.push_back({"NCCL_PROTO", s.nccl_proto});
  for (const auto& [name, value] : s.extra_env) env.push_back({name, value});
  return env;
}

// The environment every communicator is created under: the algorithm's (algo_env), and
// NCCL_COMM_BLOCKING=1. The backend asks for blocking mode in ncclConfig_t.blocking, but NCCL lets
// the environment override that field (NCCL 2.28 src/init.cc envConfigOverride), and a user's
// NCCL_COMM_BLOCKING=0 would make init, split, window registration and device-communicator
// creation return ncclInProgress. NCCL reads the variable once, at the first communicator.
inline std::vector<EnvChange> comm_creation_env(const AlgoSettings& s) {
  std::vector<EnvChange> env = algo_env(s);
  env.push_back({"NCCL_COMM_BLOCKING", "1"});
  return env;
}

// ncclConfig_t.splitShare (NCCL >= 2.18, nccl.h): a communicator created with it lets the
// communicators split from it share its internal resources (proxy, channel peers, internal
// streams) instead of each allocating its own; NCCL looks at the parent's setting (init.cc
// ncclCommSplit), so every communicator is created with it (the world, and each split, whose own
// splits are EP groups), except the world of a set whose family runs two splits at once
// (ep-dp-concurrent, BackendOptions::share_split_resources): shared resources include NCCL's
// internal device stream, which every kernel launch on any of the communicators waits for and
// advances (2.28 enqueue.cc), so their operations could not overlap. PyTorch turns sharing off
// for the same reason (pytorch/pytorch#130857). Older libraries do not know the field: it is left
// unset. NCCL_COMM_SPLIT_SHARE_RESOURCES in the environment overrides it (init.cc
// envConfigOverride).
inline constexpr int kNcclSplitShareVersion = nccl_version_code(2, 18, 0);
inline bool nccl_split_share(int runtime_version) {
  return runtime_version >= kNcclSplitShareVersion;
}

// ---- the device barrier -----------------------------------------------------------------------

// One round of the dissemination barrier (Hensgen, Finkel and Manber 1988) that
// Backend::device_barrier enqueues on the world communicator: rank r sends one element to
// r + d and receives one from r - d (mod n), d = 1, 2, 4, ... < n. After round k every rank has
// heard, through a chain of receives, from the 2^(k+1) - 1 ranks before it, so after the
// ceil(log2 n) rounds the last receive of each rank completes only once every rank has started
// the barrier. Point-to-point calls, not an all-reduce: NCCL_ALGO, which a forced --algo sets on
// the world communicator, does not apply to them, so the barrier runs where the forced algorithm
// has no all-reduce (NVLS across nodes, CollNet without a plugin).
struct BarrierRound {
  int send_to = 0;
  int recv_from = 0;
};

inline std::vector<BarrierRound> dissemination_rounds(int rank, int n) {
  std::vector<BarrierRound> rounds;
  for (int d = 1; d < n; d *= 2) rounds.push_back({(rank + d) % n, ((rank - d) % n + n) % n});
  return rounds;
}

// ---- buffers --------------------------------------------------------------------------------

enum class BufferKind { plain, registered, symmetric };

constexpr std::string_view to_string(BufferKind k) {
  switch (k) {
    case BufferKind::plain:
      return "plain";
    case BufferKind::registered:
      return "registered";
    case BufferKind::symmetric:
      return "symmetric";
  }
  return "plain";
}

inline BufferKind parse_buffer_kind_for_nccl(std::string_view name, const AlgoSettings& algo) {
  BufferKind kind = BufferKind::plain;
  if (name == "plain") {
    kind = BufferKind::plain;
  } else if (name == "registered") {
    kind = BufferKind::registered;
  } else if (name == "symmetric") {
    kind = BufferKind::symmetric;
  } else if (name == "host") {
    throw InputError(
        "--buffers host is not available on the nccl backend (NCCL moves GPU memory); accepted: plain (cudaMalloc), "
        "registered (ncclMemAlloc + ncclCommRegister), symmetric (ncclCommWindowRegister)");
  } else {
    throw InputError(
        unknown_name_message("buffer kind for --backend nccl", name, {"plain", "registered", "symmetric"}));
  }
  if (algo.needs_symmetric_buffers && kind != BufferKind::symmetric) {
    throw InputError(fmt::format(
        "--algo {} runs {}, which need window-registered buffers: use --buffers symmetric (got --buffers {})",
        algo.algo, algo.algo == "cb-multimem" ? "collbench's multimem kernels" : "NCCL's symmetric kernels", name));
  }
  return kind;
}

// The buffer kind a case gets when none was asked for: window-registered (symmetric) for the
// algorithms that need it, plain cudaMalloc memory otherwise.
inline std::string default_nccl_buffers(std::string_view algo) {
  return algo == "symmetric" || algo == "cb-multimem" ? "symmetric" : "plain";
}

// Symmetric windows: every rank registers the same size (NCCL maps the windows at the same
// offset on every rank), rounded up to NCCL_WIN_REQUIRED_ALIGNMENT (4096).
constexpr std::size_t symmetric_bytes(std::size_t max_bytes_over_ranks) {
  constexpr std::size_t kAlign = 4096;
  const std::size_t b = max_bytes_over_ranks == 0 ? 1 : max_bytes_over_ranks;
  return (b + kAlign - 1) / kAlign * kAlign;
}

// ---- all-to-all-v -----------------------------------------------------------------------------

// One ncclSend or ncclRecv of a grouped exchange, in elements.
struct P2pOp {
  int peer = 0;
  bool send = false;
  std::size_t offset_elems = 0;
  std::size_t count = 0;

  friend bool operator==(const P2pOp&, const P2pOp&) = default;
};

// The grouped send/recv list of an all-to-all-v on `num_ranks` ranks. Zero-count pairs are left
// out on both sides (the sender's count to r is r's count from the sender, so both skip).
// Peers are visited starting at this rank's neighbours (rank+i), as nccl-tests does, so that
// ranks do not all target rank 0 first. Throws when the spans do not have one entry per rank.
inline std::vector<P2pOp> alltoallv_ops(int rank, int num_ranks, std::span<const std::size_t> send_counts,
                                        std::span<const std::size_t> send_displs,
                                        std::span<const std::size_t> recv_counts,
                                        std::span<const std::size_t> recv_displs) {
  const auto n = static_cast<std::size_t>(num_ranks);
  if (send_counts.size() != n || send_displs.size() != n || recv_counts.size() != n || recv_displs.size() != n) {
    throw InputError(
        fmt::format("all-to-all-v on {} ranks needs one count and displacement per rank (got send {}/{}, "
                    "recv {}/{})",
                    num_ranks, send_counts.size(), send_displs.size(), recv_counts.size(), recv_displs.size()));
  }
  std::vector<P2pOp> ops;
  ops.reserve(2 * n);
  for (int i = 0; i < num_ranks; ++i) {
    const int to = (rank + i) % num_ranks;
    const int from = (rank - i + num_ranks) % num_ranks;
    const auto t = static_cast<std::size_t>(to);
    const auto f = static_cast<std::size_t>(from);
    if (send_counts[t] > 0) ops.push_back({to, true, send_displs[t], send_counts[t]});
    if (recv_counts[f] > 0) ops.push_back({from, false, recv_displs[f], recv_counts[f]});
  }
  return ops;
}

// ---- device selection -------------------------------------------------------------------------

// The GPU of a rank: its local rank (MPI shared-memory split), one rank per GPU. When the
// launcher bound one GPU to each process (srun --gpus-per-task=1, one GPU per pod;
// core/launcher.hpp launcher_bound_one_gpu_per_rank), each process sees one GPU and uses it.
// nullopt with `why` set when there is none.
inline std::optional<int> device_for_local_rank(int local_rank, int ranks_on_host, int device_count, std::string& why,
                                                bool launcher_bound = false) {
  if (device_count <= 0) {
    why = "no CUDA device is visible";
    return std::nullopt;
  }
  if (launcher_bound && device_count == 1) return 0;
  if (local_rank >= device_count) {
    why = fmt::format(
        "this host runs {} ranks but only {} GPU(s) are visible (local rank {}); the nccl backend "
        "runs one rank per GPU",
        ranks_on_host, device_count, local_rank);
    return std::nullopt;
  }
  return local_rank;
}

}  // namespace collbench::backend::nccl
