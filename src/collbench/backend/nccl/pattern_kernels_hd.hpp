// The fill and check kernels' bodies (backend/nccl/device_kernels.cu), as __host__ __device__
// templates: a kernel thread runs fill_part / count_part for its index among `threads` threads,
// and the CPU unit tests (tests/unit/test_nccl_kernel_bodies.cpp) run the same functions for
// every thread index on host memory and compare the result with the host reference executor
// (coll/device_plan.hpp). Only the 16-byte load and store differ (a uint4 access on the device,
// memcpy on the host).
//
// A segment's elements are split at 16-byte boundaries of the buffer: a scalar head up to the
// first boundary, whole 16-byte vectors (16 / sizeof(element) elements each), a scalar tail.
// The head and tail (fewer than 16 / sizeof(element) elements each) go one element per thread;
// each thread writes or checks whole vectors, stepping the pattern cursor element by element
// inside a vector (one 64-bit add each) and by the grid stride between vectors (the stride's
// residue mod n computed once per thread): no 64-bit modulo per element. Values are encoded
// straight to the dtype's bits (core/pattern_rules.hpp encode_as) and checks compare raw bits.
#pragma once

#include <stdint.h>
#include <string.h>

#include "collbench/core/pattern_rules.hpp"

#if defined(__CUDA_ARCH__)
#define CB_UNROLL _Pragma("unroll")
#else
#define CB_UNROLL
#endif

