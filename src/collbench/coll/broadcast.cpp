// broadcast from rank 0 (--root): S = buffer; busbw = algbw (factor 1).
#include "collbench/coll/collective.hpp"
#include "collbench/coll/family_helpers.hpp"
#include "collbench/coll/pattern.hpp"

namespace collbench::coll {
namespace {

class Broadcast final : public Collective {
 public:
  Broadcast() : Collective(CollectiveId::broadcast) {}
  [[nodiscard]] std::string_view description() const override { return "broadcast from the root rank"; }

  [[nodiscard]] Shape shape(std::uint64_t requested_bytes, Dtype dtype, int /*rank*/, int /*n*/) const override {
    return whole_buffer_shape(requested_bytes, dtype);
  }

  void fill(void* host_send, const Shape& s, const CaseContext& ctx) const override {
    for (std::size_t i = 0; i < s.send_elems; ++i) {
      store_element(host_send, i, ctx.dtype, ctx.rank == ctx.root ? move_value(ctx.dtype, ctx.root, 0, i) : 0.0);
    }
  }

  [[nodiscard]] std::uint64_t verify(const void* result, const Shape& s, const CaseContext& ctx) const override {
    return count_wrong_moved(result, s.recv_elems, ctx.dtype, ctx.root, 0, 0);
  }

  [[nodiscard]] std::optional<backend::Operation> operation(const void* send, void* recv, const Shape& s,
                                                            const CaseContext& ctx) const override {
    return backend::Operation{
        .op = NcclOp::broadcast, .dtype = ctx.dtype, .root = ctx.root, .send = send, .recv = recv, .count = s.count};
  }
};

}  // namespace

namespace {
const bool kBroadcastRegistered =
    register_collective([] { return std::unique_ptr<Collective>(std::make_unique<Broadcast>()); });
}  // namespace

}  // namespace collbench::coll
