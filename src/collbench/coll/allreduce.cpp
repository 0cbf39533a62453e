// all-reduce: S = per-rank buffer; busbw = algbw x 2(n-1)/n (nccl-tests).
#include "collbench/coll/collective.hpp"
#include "collbench/coll/family_helpers.hpp"
#include "collbench/coll/pattern.hpp"

namespace collbench::coll {
namespace {

class AllReduce final : public Collective {
 public:
  AllReduce() : Collective(CollectiveId::allreduce) {}
  [[nodiscard]] std::string_view description() const override { return "all-reduce (sum/prod/min/max)"; }

  [[nodiscard]] Shape shape(std::uint64_t requested_bytes, Dtype dtype, int /*rank*/, int /*n*/) const override {
    return whole_buffer_shape(requested_bytes, dtype);
  }

  void fill(void* host_send, const Shape& s, const CaseContext& ctx) const override {
    fill_reduce_input(host_send, s, ctx);
  }

  [[nodiscard]] std::uint64_t verify(const void* result, const Shape& s, const CaseContext& ctx) const override {
    return count_wrong_reduce(result, s.recv_elems, 0, ctx);
  }

  [[nodiscard]] std::optional<backend::Operation> operation(const void* send, void* recv, const Shape& s,
                                                            const CaseContext& ctx) const override {
    return backend::Operation{
        .op = NcclOp::allreduce, .dtype = ctx.dtype, .redop = ctx.redop, .send = send, .recv = recv, .count = s.count};
  }
};

}  // namespace

namespace {
const bool kAllreduceRegistered =
    register_collective([] { return std::unique_ptr<Collective>(std::make_unique<AllReduce>()); });
}  // namespace

}  // namespace collbench::coll
