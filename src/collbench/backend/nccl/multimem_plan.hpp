// Index math of collbench's own in-switch kernels (`--algo cb-multimem`, multimem_kernels.cu),
// as __host__ __device__ functions shared by the kernels and their CPU tests
// (tests/unit/test_nccl_multimem_plan.cpp emulates every rank, block and thread on the host).
// No CUDA header: compiled by a plain C++ compiler these are ordinary constexpr functions.
//
// The kernels move 16-byte vectors through the NVLink switch (multimem.ld_reduce / multimem.st
// `.v4`, which need 16-byte aligned addresses). A buffer of `count` elements is split into
//   head: the elements before the first 16-byte boundary of the source,
//   body: whole 16-byte vectors,
//   tail: the elements after the last whole vector,
// and head + tail ("scalars", < 16 B each end) take a per-element path. Offsets are byte offsets
// inside NCCL symmetric windows, whose bases are 4 KiB aligned on every rank, so `offset % 16`
// is the address's alignment and the same on every rank. When source and destination are
// misaligned relative to each other no vector can serve both: every element is a scalar.
//
// All-reduce: rank r of m reduces its 1/m slice of the vectors (and of the scalars), so every
// element is reduced by exactly one rank. Reduce-scatter and all-gather: each rank handles its
// own chunk whole. Grid size depends only on (count, element size, m), so every rank launches
// the same number of blocks: block b of every rank meets in LSA barrier b.
#pragma once

#include <stdint.h>

#include "collbench/backend/nccl/pattern_hd.hpp"  // CB_HD

namespace collbench::backend::nccl::mm {

inline constexpr uint32_t kVecBytes = 16;
inline constexpr uint32_t kThreads = 512;  // threads per block
inline constexpr uint32_t kUnroll = 4;     // vectors in flight per thread (loads issued before stores)

// Depth: the bytes one GPU keeps in flight through the switch are blocks x kThreads x kUnroll x
// kVecBytes (32 KiB per block). The depth is a plan parameter, `max_blocks`: the largest grid,
// which is also the lsaBarrierCount requested at ncclDevCommCreate (block b meets in barrier b).
// Default: about 4 MiB per GPU, what NCCL's symmetric kernels keep in flight (128 blocks of 512
// threads, about one per SM on H100/H200/B200); collbench kept 1 MiB (32 blocks) before.
inline constexpr uint64_t kBlockInflightBytes = uint64_t{kThreads} * kUnroll * kVecBytes;
inline constexpr uint64_t kDefaultInflightBytes = uint64_t{4} << 20;
inline constexpr uint32_t kBlockLimit = 1024;  // upper bound of any depth (barriers cost memory)

CB_HD constexpr uint32_t blocks_for_inflight(uint64_t inflight_bytes) {
  const uint64_t b = (inflight_bytes + kBlockInflightBytes - 1) / kBlockInflightBytes;
  return b < 1 ? 1u : (b > kBlockLimit ? kBlockLimit : static_cast<uint32_t>(b));
}
CB_HD constexpr uint64_t inflight_bytes(uint32_t max_blocks) {
  return uint64_t{max_blocks} * kBlockInflightBytes;
}

inline constexpr uint32_t kMaxBlocks = blocks_for_inflight(kDefaultInflightBytes);  // the default depth

// [begin, end) in units (vectors or scalar indices).
struct Range {
  uint64_t begin = 0;
  uint64_t end = 0;
  CB_HD constexpr uint64_t size() const { return end > begin ? end - begin : 0; }
};

CB_HD constexpr uint64_t ceil_div(uint64_t a, uint64_t b) {
  return b == 0 ? 0 : (a + b - 1) / b;
}

// Part `idx` of `parts` near-equal parts of [0, total): the first total % parts parts get one
// more unit. Parts are contiguous and in order, so they tile [0, total) exactly.
CB_HD constexpr Range slice(uint64_t total, uint32_t parts, uint32_t idx) {
  if (parts == 0 || idx >= parts) return Range{total, total};
  const uint64_t q = total / parts;
  const uint64_t rem = total % parts;
  const uint64_t begin = idx * q + (idx < rem ? idx : rem);
  return Range{begin, begin + q + (idx < rem ? 1 : 0)};
}

// The alignment split of `count` elements of `elem_bytes` each, read at byte offset `src_offset`
// and written at `dst_offset`.
struct Layout {
  uint64_t count = 0;
  uint32_t elem_bytes = 4;
  uint64_t head_elems = 0;
  uint64_t body_vecs = 0;
  uint64_t tail_elems = 0;

