// The verification pattern's value rules (docs/interfaces.md section 8), written once as
// __host__ __device__ functions: coll/pattern.cpp (the host fill() and verify() of every family),
// the NCCL backend's fill and check kernels (backend/nccl/device_kernels.cu) and their host
// reference (coll/device_plan.hpp) all compute their values here, so that host and device agree
// bit for bit by construction. No CUDA header is needed: compiled by a plain C++ compiler these
// are ordinary inline functions.
//
// Every value is a small non-negative integer (below 2^23), exact in every dtype it is used in:
//  - hash state: a Weyl sequence h(key, i) = key + i * kWeyl (mod 2^64), so consecutive elements
//    cost one 64-bit add; a value in [0, range) is the high 32 bits of h, mixed (draw: x * (x | 1))
//    and scaled by range (one 32-bit multiply-high, no modulo);
//  - reductions: element i receives a non-identity value only from the k contributors
//    r = (i + j) mod n, j < k; contributor j holds base(i) + j (sum, min, max, base in
//    [1, base_range]) or 1 + bit (31 - j) of draw(h) (prod), so the reduced value has a closed form
//    in k (reduced_value): checking a reduction over any number of ranks costs O(1) per element;
//  - data movement: 1 + scaled(h(move_key(src, dst), i), move_range), move_key a bijection of
//    (src, dst), so a block from the wrong peer or at the wrong offset differs.
#pragma once

#include <stdint.h>
#include <string.h>

#include "collbench/core/dtype.hpp"
#include "collbench/core/redop.hpp"

#ifndef CB_HD
#if defined(__CUDACC__)
#define CB_HD __host__ __device__
#else
#define CB_HD
#endif
#endif

