// all-to-all-v with a fixed, deterministic imbalance: rank s sends w(s,d) = 1 + ((s + 2d) mod 3)
// units to rank d, so send and receive totals differ between ranks. S (bytes, nccl-tests
// convention) = the max over ranks of send or receive total; busbw = algbw x (n-1)/n. The record
// also carries bytes_logical_total = bytes sent by all ranks together. (MoE all-to-all-v with
// generated routing is the moe-* family.)
#include <algorithm>

#include "collbench/coll/collective.hpp"
#include "collbench/coll/family_helpers.hpp"
#include "collbench/coll/pattern.hpp"

namespace collbench::coll {
namespace {

constexpr std::uint64_t weight(int src, int dst) {
  return 1 + static_cast<std::uint64_t>((src + 2 * dst) % 3);
}

class AllToAllV final : public Collective {
 public:
  AllToAllV() : Collective(CollectiveId::alltoallv) {}
  [[nodiscard]] std::string_view description() const override {
    return "all-to-all-v, deterministic 1:2:3 imbalance between peers";
  }

  [[nodiscard]] Shape shape(std::uint64_t requested_bytes, Dtype dtype, int rank, int n) const override {
    const std::uint64_t elem = dtype_size(dtype);
    std::uint64_t max_total_weight = 0;
    std::uint64_t all_weight = 0;
    for (int r = 0; r < n; ++r) {
      std::uint64_t send_w = 0;
      std::uint64_t recv_w = 0;
      for (int p = 0; p < n; ++p) {
        send_w += weight(r, p);
        recv_w += weight(p, r);
      }
      all_weight += send_w;
      max_total_weight = std::max({max_total_weight, send_w, recv_w});
    }
    const std::uint64_t unit = requested_bytes / elem / max_total_weight;  // elements per weight unit
    Shape s;
    s.count = unit * max_total_weight;
    s.bytes = s.count * elem;
    s.bytes_max_rank = s.bytes;
    s.bytes_logical_total = unit * all_weight * elem;
    s.send_counts.resize(static_cast<std::size_t>(n));
    s.send_displs.resize(static_cast<std::size_t>(n));
    s.recv_counts.resize(static_cast<std::size_t>(n));
    s.recv_displs.resize(static_cast<std::size_t>(n));
    std::size_t send_off = 0;
    std::size_t recv_off = 0;
    for (int p = 0; p < n; ++p) {
      const auto idx = static_cast<std::size_t>(p);
      s.send_counts[idx] = unit * weight(rank, p);
      s.recv_counts[idx] = unit * weight(p, rank);
      s.send_displs[idx] = send_off;
      s.recv_displs[idx] = recv_off;
      send_off += s.send_counts[idx];
      recv_off += s.recv_counts[idx];
    }
    s.send_elems = send_off;
    s.recv_elems = recv_off;
    s.bytes_per_rank_send = send_off * elem;
    s.bytes_per_rank_recv = recv_off * elem;
    return s;
  }

  void fill(void* host_send, const Shape& s, const CaseContext& ctx) const override {
    for (int dst = 0; dst < ctx.num_ranks; ++dst) {
      const auto idx = static_cast<std::size_t>(dst);
      for (std::size_t i = 0; i < s.send_counts[idx]; ++i) {
        store_element(host_send, s.send_displs[idx] + i, ctx.dtype, move_value(ctx.dtype, ctx.rank, dst, i));
      }
    }
  }

  [[nodiscard]] std::uint64_t verify(const void* result, const Shape& s, const CaseContext& ctx) const override {
    const auto elem = dtype_size(ctx.dtype);
    std::uint64_t wrong = 0;
    for (int src = 0; src < ctx.num_ranks; ++src) {
      const auto idx = static_cast<std::size_t>(src);
      const auto* block = static_cast<const char*>(result) + s.recv_displs[idx] * elem;
      wrong += count_wrong_moved(block, s.recv_counts[idx], ctx.dtype, src, ctx.rank, 0);
    }
    return wrong;
  }

  void launch(backend::Comm& comm, const void* send, void* recv, const Shape& s,
              const CaseContext& ctx) const override {
    const backend::PeerLayout peers{s.send_counts, s.send_displs, s.recv_counts, s.recv_displs};
    comm.run({.op = NcclOp::alltoallv, .dtype = ctx.dtype, .send = send, .recv = recv, .peers = &peers});
  }
};

}  // namespace

namespace {
const bool kAlltoallvRegistered =
    register_collective([] { return std::unique_ptr<Collective>(std::make_unique<AllToAllV>()); });
}  // namespace

}  // namespace collbench::coll
