// all-reduce: S = per-rank buffer; busbw = algbw x 2(n-1)/n (nccl-tests).
#include "collbench/coll/collective.hpp"
#include "collbench/coll/pattern.hpp"

namespace collbench::coll {
namespace {

class AllReduce final : public Collective {
 public:
  AllReduce() : Collective(CollectiveId::allreduce) {}
  [[nodiscard]] std::string_view description() const override { return "all-reduce (sum/prod/min/max)"; }

  [[nodiscard]] Shape shape(std::uint64_t requested_bytes, Dtype dtype, int /*rank*/, int /*n*/) const override {
    Shape s;
    const std::uint64_t elem = dtype_size(dtype);
    s.count = requested_bytes / elem;
    s.bytes = s.count * elem;
    s.send_elems = s.recv_elems = s.count;
    s.bytes_per_rank_send = s.bytes_per_rank_recv = s.bytes;
    return s;
  }

  void fill(void* host_send, const Shape& s, const CaseContext& ctx) const override {
    const ReducePattern p = reduce_pattern(ctx.redop, ctx.dtype, ctx.num_ranks);
    for (std::size_t i = 0; i < s.send_elems; ++i) {
      store_element(host_send, i, ctx.dtype, reduce_input(p, ctx.redop, ctx.rank, ctx.num_ranks, i));
    }
  }

  [[nodiscard]] std::uint64_t verify(const void* result, const Shape& s, const CaseContext& ctx) const override {
    return count_wrong_reduce(result, s.recv_elems, 0, ctx);
  }

  void launch(backend::Comm& comm, const void* send, void* recv, const Shape& s,
              const CaseContext& ctx) const override {
    comm.allreduce(send, recv, s.count, ctx.dtype, ctx.redop);
  }

  [[nodiscard]] backend::BoundCall bind_launch(backend::Comm& comm, const void* send, void* recv, const Shape& s,
                                               const CaseContext& ctx) const override {
    return comm.bind_allreduce(send, recv, s.count, ctx.dtype, ctx.redop);
  }
};

}  // namespace

std::unique_ptr<Collective> make_allreduce() {
  return std::make_unique<AllReduce>();
}

}  // namespace collbench::coll
