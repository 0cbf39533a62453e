// gather to the root rank (--root): S = total output at the root (n x chunk, the chunk rounded as
// all-gather's); busbw = algbw x (n-1)/n (nccl-tests). Only the root's result is defined.
#include "collbench/coll/collective.hpp"
#include "collbench/coll/family_helpers.hpp"
#include "collbench/coll/pattern.hpp"

namespace collbench::coll {
namespace {

class Gather final : public Collective {
 public:
  Gather() : Collective(CollectiveId::gather) {}
  [[nodiscard]] std::string_view description() const override { return "gather to the root rank"; }

  [[nodiscard]] Shape shape(std::uint64_t requested_bytes, Dtype dtype, int /*rank*/, int n) const override {
    return chunked_shape(requested_bytes, dtype, n, ChunkSide::output);
  }

  void fill(void* host_send, const Shape& s, const CaseContext& ctx) const override {
    for (std::size_t i = 0; i < s.send_elems; ++i) {
      store_element(host_send, i, ctx.dtype, move_value(ctx.dtype, ctx.rank, ctx.root, i));
    }
  }

  // In place: rank r's chunk sits at r x chunk of the output buffer (NCCL's convention).
  [[nodiscard]] std::size_t in_place_input_offset(const Shape& s, const CaseContext& ctx) const override {
    return static_cast<std::size_t>(ctx.rank) * s.count;
  }

  [[nodiscard]] std::uint64_t verify(const void* result, const Shape& s, const CaseContext& ctx) const override {
    return ctx.rank == ctx.root ? count_wrong_gathered(result, s, ctx, ctx.root) : 0;
  }

  [[nodiscard]] std::optional<backend::Operation> operation(const void* send, void* recv, const Shape& s,
                                                            const CaseContext& ctx) const override {
    return backend::Operation{
        .op = NcclOp::gather, .dtype = ctx.dtype, .root = ctx.root, .send = send, .recv = recv, .count = s.count};
  }
};

const bool kGatherRegistered =
    register_collective([] { return std::unique_ptr<Collective>(std::make_unique<Gather>()); });

}  // namespace
}  // namespace collbench::coll
