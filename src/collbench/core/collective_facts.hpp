// One table of facts per collective (docs/interfaces.md section 1): the name records and case
// keys carry, what `bytes` counts, the busbw factor, the buffers a case needs, the library
// operation it runs, how the model plans it, nccl-tests' program, whether it reduces or has a
// root, and what knows it (the collective registry, the model, nccl-tests, the step model). coll, model, plan, record,
// the NCCL host logic and the CLI look facts up here instead of comparing names; the `collective` enum of the results
// schema lists exactly these names (tests/unit/test_collective_facts.cpp checks it).
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace collbench {

enum class CollectiveId : std::uint8_t {
  allreduce,
  reducescatter,
  allgather,
  alltoall,
  alltoallv,
  broadcast,
  sendrecv,
  moe_dispatch,
  moe_combine,
  moe_roundtrip,
  ep_dp_concurrent,
  reduce,
  gather,
  scatter,
};

// busbw = algbw x factor(n), n = the communicator's rank count (nccl-tests conventions,
// docs/hardware-context.md section 3).
enum class BusbwRule : std::uint8_t {
  two_n_minus_1_over_n,  // all-reduce: 2(n-1)/n
  n_minus_1_over_n,      // reduce-scatter, all-gather, all-to-all(v): (n-1)/n
  one,                   // broadcast, reduce, sendrecv
  none,                  // 0: no single bus bandwidth (ep-dp-concurrent is judged on time)
};

// The buffers a case of `bytes` S needs, for estimates before the shape is known.
enum class BufferRule : std::uint8_t {
  full_each,       // send and receive buffers of up to S each (one of S in place)
  full_and_chunk,  // one buffer of S, the other S/n (reduce-scatter's output, all-gather's input)
};

// The operation a collective runs on one communicator, as NCCL names its functions (MoE
// dispatch/combine are all-to-all-v); none for families made of several operations at once.
// Every backend implements the operations through one entry (backend::Comm::run), dispatched on
// this value.
enum class NcclOp : std::uint8_t {
  none,
  allreduce,
  reducescatter,
  allgather,
  broadcast,
  alltoall,
  alltoallv,
  sendrecv,
  reduce,
  gather,
  scatter,
};

namespace facts_detail {
// NcclOp's names, in its order (to_string(NcclOp)).
inline constexpr std::array<std::string_view, 11> kOpNames{"none",      "allreduce", "reducescatter", "allgather",
                                                           "broadcast", "alltoall",  "alltoallv",     "sendrecv",
                                                           "reduce",    "gather",    "scatter"};
}  // namespace facts_detail

std::string_view to_string(NcclOp op);

// How the analytic model plans a case (model/algorithm_plans.cpp picks the plan family from
// this; docs/model.md derives each one).
enum class ModelPlan : std::uint8_t {
  none,             // not modelled per case (MoE: from the routing's traffic matrix; ep-dp-concurrent)
  allreduce,        // ring, tree, NVLS, CollNet, hierarchical
  ring_chunks,      // reduce-scatter, all-gather: ring, NVLS, hierarchical
  exchange,         // all-to-all(v): every pair, flat or hierarchical
  rooted_pipeline,  // broadcast, reduce: a ring pipeline from (or to) the root
  point_to_point,   // send/recv pairs
  rooted_direct,    // gather, scatter: every rank's chunk straight to (from) the root
};

// Which step-model parallel groups a collective's overlap records can stand for
// (step/overlap_source.cpp): the rank of preference inside each group, 0 = not used.
struct StepUse {
  std::uint8_t ep = 0;
  std::uint8_t tp = 0;
  std::uint8_t pp = 0;
  std::uint8_t dp = 0;
};

struct CollectiveFacts {
  CollectiveId id;
  std::string_view name;              // in records, case keys and on the command line
  std::string_view bytes_convention;  // what `bytes` means (run --list, docs)
  BusbwRule busbw = BusbwRule::one;
  BufferRule buffers = BufferRule::full_each;
  NcclOp nccl_op = NcclOp::none;
  ModelPlan model = ModelPlan::none;
  std::string_view nccl_tests_binary = {};  // nccl-tests' program (all_reduce_perf), empty when it has none
  bool reduces = false;                     // takes a reduction (-o/--redop)
  bool in_place = false;                    // can run in place
  bool runs = false;                        // collbench runs it (a family registers it, coll/registry.cpp)
  bool rooted = false;                      // has a root rank (-r/--root; records carry `root`)
  bool moe = false;       // an MoE exchange: sized by a workload's routing (--workload/--tokens), not -b/-e
  bool nccl_p2p = false;  // NCCL runs it on its point-to-point transport (ncclSend/ncclRecv): NCCL_ALGO has no say
  StepUse step = {};
  bool modelled = false;    // derived: model != ModelPlan::none
  bool nccl_tests = false;  // derived: nccl-tests has it, so its logs import into records of this collective
};

namespace facts_detail {

inline constexpr std::string_view kIrregularBytes = "max over ranks of send or receive total (bytes_max_rank)";
inline constexpr std::string_view kMoeBytes =
    "max over ranks of send or receive total (bytes_max_rank) for the workload's routing; set by "
    "--workload/--tokens (-b/-e do not apply)";

// A row with its derived fields filled in.
constexpr CollectiveFacts row(CollectiveFacts f) {
  f.modelled = f.model != ModelPlan::none;
  f.nccl_tests = !f.nccl_tests_binary.empty();
  return f;
}

using B = BusbwRule;
using Buf = BufferRule;
using Op = NcclOp;
using Id = CollectiveId;
using M = ModelPlan;

// One row per collective, in the order of the results schema's `collective` enum. A new
// collective is a row here, its family file in coll/ and its operation in each backend
// (docs/architecture.md, "Adding a collective").
inline constexpr std::array kCollectiveFacts{
    row({.id = Id::allreduce,
         .name = "allreduce",
         .bytes_convention = "per-rank buffer",
         .busbw = B::two_n_minus_1_over_n,
         .nccl_op = Op::allreduce,
         .model = M::allreduce,
         .nccl_tests_binary = "all_reduce_perf",
         .reduces = true,
         .in_place = true,
         .runs = true,
         .step = {.tp = 3, .dp = 3}}),
    row({.id = Id::reducescatter,
         .name = "reducescatter",
         .bytes_convention = "total input per rank (n x chunk)",
         .busbw = B::n_minus_1_over_n,
         .buffers = Buf::full_and_chunk,
         .nccl_op = Op::reducescatter,
         .model = M::ring_chunks,
         .nccl_tests_binary = "reduce_scatter_perf",
         .reduces = true,
         .in_place = true,
         .runs = true,
         .step = {.tp = 2, .dp = 1}}),
    row({.id = Id::allgather,
         .name = "allgather",
         .bytes_convention = "total output per rank (n x chunk)",
         .busbw = B::n_minus_1_over_n,
         .buffers = Buf::full_and_chunk,
         .nccl_op = Op::allgather,
         .model = M::ring_chunks,
         .nccl_tests_binary = "all_gather_perf",
         .in_place = true,
         .runs = true,
         .step = {.tp = 1, .dp = 2}}),
    row({.id = Id::alltoall,
         .name = "alltoall",
         .bytes_convention = "per-rank send total (n x per-peer block)",
         .busbw = B::n_minus_1_over_n,
         .nccl_op = Op::alltoall,
         .model = M::exchange,
         .nccl_tests_binary = "alltoall_perf",
         .in_place = true,
         .runs = true,
         .nccl_p2p = true,
         .step = {.ep = 4}}),
    row({.id = Id::alltoallv,
         .name = "alltoallv",
         .bytes_convention = kIrregularBytes,
         .busbw = B::n_minus_1_over_n,
         .nccl_op = Op::alltoallv,
         .model = M::exchange,
         .nccl_tests_binary = "alltoallv_perf",
         .runs = true,
         .nccl_p2p = true,
         .step = {.ep = 5}}),
    row({.id = Id::broadcast,
         .name = "broadcast",
         .bytes_convention = "buffer",
         .nccl_op = Op::broadcast,
         .model = M::rooted_pipeline,
         .nccl_tests_binary = "broadcast_perf",
         .in_place = true,
         .runs = true,
         .rooted = true}),
    row({.id = Id::sendrecv,
         .name = "sendrecv",
         .bytes_convention = "buffer",
         .nccl_op = Op::sendrecv,
         .model = M::point_to_point,
         .nccl_tests_binary = "sendrecv_perf",
         .runs = true,
         .nccl_p2p = true,
         .step = {.pp = 1}}),
    row({.id = Id::moe_dispatch,
         .name = "moe-dispatch",
         .bytes_convention = kMoeBytes,
         .busbw = B::n_minus_1_over_n,
         .nccl_op = Op::alltoallv,
         .runs = true,
         .moe = true,
         .nccl_p2p = true,
         .step = {.ep = 2}}),
    row({.id = Id::moe_combine,
         .name = "moe-combine",
         .bytes_convention = kMoeBytes,
         .busbw = B::n_minus_1_over_n,
         .nccl_op = Op::alltoallv,
         .runs = true,
         .moe = true,
         .nccl_p2p = true,
         .step = {.ep = 3}}),
    row({.id = Id::moe_roundtrip,
         .name = "moe-roundtrip",
         .bytes_convention = kMoeBytes,
         .busbw = B::n_minus_1_over_n,
         .nccl_op = Op::alltoallv,
         .runs = true,
         .moe = true,
         .nccl_p2p = true,
         .step = {.ep = 1}}),
    row({.id = Id::reduce,
         .name = "reduce",
         .bytes_convention = "buffer",
         .nccl_op = Op::reduce,
         .model = M::rooted_pipeline,
         .nccl_tests_binary = "reduce_perf",
         .reduces = true,
         .in_place = true,
         .runs = true,
         .rooted = true}),
    row({.id = Id::ep_dp_concurrent,
         .name = "ep-dp-concurrent",
         .bytes_convention = "per-rank all-to-all send total inside the domain; the all-reduce buffer is dp_bytes "
                             "(default the same)",
         .busbw = B::none,
         .reduces = true,
         .in_place = true,
         .runs = true}),
    row({.id = Id::gather,
         .name = "gather",
         .bytes_convention = "total output at the root (n x chunk)",
         .busbw = B::n_minus_1_over_n,
         .buffers = Buf::full_and_chunk,
         .nccl_op = Op::gather,
         .model = M::rooted_direct,
         .nccl_tests_binary = "gather_perf",
         .in_place = true,
         .runs = true,
         .rooted = true,
         .nccl_p2p = true}),
    row({.id = Id::scatter,
         .name = "scatter",
         .bytes_convention = "total input at the root (n x chunk)",
         .busbw = B::n_minus_1_over_n,
         .buffers = Buf::full_and_chunk,
         .nccl_op = Op::scatter,
         .model = M::rooted_direct,
         .nccl_tests_binary = "scatter_perf",
         .in_place = true,
         .runs = true,
         .rooted = true,
         .nccl_p2p = true}),
};

}  // namespace facts_detail

// Every collective, in the order of the results schema's enum.
std::span<const CollectiveFacts> all_collective_facts();

const CollectiveFacts& collective_facts(CollectiveId id);
// nullptr for a name no collective has.
const CollectiveFacts* find_collective_facts(std::string_view name);
std::optional<CollectiveId> collective_id(std::string_view name);
// True for an MoE exchange (CollectiveFacts::moe); false for any other name.
inline bool is_moe_collective(std::string_view name) {
  const CollectiveFacts* f = find_collective_facts(name);
  return f != nullptr && f->moe;
}
std::string_view to_string(CollectiveId id);

constexpr double busbw_factor(BusbwRule rule, int n) {
  switch (rule) {
    case BusbwRule::two_n_minus_1_over_n:
      return n > 0 ? 2.0 * (n - 1) / n : 0.0;
    case BusbwRule::n_minus_1_over_n:
      return n > 0 ? (n - 1.0) / n : 0.0;
    case BusbwRule::one:
      return 1.0;
    case BusbwRule::none:
      return 0.0;
  }
  return 0.0;
}
inline double busbw_factor(CollectiveId id, int num_ranks) {
  return busbw_factor(collective_facts(id).busbw, num_ranks);
}

// The names of the collectives with a fact set (e.g. &CollectiveFacts::modelled), in table order.
std::vector<std::string> collective_names_where(bool CollectiveFacts::*fact);

}  // namespace collbench
