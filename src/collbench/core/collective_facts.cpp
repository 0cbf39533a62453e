#include "collbench/core/collective_facts.hpp"

#include <array>

namespace collbench {
namespace {

using B = BusbwRule;
using Buf = BufferRule;
using Op = NcclOp;
using Id = CollectiveId;

constexpr std::string_view kIrregularBytes = "max over ranks of send or receive total (bytes_max_rank)";
constexpr std::string_view kMoeBytes =
    "max over ranks of send or receive total (bytes_max_rank) for the workload's routing; set by "
    "--workload/--tokens (-b/-e do not apply)";

// One row per collective: id, name, bytes convention, busbw, buffers, NCCL op, reduces, in place,
// runs, modelled, nccl-tests.
constexpr std::array kFacts{
    CollectiveFacts{Id::allreduce, "allreduce", "per-rank buffer", B::two_n_minus_1_over_n, Buf::full_each,
                    Op::allreduce, true, true, true, true, true},
    CollectiveFacts{Id::reducescatter, "reducescatter", "total input per rank (n x chunk)", B::n_minus_1_over_n,
                    Buf::full_and_chunk, Op::reducescatter, true, true, true, true, true},
    CollectiveFacts{Id::allgather, "allgather", "total output per rank (n x chunk)", B::n_minus_1_over_n,
                    Buf::full_and_chunk, Op::allgather, false, true, true, true, true},
    CollectiveFacts{Id::alltoall, "alltoall", "per-rank send total (n x per-peer block)", B::n_minus_1_over_n,
                    Buf::full_each, Op::alltoall, false, true, true, true, true},
    CollectiveFacts{Id::alltoallv, "alltoallv", kIrregularBytes, B::n_minus_1_over_n, Buf::full_each, Op::alltoallv,
                    false, false, true, true, true},
    CollectiveFacts{Id::broadcast, "broadcast", "buffer", B::one, Buf::full_each, Op::broadcast, false, true, true,
                    true, true},
    CollectiveFacts{Id::sendrecv, "sendrecv", "buffer", B::one, Buf::full_each, Op::sendrecv, false, false, true, true,
                    true},
    CollectiveFacts{Id::moe_dispatch, "moe-dispatch", kMoeBytes, B::n_minus_1_over_n, Buf::full_each, Op::alltoallv,
                    false, false, true, false, false},
    CollectiveFacts{Id::moe_combine, "moe-combine", kMoeBytes, B::n_minus_1_over_n, Buf::full_each, Op::alltoallv,
                    false, false, true, false, false},
    CollectiveFacts{Id::moe_roundtrip, "moe-roundtrip", kMoeBytes, B::n_minus_1_over_n, Buf::full_each, Op::alltoallv,
                    false, false, true, false, false},
    CollectiveFacts{Id::reduce, "reduce", "buffer", B::one, Buf::full_each, Op::none, true, true, false, false, true},
    CollectiveFacts{Id::ep_dp_concurrent, "ep-dp-concurrent",
                    "per-rank all-to-all send total inside the domain; the all-reduce buffer is dp_bytes (default the "
                    "same)",
                    B::none, Buf::full_each, Op::none, true, true, true, false, false},
};

}  // namespace

std::span<const CollectiveFacts> all_collective_facts() {
  return kFacts;
}

const CollectiveFacts& collective_facts(CollectiveId id) {
  for (const auto& f : kFacts) {
    if (f.id == id) return f;
  }
  return kFacts.front();  // unreachable: every id has a row (test_collective_facts.cpp)
}

const CollectiveFacts* find_collective_facts(std::string_view name) {
  for (const auto& f : kFacts) {
    if (f.name == name) return &f;
  }
  return nullptr;
}

std::optional<CollectiveId> collective_id(std::string_view name) {
  const CollectiveFacts* f = find_collective_facts(name);
  return f ? std::optional<CollectiveId>(f->id) : std::nullopt;
}

std::string_view to_string(CollectiveId id) {
  return collective_facts(id).name;
}

double busbw_factor(BusbwRule rule, int n) {
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

std::vector<std::string> collective_names_where(bool CollectiveFacts::*fact) {
  std::vector<std::string> out;
  for (const auto& f : kFacts) {
    if (f.*fact) out.emplace_back(f.name);
  }
  return out;
}

std::string_view to_string(NcclOp op) {
  switch (op) {
    case NcclOp::none:
      return "none";
    case NcclOp::allreduce:
      return "allreduce";
    case NcclOp::reducescatter:
      return "reducescatter";
    case NcclOp::allgather:
      return "allgather";
    case NcclOp::broadcast:
      return "broadcast";
    case NcclOp::alltoall:
      return "alltoall";
    case NcclOp::alltoallv:
      return "alltoallv";
    case NcclOp::sendrecv:
      return "sendrecv";
  }
  return "none";
}

}  // namespace collbench
