// send/recv in a ring: every rank sends its buffer to rank+1 and receives from rank-1 at once.
// S = buffer; busbw = algbw (factor 1).
#include "collbench/coll/collective.hpp"
#include "collbench/coll/pattern.hpp"

namespace collbench::coll {
namespace {

class SendRecv final : public Collective {
 public:
  [[nodiscard]] std::string_view name() const override { return "sendrecv"; }
  [[nodiscard]] std::string_view description() const override { return "send to rank+1, receive from rank-1"; }
  [[nodiscard]] std::string_view bytes_convention() const override { return "buffer"; }
  [[nodiscard]] bool supports_in_place() const override { return false; }
  [[nodiscard]] double busbw_factor(int /*n*/) const override { return 1.0; }

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
    const int dst = (ctx.rank + 1) % ctx.num_ranks;
    for (std::size_t i = 0; i < s.send_elems; ++i) {
      store_element(host_send, i, ctx.dtype, move_value(ctx.dtype, ctx.rank, dst, i));
    }
  }

  [[nodiscard]] std::uint64_t verify(const void* result, const Shape& s, const CaseContext& ctx) const override {
    const int src = (ctx.rank + ctx.num_ranks - 1) % ctx.num_ranks;
    return count_wrong_moved(result, s.recv_elems, ctx.dtype, src, ctx.rank, 0);
  }

  void launch(backend::Comm& comm, const void* send, void* recv, const Shape& s, const CaseContext& ctx) const override {
    comm.sendrecv(send, (ctx.rank + 1) % ctx.num_ranks, recv, (ctx.rank + ctx.num_ranks - 1) % ctx.num_ranks, s.count,
                  ctx.dtype);
  }
};

}  // namespace

std::unique_ptr<Collective> make_sendrecv() { return std::make_unique<SendRecv>(); }

}  // namespace collbench::coll
