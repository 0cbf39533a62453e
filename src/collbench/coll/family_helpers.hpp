// Shapes, fills and checks that several family files share (included by coll/<family>.cpp only).
#pragma once

#include <cstdint>

#include "collbench/coll/collective.hpp"

namespace collbench::coll {

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
