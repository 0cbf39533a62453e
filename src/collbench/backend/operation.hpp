// One library operation, described once: what a collective family launches and what every
// backend implements through a single entry (Comm::run, Comm::bind). Which operation it is comes
// from the fact table (CollectiveFacts::nccl_op, core/collective_facts.hpp); a backend looks the
// operation up in its own table of handlers (OpTable below) instead of declaring a virtual per
// operation, so a new collective adds a row to each backend's table and no interface changes.
//
// The fields each operation reads (counts in elements; the conventions are NCCL's):
//
//   op             count                      in place                            also
//   allreduce      elements                   send == recv                        redop
//   reducescatter  per-rank output            send == recv (the n x count input;  redop
//                                             result at Comm::reduce_scatter_in_place_offset)
//   allgather      per-rank input             send == recv + rank x count
//   broadcast      elements                   send == recv                        root
//   alltoall       per peer                   send == recv
//   alltoallv      (peers)                    never                               peers
//   sendrecv       elements                   never                               send_peer, recv_peer
#pragma once

#include <array>
#include <cstddef>
#include <initializer_list>
#include <span>
#include <string_view>
#include <utility>

#include "collbench/backend/bound_call.hpp"
#include "collbench/core/collective_facts.hpp"
#include "collbench/core/dtype.hpp"
#include "collbench/core/redop.hpp"

namespace collbench::backend {

// All-to-all-v: this rank's per-peer counts and displacements, in elements, one entry per peer.
struct PeerLayout {
  std::span<const std::size_t> send_counts, send_displs, recv_counts, recv_displs;
};

struct Operation {
  NcclOp op = NcclOp::none;
  Dtype dtype = Dtype::float32;
  Redop redop = Redop::sum;
  int root = 0;
  int send_peer = 0;
  int recv_peer = 0;
  const void* send = nullptr;
  void* recv = nullptr;
  std::size_t count = 0;
  const PeerLayout* peers = nullptr;  // alltoallv; must outlive the call (and a bound call)
};

// A backend's implementation of one operation: `run` issues it; `bind`, when set, binds it once
// to its arguments in a faster form than the default (Comm::bind: run() through a bound call).
template <class Impl>
struct OpHandlers {
  void (Impl::*run)(const Operation&) = nullptr;
  BoundCall (Impl::*bind)(const Operation&) = nullptr;
};

// A backend's handlers, indexed by operation. A missing operation is nullptr from find(); the
// backend refuses it with its own words (the hierarchical algorithm: "does not implement ...").
template <class Impl>
class OpTable {
 public:
  static constexpr std::size_t kNumOps = facts_detail::kOpNames.size();

  constexpr OpTable(std::initializer_list<std::pair<NcclOp, OpHandlers<Impl>>> entries) {
    for (const auto& [op, handlers] : entries) table_[static_cast<std::size_t>(op)] = handlers;
  }
  [[nodiscard]] constexpr const OpHandlers<Impl>* find(NcclOp op) const {
    const auto i = static_cast<std::size_t>(op);
    return i < kNumOps && table_[i].run != nullptr ? &table_[i] : nullptr;
  }

 private:
  std::array<OpHandlers<Impl>, kNumOps> table_{};
};

}  // namespace collbench::backend