  CB_HD constexpr uint32_t elems_per_vec() const { return elem_bytes == 0 ? 0 : kVecBytes / elem_bytes; }
  CB_HD constexpr uint64_t scalar_elems() const { return head_elems + tail_elems; }
  CB_HD constexpr uint64_t body_elems() const { return body_vecs * elems_per_vec(); }
};

CB_HD constexpr Layout split(uint64_t count, uint32_t elem_bytes, uint64_t src_offset, uint64_t dst_offset) {
  Layout l;
  l.count = count;
  l.elem_bytes = elem_bytes;
  const bool vectorisable = elem_bytes != 0 && kVecBytes % elem_bytes == 0 && src_offset % elem_bytes == 0 &&
                            src_offset % kVecBytes == dst_offset % kVecBytes;
  if (!vectorisable) {
    l.head_elems = count;  // everything on the per-element path
    return l;
  }
  const uint64_t head_bytes = (kVecBytes - src_offset % kVecBytes) % kVecBytes;
  l.head_elems = head_bytes / elem_bytes < count ? head_bytes / elem_bytes : count;
  const uint64_t rest = count - l.head_elems;
  l.body_vecs = rest * elem_bytes / kVecBytes;
  l.tail_elems = rest - l.body_vecs * l.elems_per_vec();
  return l;
}

// The element index of vector `v`'s first element, and of scalar `i` (head first, then tail).
CB_HD constexpr uint64_t vector_element(const Layout& l, uint64_t v) {
  return l.head_elems + v * l.elems_per_vec();
}
CB_HD constexpr uint64_t scalar_element(const Layout& l, uint64_t i) {
  return i < l.head_elems ? i : l.head_elems + l.body_elems() + (i - l.head_elems);
}

// What one rank does: a range of vectors and a range of scalar indices.
struct Work {
  Range vecs;
  Range scalars;
};

// All-reduce: rank `rank` of `m` owns slice `rank` of the vectors and of the scalars.
CB_HD constexpr Work allreduce_work(const Layout& l, uint32_t m, uint32_t rank) {
  return Work{slice(l.body_vecs, m, rank), slice(l.scalar_elems(), m, rank)};
}

// Reduce-scatter / all-gather: a rank's own chunk, whole.
CB_HD constexpr Work whole_work(const Layout& l) {
  return Work{Range{0, l.body_vecs}, Range{0, l.scalar_elems()}};
}

// Byte offset of rank `rank`'s chunk of `chunk_count` elements in a buffer at `base_offset`.
CB_HD constexpr uint64_t chunk_offset(uint64_t base_offset, uint64_t chunk_count, uint32_t elem_bytes, uint32_t rank) {
  return base_offset + static_cast<uint64_t>(rank) * chunk_count * elem_bytes;
}

// Blocks for `units` 16-byte units per rank: one thread per unit, at least 1, at most
// `max_blocks` (the depth; 0 counts as 1).
CB_HD constexpr uint32_t grid_blocks(uint64_t units, uint32_t max_blocks = kMaxBlocks) {
  const uint32_t cap = max_blocks < 1 ? 1u : max_blocks;
  const uint64_t b = ceil_div(units, kThreads);
  return b < 1 ? 1u : (b > cap ? cap : static_cast<uint32_t>(b));
}

// The grids, from values every rank shares: all-reduce from the largest 1/m share of the buffer's
// 16-byte units; reduce-scatter and all-gather from the per-rank chunk.
CB_HD constexpr uint32_t allreduce_grid(uint64_t count, uint32_t elem_bytes, uint32_t m,
                                        uint32_t max_blocks = kMaxBlocks) {
  return grid_blocks(ceil_div(ceil_div(count * elem_bytes, kVecBytes), m == 0 ? 1 : m), max_blocks);
}
CB_HD constexpr uint32_t chunk_grid(uint64_t chunk_count, uint32_t elem_bytes, uint32_t max_blocks = kMaxBlocks) {
  return grid_blocks(ceil_div(chunk_count * elem_bytes, kVecBytes), max_blocks);
}

// A thread's walk over a range: first, first + stride, ... while < end (grid-stride). The
// kernels visit it kUnroll steps at a time (all loads of a batch, then all its stores).
struct Cursor {
  uint64_t first = 0;
  uint64_t stride = 1;
  uint64_t end = 0;
};

CB_HD constexpr Cursor cursor(const Range& r, uint32_t block, uint32_t thread, uint32_t blocks, uint32_t threads) {
  return Cursor{r.begin + static_cast<uint64_t>(block) * threads + thread, static_cast<uint64_t>(blocks) * threads,
                r.end};
}

}  // namespace collbench::backend::nccl::mm
