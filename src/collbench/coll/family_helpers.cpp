#include "collbench/coll/family_helpers.hpp"

#include "collbench/coll/pattern.hpp"

namespace collbench::coll {

Shape whole_buffer_shape(std::uint64_t requested_bytes, Dtype dtype) {
  Shape s;
  const std::uint64_t elem = dtype_size(dtype);
  s.count = requested_bytes / elem;
  s.bytes = s.count * elem;
  s.send_elems = s.recv_elems = s.count;
  s.bytes_per_rank_send = s.bytes_per_rank_recv = s.bytes;
  return s;
}

std::uint64_t count_wrong_reduce(const void* result, std::size_t elems, std::uint64_t first_global_elem,
                                 const CaseContext& ctx) {
  const ReducePattern p = reduce_pattern(ctx.redop, ctx.dtype, ctx.num_ranks);
  std::uint64_t wrong = 0;
  for (std::size_t i = 0; i < elems; ++i) {
    const double expected = reduce_expected(p, ctx.redop, ctx.num_ranks, first_global_elem + i);
    if (load_element(result, i, ctx.dtype) != expected) ++wrong;
  }
  return wrong;
}

std::uint64_t count_wrong_moved(const void* result, std::size_t elems, Dtype dtype, int src, int dst,
                                std::uint64_t first_src_elem) {
  std::uint64_t wrong = 0;
  for (std::size_t i = 0; i < elems; ++i) {
    if (load_element(result, i, dtype) != move_value(dtype, src, dst, first_src_elem + i)) ++wrong;
  }
  return wrong;
}

Shape chunked_shape(std::uint64_t requested_bytes, Dtype dtype, int n, ChunkSide full) {
  Shape s;
  const std::uint64_t elem = dtype_size(dtype);
  const auto ranks = static_cast<std::uint64_t>(n);
  s.count = aligned_chunk_elems(requested_bytes / elem, ranks, elem);  // per-rank chunk, as nccl-tests prints it
  s.bytes = s.count * ranks * elem;
  const bool in = full == ChunkSide::input;
  s.send_elems = in ? s.count * ranks : s.count;
  s.recv_elems = in ? s.count : s.count * ranks;
  s.bytes_per_rank_send = in ? s.bytes : s.count * elem;
  s.bytes_per_rank_recv = in ? s.count * elem : s.bytes;
  return s;
}

void fill_reduce_input(void* host_send, const Shape& shape, const CaseContext& ctx) {
  const ReducePattern p = reduce_pattern(ctx.redop, ctx.dtype, ctx.num_ranks);
  for (std::size_t i = 0; i < shape.send_elems; ++i) {
    store_element(host_send, i, ctx.dtype, reduce_input(p, ctx.redop, ctx.rank, ctx.num_ranks, i));
  }
}

std::uint64_t count_wrong_gathered(const void* result, const Shape& shape, const CaseContext& ctx, int dst) {
  std::uint64_t wrong = 0;
  const auto elem = dtype_size(ctx.dtype);
  for (int src = 0; src < ctx.num_ranks; ++src) {
    const auto* block = static_cast<const char*>(result) + static_cast<std::size_t>(src) * shape.count * elem;
    wrong += count_wrong_moved(block, shape.count, ctx.dtype, src, dst, 0);
  }
  return wrong;
}

}  // namespace collbench::coll
