// Shapes, fills and checks that several family files share (included by coll/<family>.cpp only).
#pragma once

#include <cstddef>
#include <cstdint>

#include "collbench/coll/collective.hpp"

namespace collbench::coll {

// The shape of the families whose every rank sends and receives one buffer of S (all-reduce,
// broadcast, send/recv, reduce): count = S / element size, rounded down.
Shape whole_buffer_shape(std::uint64_t requested_bytes, Dtype dtype);

// Per-rank chunk of reduce-scatter, all-gather and all-to-all, as current nccl-tests computes
// it: floor(total / n) elements, rounded down to a whole number of 16-byte units (16/elem
// elements), so that every rank's block stays 16-byte aligned.
constexpr std::uint64_t aligned_chunk_elems(std::uint64_t total_elems, std::uint64_t num_ranks,
                                            std::uint64_t elem_bytes) {
  const std::uint64_t per_16_bytes = elem_bytes >= 16 ? 1 : 16 / elem_bytes;
  return (total_elems / num_ranks) / per_16_bytes * per_16_bytes;
}

// Wrong elements of `elems` reduction results, the first being global element first_global_elem.
std::uint64_t count_wrong_reduce(const void* result, std::size_t elems, std::uint64_t first_global_elem,
                                 const CaseContext& ctx);
// Wrong elements of `elems` values moved from rank src to rank dst, the first being src's element
// first_src_elem.
std::uint64_t count_wrong_moved(const void* result, std::size_t elems, Dtype dtype, int src, int dst,
                                std::uint64_t first_src_elem);

// Which buffer holds the n chunks of a chunked collective; the other holds one.
enum class ChunkSide : std::uint8_t {
  input,   // reduce-scatter, scatter: n chunks in, one out
  output,  // all-gather, gather: one chunk in, n out
};

// The shape of reduce-scatter, all-gather, gather and scatter: count = the per-rank chunk, rounded
// down to 16-byte units as nccl-tests does (aligned_chunk_elems); bytes = n chunks.
Shape chunked_shape(std::uint64_t requested_bytes, Dtype dtype, int n, ChunkSide full);

// This rank's reduction input over shape.send_elems elements (all-reduce, reduce-scatter, reduce).
void fill_reduce_input(void* host_send, const Shape& shape, const CaseContext& ctx);

// Wrong elements of n gathered chunks, chunk r being rank r's input sent to `dst` (all-gather: the
// chunk's values do not depend on the receiver, dst 0; gather: the root).
std::uint64_t count_wrong_gathered(const void* result, const Shape& shape, const CaseContext& ctx, int dst);

}  // namespace collbench::coll
