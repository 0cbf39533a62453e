// broadcast from rank 0 (--root): S = buffer; busbw = algbw (factor 1).
#include "collbench/coll/collective.hpp"
#include "collbench/coll/pattern.hpp"

namespace collbench::coll {
namespace {

class Broadcast final : public Collective {
 public:
  Broadcast() : Collective(CollectiveId::broadcast) {}
  [[nodiscard]] std::string_view description() const override { return "broadcast from the root rank"; }

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
    for (std::size_t i = 0; i < s.send_elems; ++i) {
      store_element(host_send, i, ctx.dtype, ctx.rank == ctx.root ? move_value(ctx.dtype, ctx.root, 0, i) : 0.0);
    }
  }

  [[nodiscard]] std::uint64_t verify(const void* result, const Shape& s, const CaseContext& ctx) const override {
    return count_wrong_moved(result, s.recv_elems, ctx.dtype, ctx.root, 0, 0);
  }

  void launch(backend::Comm& comm, const void* send, void* recv, const Shape& s,
              const CaseContext& ctx) const override {
    comm.broadcast(send, recv, s.count, ctx.dtype, ctx.root);
  }

  [[nodiscard]] backend::BoundCall bind_launch(backend::Comm& comm, const void* send, void* recv, const Shape& s,
                                               const CaseContext& ctx) const override {
    return comm.bind_broadcast(send, recv, s.count, ctx.dtype, ctx.root);
  }
};

}  // namespace

std::unique_ptr<Collective> make_broadcast() {
  return std::make_unique<Broadcast>();
}

}  // namespace collbench::coll
