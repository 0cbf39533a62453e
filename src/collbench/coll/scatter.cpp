// scatter from the root rank (--root): S = total input at the root (n x chunk, the chunk rounded
// as reduce-scatter's); busbw = algbw x (n-1)/n (nccl-tests). Every rank receives its chunk.
#include "collbench/coll/collective.hpp"
#include "collbench/coll/family_helpers.hpp"
#include "collbench/coll/pattern.hpp"

namespace collbench::coll {
namespace {

class Scatter final : public Collective {
 public:
  Scatter() : Collective(CollectiveId::scatter) {}
  [[nodiscard]] std::string_view description() const override { return "scatter from the root rank"; }

  [[nodiscard]] Shape shape(std::uint64_t requested_bytes, Dtype dtype, int /*rank*/, int n) const override {
    return chunked_shape(requested_bytes, dtype, n, ChunkSide::input);
  }

  // The root's input: chunk r for rank r. The other ranks' input is never read (zeros).
  void fill(void* host_send, const Shape& s, const CaseContext& ctx) const override {
    for (std::size_t i = 0; i < s.send_elems; ++i) {
      const auto dst = static_cast<int>(i / s.count);
      const double v = ctx.rank == ctx.root ? move_value(ctx.dtype, ctx.root, dst, i % s.count) : 0.0;
      store_element(host_send, i, ctx.dtype, v);
    }
  }

  // In place: rank r's chunk lands at r x chunk of the input buffer (NCCL's convention).
  [[nodiscard]] std::size_t in_place_result_offset(const Shape& s, const CaseContext& ctx,
                                                   const backend::Comm& /*comm*/) const override {
    return own_chunk(s, ctx);
  }

  [[nodiscard]] std::uint64_t verify(const void* result, const Shape& s, const CaseContext& ctx) const override {
    return count_wrong_moved(result, s.count, ctx.dtype, ctx.root, ctx.rank, 0);
  }

  [[nodiscard]] std::optional<backend::Operation> operation(const void* send, void* recv, const Shape& s,
                                                            const CaseContext& ctx) const override {
    // In place the runner hands one buffer as both: this rank's chunk of it is the output.
    if (ctx.in_place) recv = static_cast<char*>(recv) + own_chunk(s, ctx) * dtype_size(ctx.dtype);
    return backend::Operation{
        .op = NcclOp::scatter, .dtype = ctx.dtype, .root = ctx.root, .send = send, .recv = recv, .count = s.count};
  }

 private:
  static std::size_t own_chunk(const Shape& s, const CaseContext& ctx) {
    return static_cast<std::size_t>(ctx.rank) * s.count;
  }
};

const bool kScatterRegistered =
    register_collective([] { return std::unique_ptr<Collective>(std::make_unique<Scatter>()); });

}  // namespace
}  // namespace collbench::coll
