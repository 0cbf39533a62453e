// all-gather: S = total output per rank (n x chunk); busbw = algbw x (n-1)/n.
#include "collbench/coll/collective.hpp"
#include "collbench/coll/family_helpers.hpp"
#include "collbench/coll/pattern.hpp"

namespace collbench::coll {
namespace {

class AllGather final : public Collective {
 public:
  AllGather() : Collective(CollectiveId::allgather) {}
  [[nodiscard]] std::string_view description() const override { return "all-gather"; }

  [[nodiscard]] Shape shape(std::uint64_t requested_bytes, Dtype dtype, int /*rank*/, int n) const override {
    return chunked_shape(requested_bytes, dtype, n, ChunkSide::output);
  }

  void fill(void* host_send, const Shape& s, const CaseContext& ctx) const override {
    for (std::size_t i = 0; i < s.send_elems; ++i) {
      store_element(host_send, i, ctx.dtype, move_value(ctx.dtype, ctx.rank, 0, i));
    }
  }

  [[nodiscard]] std::size_t in_place_input_offset(const Shape& s, const CaseContext& ctx) const override {
    return static_cast<std::size_t>(ctx.rank) * s.count;
  }

  [[nodiscard]] std::uint64_t verify(const void* result, const Shape& s, const CaseContext& ctx) const override {
    return count_wrong_gathered(result, s, ctx, 0);
  }

  [[nodiscard]] std::optional<backend::Operation> operation(const void* send, void* recv, const Shape& s,
                                                            const CaseContext& ctx) const override {
    return backend::Operation{
        .op = NcclOp::allgather, .dtype = ctx.dtype, .send = send, .recv = recv, .count = s.count};
  }
};

}  // namespace

namespace {
const bool kAllgatherRegistered =
    register_collective([] { return std::unique_ptr<Collective>(std::make_unique<AllGather>()); });
}  // namespace

}  // namespace collbench::coll
