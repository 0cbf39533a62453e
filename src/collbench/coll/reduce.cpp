// reduce to the root rank (--root): S = buffer; busbw = algbw (factor 1, nccl-tests). Every rank
// contributes S; only the root's result is defined (and checked).
#include "collbench/coll/collective.hpp"
#include "collbench/coll/family_helpers.hpp"
#include "collbench/coll/pattern.hpp"

namespace collbench::coll {
namespace {

class Reduce final : public Collective {
 public:
  Reduce() : Collective(CollectiveId::reduce) {}
  [[nodiscard]] std::string_view description() const override { return "reduce to the root rank (sum/prod/min/max)"; }

  [[nodiscard]] Shape shape(std::uint64_t requested_bytes, Dtype dtype, int /*rank*/, int /*n*/) const override {
    return whole_buffer_shape(requested_bytes, dtype);
  }

  void fill(void* host_send, const Shape& s, const CaseContext& ctx) const override {
    fill_reduce_input(host_send, s, ctx);
  }

  [[nodiscard]] std::uint64_t verify(const void* result, const Shape& s, const CaseContext& ctx) const override {
    return ctx.rank == ctx.root ? count_wrong_reduce(result, s.recv_elems, 0, ctx) : 0;
  }

  [[nodiscard]] std::optional<backend::Operation> operation(const void* send, void* recv, const Shape& s,
                                                            const CaseContext& ctx) const override {
    return backend::Operation{.op = NcclOp::reduce,
                              .dtype = ctx.dtype,
                              .redop = ctx.redop,
                              .root = ctx.root,
                              .send = send,
                              .recv = recv,
                              .count = s.count};
  }
};

const bool kReduceRegistered =
    register_collective([] { return std::unique_ptr<Collective>(std::make_unique<Reduce>()); });

}  // namespace
}  // namespace collbench::coll