namespace collbench::pattern {

inline constexpr uint64_t kWeyl = 0x9e3779b97f4a7c15ULL;       // 2^64 / golden ratio, odd
inline constexpr uint64_t kReduceKey = 0x243f6a8885a308d3ULL;  // the reduction pattern's key
inline constexpr int32_t kMaxBaseRange = 1000;                 // base values lie in [1, 1000] at most
inline constexpr int32_t kMaxMoveRange = 1 << 15;              // moved values lie in [1, 2^15] at most

// splitmix64 finaliser: a bijection, used once per segment (move_key), never per element.
CB_HD constexpr uint64_t mix64(uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

// Largest L such that every integer in [0, L] is exact in the dtype (the dtype's exact_limit,
// except e5m2 whose 2 mantissa bits stop at 8).
CB_HD constexpr int64_t exact_budget(Dtype dtype) {
  switch (dtype) {
    case Dtype::int32:
      return 2147483647LL;
    case Dtype::int64:
    case Dtype::float64:
      return 1LL << 53;
    case Dtype::float32:
      return 1LL << 24;
    case Dtype::float16:
      return 1LL << 11;
    case Dtype::bfloat16:
      return 1LL << 8;
    case Dtype::float8e4m3:
      return 16;
    case Dtype::float8e5m2:
      return 8;
  }
  return 1;
}

// At most this many ranks contribute to one element of a reduction.
CB_HD constexpr int32_t contributor_cap(Dtype dtype) {
  switch (dtype) {
    case Dtype::float8e4m3:
    case Dtype::float8e5m2:
      return 2;
    case Dtype::bfloat16:
      return 8;
    default:
      return 16;
  }
}

CB_HD constexpr int32_t floor_log2(int64_t v) {
  int32_t e = -1;
  while (v > 0) {
    v >>= 1;
    ++e;
  }
  return e;
}

CB_HD constexpr int64_t min64(int64_t a, int64_t b) {
  return a < b ? a : b;
}

// Moved values lie in [1, move_range(dtype)].
CB_HD constexpr int32_t move_range(Dtype dtype) {
  return static_cast<int32_t>(min64(exact_budget(dtype), kMaxMoveRange));
}

// A reduction's pattern on n ranks in a dtype. Every partial result of any subset of the
// contributors, in any order, is an integer in [0, exact_budget]:
//   sum: k * base_range + k(k-1)/2 <= budget - 1;  prod: 2^k <= budget;
//   min: identity = base_range + k (above every contributor) <= budget;  max: identity 0.
struct ReduceRule {
  int32_t contributors = 1;  // k
  int32_t base_range = 1;    // base values lie in [1, base_range] (prod: unused)
  int32_t max_value = 1;     // the largest contributor value
  int32_t identity = 0;      // what non-contributors hold
};

CB_HD constexpr ReduceRule reduce_rule(Redop redop, Dtype dtype, int num_ranks) {
  const int64_t budget = exact_budget(dtype);
  const int64_t n = num_ranks > 1 ? num_ranks : 1;
  ReduceRule r;
  int64_t k = min64(n, contributor_cap(dtype));
  int64_t range = 1;
  if (redop == Redop::prod) k = min64(k, floor_log2(budget));
  if (redop == Redop::sum) range = (budget - 1 - k * (k - 1) / 2) / k;
  if (redop == Redop::min || redop == Redop::max) range = budget - k;
  range = min64(range, kMaxBaseRange);
  range = range < 1 ? 1 : range;
  r.contributors = static_cast<int32_t>(k);
  r.base_range = redop == Redop::prod ? 1 : static_cast<int32_t>(range);
  r.max_value = redop == Redop::prod ? 2 : static_cast<int32_t>(range + k - 1);
  r.identity = redop == Redop::sum || redop == Redop::max ? 0 : redop == Redop::prod ? 1 : r.max_value + 1;
  return r;
}

// ---- hashing: no modulo, one multiply-high ----------------------------------------------------

CB_HD constexpr uint64_t weyl(uint64_t key, uint64_t idx) {
  return key + idx * kWeyl;
}

// The 32 bits a value is drawn from: the high half x of the Weyl state, mixed as x * (x | 1) (an
// invertible T-function, two instructions). Without the mix, two peers' sequences whose keys
// differ by little in the high bits would give equal values along a whole block; with it, any
// change of x moves the high bits of the result in a way that varies from element to element.
CB_HD constexpr uint32_t draw(uint64_t h) {
  const auto x = static_cast<uint32_t>(h >> 32);
  return x * (x | 1u);
}

// floor(draw(h) * range / 2^32): in [0, range) (one multiply-high, no modulo).
CB_HD inline uint32_t scaled(uint64_t h, uint32_t range) {
#if defined(__CUDA_ARCH__)
  return __umulhi(draw(h), range);
#else
  return static_cast<uint32_t>((static_cast<uint64_t>(draw(h)) * range) >> 32);
#endif
}

CB_HD inline uint32_t popcount32(uint32_t x) {
#if defined(__CUDA_ARCH__)
  return static_cast<uint32_t>(__popc(x));
#else
  return static_cast<uint32_t>(__builtin_popcount(x));
#endif
}

// The key of the values rank `src` sends to rank `dst` (a bijection of the pair).
CB_HD constexpr uint64_t move_key(int src, int dst) {
  return mix64((static_cast<uint64_t>(static_cast<uint32_t>(src)) << 32) | static_cast<uint32_t>(dst));
}

CB_HD inline uint32_t move_int(uint64_t h, int32_t range) {
  return 1 + scaled(h, static_cast<uint32_t>(range));
}

// Contributor j (0 <= j < k) of the element whose reduction hash is h.
CB_HD inline uint32_t contributor_int(Redop redop, const ReduceRule& r, uint64_t h, uint32_t j) {
  if (redop == Redop::prod) return 1 + ((draw(h) >> (31 - j)) & 1u);
  return 1 + scaled(h, static_cast<uint32_t>(r.base_range)) + j;
}

// The input of the rank at offset j = (rank - i) mod n from element i.
CB_HD inline uint32_t input_int(Redop redop, const ReduceRule& r, uint64_t h, uint32_t j) {
  return j < static_cast<uint32_t>(r.contributors) ? contributor_int(redop, r, h, j)
                                                   : static_cast<uint32_t>(r.identity);
}

// The closed form of the reduction over every rank (non-contributors hold the identity, which
// changes nothing): O(1) whatever the rank count.
CB_HD inline uint32_t reduced_int(Redop redop, const ReduceRule& r, uint64_t h) {
  const auto k = static_cast<uint32_t>(r.contributors);
  switch (redop) {
    case Redop::sum:
      return k * (1 + scaled(h, static_cast<uint32_t>(r.base_range))) + k * (k - 1) / 2;
    case Redop::prod:
      return 1u << popcount32(draw(h) >> (32 - k));
    case Redop::min:
      return 1 + scaled(h, static_cast<uint32_t>(r.base_range));
    case Redop::max:
      return scaled(h, static_cast<uint32_t>(r.base_range)) + k;
  }
  return 0;
}

// ---- encoding a small integer v (< 2^23) as the dtype's bits -----------------------------------

CB_HD inline uint32_t f32_bits(float f) {
  uint32_t u;
  memcpy(&u, &f, sizeof u);
  return u;
}

CB_HD inline float f32_of_bits(uint32_t u) {
  float f;
  memcpy(&f, &u, sizeof f);
  return f;
}

// The float32 bits of v < 2^23: (2^23 + v) - 2^23, both exact (one OR and one add, no conversion
// instruction).
CB_HD inline uint32_t small_f32_bits(uint32_t v) {
  return f32_bits(f32_of_bits(0x4b000000u | v) - 8388608.0f);
}

// A float32 bit pattern fb of an exact integer v >= 1 (normal, mantissa exact in the target)
// rebiased to a narrower float: exponent and mantissa shift together, so one shift and one
// subtraction; 0 stays 0.
CB_HD constexpr uint32_t rebias(uint32_t fb, int drop_bits, uint32_t bias_shift) {
  return fb == 0 ? 0u : (fb >> drop_bits) - bias_shift;
}

template <Dtype D>
struct Storage;
template <>
struct Storage<Dtype::int32> {
  using type = uint32_t;
};
template <>
struct Storage<Dtype::int64> {
  using type = uint64_t;
};
template <>
struct Storage<Dtype::float32> {
  using type = uint32_t;
};
template <>
struct Storage<Dtype::float64> {
  using type = uint64_t;
};
template <>
struct Storage<Dtype::float16> {
  using type = uint16_t;
};
template <>
struct Storage<Dtype::bfloat16> {
  using type = uint16_t;
};
template <>
struct Storage<Dtype::float8e4m3> {
  using type = uint8_t;
};
template <>
struct Storage<Dtype::float8e5m2> {
  using type = uint8_t;
};

// The bits of integer v (0 <= v < 2^23, exact in D) as D stores it.
template <Dtype D>
CB_HD inline typename Storage<D>::type encode_as(uint32_t v) {
  using T = typename Storage<D>::type;
  if constexpr (D == Dtype::int32 || D == Dtype::int64) {
    return static_cast<T>(v);
  } else {
    const uint32_t fb = small_f32_bits(v);
    if constexpr (D == Dtype::float32) {
      return fb;
    } else if constexpr (D == Dtype::float64) {
      return fb == 0 ? 0ull : (static_cast<uint64_t>(fb) << 29) + (static_cast<uint64_t>(1023 - 127) << 52);
    } else if constexpr (D == Dtype::float16) {
      return static_cast<T>(rebias(fb, 13, (127u - 15u) << 10));
    } else if constexpr (D == Dtype::bfloat16) {
      return static_cast<T>(fb >> 16);
    } else if constexpr (D == Dtype::float8e4m3) {
      return static_cast<T>(rebias(fb, 20, (127u - 7u) << 3));
    } else {
      static_assert(D == Dtype::float8e5m2);
      return static_cast<T>(rebias(fb, 21, (127u - 15u) << 2));
    }
  }
}

// Runtime-dtype version (host reference executor and tests): the bits in the low bytes.
CB_HD inline uint64_t encode_bits(Dtype dtype, uint32_t v) {
  switch (dtype) {
    case Dtype::int32:
      return encode_as<Dtype::int32>(v);
    case Dtype::int64:
      return encode_as<Dtype::int64>(v);
    case Dtype::float32:
      return encode_as<Dtype::float32>(v);
    case Dtype::float64:
      return encode_as<Dtype::float64>(v);
    case Dtype::float16:
      return encode_as<Dtype::float16>(v);
    case Dtype::bfloat16:
      return encode_as<Dtype::bfloat16>(v);
    case Dtype::float8e4m3:
      return encode_as<Dtype::float8e4m3>(v);
    case Dtype::float8e5m2:
      return encode_as<Dtype::float8e5m2>(v);
  }
  return 0;
}

// ---- segments: a collective's fill or expected result as runs of pattern values ----------------

// Everything a kernel needs to know about a case's values (pattern_params below).
struct PatternParams {
  Dtype dtype = Dtype::float32;
  Redop redop = Redop::sum;
  int32_t num_ranks = 1;
  ReduceRule rule;         // the reduction pattern on num_ranks ranks
  int32_t move_range = 1;  // moved values lie in [1, move_range]
};

CB_HD constexpr PatternParams pattern_params(Dtype dtype, Redop redop, int num_ranks) {
  PatternParams p;
  p.dtype = dtype;
  p.redop = redop;
  p.num_ranks = num_ranks > 1 ? num_ranks : 1;
  p.rule = reduce_rule(redop, dtype, num_ranks);
  p.move_range = move_range(dtype);
  return p;
}

enum class SegmentKind : uint8_t {
  zero,             // 0
  reduce_input,     // the input of rank `src` at index first_elem + i
  reduce_expected,  // the reduced value at index first_elem + i
  move,             // the value rank `src` sends rank `dst` at index first_elem + i
};

// A run of `count` elements at element offset `offset_elems` of a buffer, whose element i holds
// the value of `kind` at pattern index first_elem + i. A collective's fill or expected result is a
// list of segments (coll/device_plan.hpp).
struct Segment {
  uint64_t offset_elems = 0;
  uint64_t count = 0;
  uint64_t first_elem = 0;
  int32_t src = 0;  // reduce_input: the rank; move: the sending rank
  int32_t dst = 0;  // move: the receiving rank (0 where the payload is the same for every receiver)
  SegmentKind kind = SegmentKind::zero;
};

// A segment's values at consecutive pattern indices: the hash state and, for reduce_input, the
// rank's offset j = (src - index) mod n. Stepping costs one 64-bit add and a compare; only the
// start (cursor_at) takes a modulo.
struct Cursor {
  uint64_t h = 0;
  uint32_t j = 0;
};

CB_HD inline uint64_t segment_key(const Segment& s) {
  return s.kind == SegmentKind::move ? move_key(s.src, s.dst) : kReduceKey;
}

CB_HD inline Cursor cursor_at(const PatternParams& p, const Segment& s, uint64_t index) {
  Cursor c;
  c.h = weyl(segment_key(s), index);
  const auto n = static_cast<uint64_t>(p.num_ranks);
  if (s.kind == SegmentKind::reduce_input)
    c.j = static_cast<uint32_t>((static_cast<uint64_t>(s.src) % n + n - index % n) % n);
  return c;
}

// The cursor one index further.
CB_HD inline void next(Cursor& c, const PatternParams& p) {
  c.h += kWeyl;
  c.j = c.j == 0 ? static_cast<uint32_t>(p.num_ranks) - 1 : c.j - 1;
}

// The cursor `step` indices further, step_mod_n = step mod num_ranks (computed once).
CB_HD inline void advance(Cursor& c, const PatternParams& p, uint64_t step, uint32_t step_mod_n) {
  c.h += step * kWeyl;
  c.j = c.j >= step_mod_n ? c.j - step_mod_n : c.j + static_cast<uint32_t>(p.num_ranks) - step_mod_n;
}

template <SegmentKind K>
CB_HD inline uint32_t value_at(const PatternParams& p, const Cursor& c) {
  if constexpr (K == SegmentKind::zero) {
    return 0;
  } else if constexpr (K == SegmentKind::reduce_input) {
    return input_int(p.redop, p.rule, c.h, c.j);
  } else if constexpr (K == SegmentKind::reduce_expected) {
    return reduced_int(p.redop, p.rule, c.h);
  } else {
    return move_int(c.h, p.move_range);
  }
}

CB_HD inline uint32_t value_at(const PatternParams& p, SegmentKind kind, const Cursor& c) {
  switch (kind) {
    case SegmentKind::zero:
      return value_at<SegmentKind::zero>(p, c);
    case SegmentKind::reduce_input:
      return value_at<SegmentKind::reduce_input>(p, c);
    case SegmentKind::reduce_expected:
      return value_at<SegmentKind::reduce_expected>(p, c);
    case SegmentKind::move:
      return value_at<SegmentKind::move>(p, c);
  }
  return 0;
}

// Element i of segment s (a fresh cursor: the reference the stepping kernels must equal).
CB_HD inline uint32_t segment_value(const PatternParams& p, const Segment& s, uint64_t i) {
  return value_at(p, s.kind, cursor_at(p, s, s.first_elem + i));
}

}  // namespace collbench::pattern