namespace collbench::backend::nccl::hd {

// A segment of `count` elements of `elem_size` bytes starting at byte address `address` (a
// multiple of elem_size): `head` elements before the first 16-byte boundary, `vectors` whole
// 16-byte vectors, `tail` elements after them.
struct VectorSplit {
  uint64_t head = 0;
  uint64_t vectors = 0;
  uint64_t tail = 0;
};

CB_HD inline VectorSplit vector_split(uint64_t address, uint64_t count, uint32_t elem_size) {
  VectorSplit s;
  s.head = ((16u - (address & 15u)) & 15u) / elem_size;
  if (s.head > count) s.head = count;
  const uint64_t per_vector = 16u / elem_size;
  s.vectors = (count - s.head) / per_vector;
  s.tail = count - s.head - s.vectors * per_vector;
  return s;
}

// Lane e of a 16-byte vector held as four 32-bit words (little endian, as memory holds it).
template <class T>
CB_HD inline void put_lane(uint32_t (&w)[4], int e, T v) {
  if constexpr (sizeof(T) == 8) {
    w[2 * e] = static_cast<uint32_t>(v);
    w[2 * e + 1] = static_cast<uint32_t>(static_cast<uint64_t>(v) >> 32);
  } else {
    constexpr int kPerWord = 4 / static_cast<int>(sizeof(T));
    w[e / kPerWord] |= static_cast<uint32_t>(v) << ((e % kPerWord) * 8 * static_cast<int>(sizeof(T)));
  }
}

template <class T>
CB_HD inline T get_lane(const uint32_t (&w)[4], int e) {
  if constexpr (sizeof(T) == 8) {
    return static_cast<T>(w[2 * e] | (static_cast<uint64_t>(w[2 * e + 1]) << 32));
  } else {
    constexpr int kPerWord = 4 / static_cast<int>(sizeof(T));
    return static_cast<T>(w[e / kPerWord] >> ((e % kPerWord) * 8 * static_cast<int>(sizeof(T))));
  }
}

CB_HD inline void store16(void* p, const uint32_t (&w)[4]) {
#if defined(__CUDA_ARCH__)
  *static_cast<uint4*>(p) = make_uint4(w[0], w[1], w[2], w[3]);
#else
  memcpy(p, w, 16);
#endif
}

CB_HD inline void load16(const void* p, uint32_t (&w)[4]) {
#if defined(__CUDA_ARCH__)
  const uint4 v = *static_cast<const uint4*>(p);
  w[0] = v.x;
  w[1] = v.y;
  w[2] = v.z;
  w[3] = v.w;
#else
  memcpy(w, p, 16);
#endif
}

// One index further; the rank offset only where the kind uses it.
template <pattern::SegmentKind K>
CB_HD inline void next_of(pattern::Cursor& c, const pattern::PatternParams& p) {
  if constexpr (K == pattern::SegmentKind::reduce_input) {
    pattern::next(c, p);
  } else {
    c.h += pattern::kWeyl;
  }
}

// The 1-byte dtypes look their bits up in a table of kLutEntries encodings (in shared memory on
// the device) instead of computing them: one load instead of five instructions, where a
// 16-byte vector holds 16 values. Every value they use is at most exact_budget <= 16.
inline constexpr uint32_t kLutEntries = 32;

template <Dtype D>
inline constexpr bool kUsesLut = sizeof(typename pattern::Storage<D>::type) == 1;

// Entries first, first + step, ... of the table (a block's threads share the work).
template <Dtype D>
CB_HD inline void fill_lut(typename pattern::Storage<D>::type* lut, uint32_t first, uint32_t step) {
  for (uint32_t v = first; v < kLutEntries; v += step) lut[v] = pattern::encode_as<D>(v);
}

// The dtype bits of the kind's value at the cursor (`lut`: the table, for the 1-byte dtypes).
template <Dtype D, pattern::SegmentKind K>
CB_HD inline typename pattern::Storage<D>::type bits_at(const pattern::PatternParams& p, const pattern::Cursor& c,
                                                        const typename pattern::Storage<D>::type* lut) {
  const uint32_t v = pattern::value_at<K>(p, c);
  if constexpr (kUsesLut<D>) {
    return lut[v];
  } else {
    (void)lut;
    return pattern::encode_as<D>(v);
  }
}

// The cursor at the segment's local element i.
CB_HD inline pattern::Cursor cursor_of(const pattern::PatternParams& p, const pattern::Segment& s, uint64_t i) {
  return pattern::cursor_at(p, s, s.first_elem + i);
}

// Thread `thread` of `threads` writes its share of segment s into dst (elements of D); `lut`: the
// table of fill_lut for the 1-byte dtypes (ignored, may be null, for the others).
template <Dtype D, pattern::SegmentKind K>
CB_HD inline void fill_part(void* dst, const pattern::PatternParams& p, const pattern::Segment& s, uint64_t thread,
                            uint64_t threads, const typename pattern::Storage<D>::type* lut) {
  using T = typename pattern::Storage<D>::type;
  constexpr int kLanes = 16 / static_cast<int>(sizeof(T));
  T* base = static_cast<T*>(dst) + s.offset_elems;
  const VectorSplit sp = vector_split(reinterpret_cast<uintptr_t>(base), s.count, sizeof(T));
  for (uint64_t i = thread; i < sp.head; i += threads) base[i] = bits_at<D, K>(p, cursor_of(p, s, i), lut);
  for (uint64_t t = thread; t < sp.tail; t += threads) {
    const uint64_t i = s.count - sp.tail + t;
    base[i] = bits_at<D, K>(p, cursor_of(p, s, i), lut);
  }
  if (thread >= sp.vectors) return;
  const uint64_t step = threads * kLanes;
  const auto step_mod_n = static_cast<uint32_t>(step % static_cast<uint64_t>(p.num_ranks));
  pattern::Cursor c = cursor_of(p, s, sp.head + thread * kLanes);
  T* body = base + sp.head;
  for (uint64_t v = thread; v < sp.vectors; v += threads) {
    uint32_t w[4] = {0, 0, 0, 0};
    pattern::Cursor e = c;
    CB_UNROLL
    for (int lane = 0; lane < kLanes; ++lane) {
      put_lane<T>(w, lane, bits_at<D, K>(p, e, lut));
      next_of<K>(e, p);
    }
    store16(body + v * kLanes, w);
    pattern::advance(c, p, step, step_mod_n);
  }
}

// How many of thread `thread`'s share of segment s in src differ from the pattern (raw bits).
template <Dtype D, pattern::SegmentKind K>
CB_HD inline uint64_t count_part(const void* src, const pattern::PatternParams& p, const pattern::Segment& s,
                                 uint64_t thread, uint64_t threads, const typename pattern::Storage<D>::type* lut) {
  using T = typename pattern::Storage<D>::type;
  constexpr int kLanes = 16 / static_cast<int>(sizeof(T));
  const T* base = static_cast<const T*>(src) + s.offset_elems;
  const VectorSplit sp = vector_split(reinterpret_cast<uintptr_t>(base), s.count, sizeof(T));
  uint64_t wrong = 0;
  for (uint64_t i = thread; i < sp.head; i += threads)
    wrong += base[i] != bits_at<D, K>(p, cursor_of(p, s, i), lut) ? 1 : 0;
  for (uint64_t t = thread; t < sp.tail; t += threads) {
    const uint64_t i = s.count - sp.tail + t;
    wrong += base[i] != bits_at<D, K>(p, cursor_of(p, s, i), lut) ? 1 : 0;
  }
  if (thread >= sp.vectors) return wrong;
  const uint64_t step = threads * kLanes;
  const auto step_mod_n = static_cast<uint32_t>(step % static_cast<uint64_t>(p.num_ranks));
  pattern::Cursor c = cursor_of(p, s, sp.head + thread * kLanes);
  const T* body = base + sp.head;
  for (uint64_t v = thread; v < sp.vectors; v += threads) {
    uint32_t w[4];
    load16(body + v * kLanes, w);
    uint32_t bad = 0;
    pattern::Cursor e = c;
    CB_UNROLL
    for (int lane = 0; lane < kLanes; ++lane) {
      bad += get_lane<T>(w, lane) != bits_at<D, K>(p, e, lut) ? 1u : 0u;
      next_of<K>(e, p);
    }
    wrong += bad;
    pattern::advance(c, p, step, step_mod_n);
  }
  return wrong;
}

}  // namespace collbench::backend::nccl::hd
