// reduce-scatter: S = total input per rank (n x recv chunk); busbw = algbw x (n-1)/n.
// Sizes that do not split evenly are rounded down per rank to whole 16-byte units, as nccl-tests does.
#include "collbench/coll/collective.hpp"
#include "collbench/coll/family_helpers.hpp"
#include "collbench/coll/pattern.hpp"

namespace collbench::coll {
namespace {

class ReduceScatter final : public Collective {
 public:
  ReduceScatter() : Collective(CollectiveId::reducescatter) {}
  [[nodiscard]] std::string_view description() const override { return "reduce-scatter (sum/prod/min/max)"; }

  [[nodiscard]] Shape shape(std::uint64_t requested_bytes, Dtype dtype, int /*rank*/, int n) const override {
    return chunked_shape(requested_bytes, dtype, n, ChunkSide::input);
  }

  void fill(void* host_send, const Shape& s, const CaseContext& ctx) const override {
    fill_reduce_input(host_send, s, ctx);
  }

  [[nodiscard]] std::size_t in_place_result_offset(const Shape& s, const CaseContext&,
                                                   const backend::Comm& comm) const override {
    return comm.reduce_scatter_in_place_offset(s.count);
  }

  [[nodiscard]] std::uint64_t verify(const void* result, const Shape& s, const CaseContext& ctx) const override {
    return count_wrong_reduce(result, s.recv_elems, static_cast<std::uint64_t>(ctx.rank) * s.count, ctx);
  }

  [[nodiscard]] std::optional<backend::Operation> operation(const void* send, void* recv, const Shape& s,
                                                            const CaseContext& ctx) const override {
    return backend::Operation{.op = NcclOp::reducescatter,
                              .dtype = ctx.dtype,
                              .redop = ctx.redop,
                              .send = send,
                              .recv = recv,
                              .count = s.count};
  }
};

}  // namespace

namespace {
const bool kReducescatterRegistered =
    register_collective([] { return std::unique_ptr<Collective>(std::make_unique<ReduceScatter>()); });
}  // namespace

}  // namespace collbench::coll
