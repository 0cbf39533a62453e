// all-to-all: S = per-rank send total (n blocks of S/n); busbw = algbw x (n-1)/n. nccl-tests
// convention: S is per rank, not per peer (OSU and IMB give the per-peer size).
#include "collbench/coll/collective.hpp"
#include "collbench/coll/family_helpers.hpp"
#include "collbench/coll/pattern.hpp"

namespace collbench::coll {
namespace {

class AllToAll final : public Collective {
 public:
  AllToAll() : Collective(CollectiveId::alltoall) {}
  [[nodiscard]] std::string_view description() const override { return "all-to-all, uniform blocks"; }

  [[nodiscard]] Shape shape(std::uint64_t requested_bytes, Dtype dtype, int /*rank*/, int n) const override {
    Shape s;
    const std::uint64_t elem = dtype_size(dtype);
    const auto ranks = static_cast<std::uint64_t>(n);
    const std::uint64_t per_peer = aligned_chunk_elems(requested_bytes / elem, ranks, elem);
    s.count = per_peer * ranks;
    s.bytes = s.count * elem;
    s.send_elems = s.recv_elems = s.count;
    s.bytes_per_rank_send = s.bytes_per_rank_recv = s.bytes;
    return s;
  }

  void fill(void* host_send, const Shape& s, const CaseContext& ctx) const override {
    const std::size_t per_peer = s.count / static_cast<std::size_t>(ctx.num_ranks);
    for (int dst = 0; dst < ctx.num_ranks; ++dst) {
      for (std::size_t i = 0; i < per_peer; ++i) {
        store_element(host_send, static_cast<std::size_t>(dst) * per_peer + i, ctx.dtype,
                      move_value(ctx.dtype, ctx.rank, dst, i));
      }
    }
  }

  [[nodiscard]] std::uint64_t verify(const void* result, const Shape& s, const CaseContext& ctx) const override {
    const std::size_t per_peer = s.count / static_cast<std::size_t>(ctx.num_ranks);
    const auto elem = dtype_size(ctx.dtype);
    std::uint64_t wrong = 0;
    for (int src = 0; src < ctx.num_ranks; ++src) {
      const auto* block = static_cast<const char*>(result) + static_cast<std::size_t>(src) * per_peer * elem;
      wrong += count_wrong_moved(block, per_peer, ctx.dtype, src, ctx.rank, 0);
    }
    return wrong;
  }

  [[nodiscard]] std::optional<backend::Operation> operation(const void* send, void* recv, const Shape& s,
                                                            const CaseContext& ctx) const override {
    return backend::Operation{.op = NcclOp::alltoall,
                              .dtype = ctx.dtype,
                              .send = send,
                              .recv = recv,
                              .count = s.count / static_cast<std::size_t>(ctx.num_ranks)};
  }
};

}  // namespace

namespace {
const bool kAlltoallRegistered =
    register_collective([] { return std::unique_ptr<Collective>(std::make_unique<AllToAll>()); });
}  // namespace

}  // namespace collbench::coll
