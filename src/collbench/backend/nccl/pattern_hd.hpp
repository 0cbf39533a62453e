// The exact-verification value rules of coll/pattern.hpp and the element encodings of
// core/dtype.cpp + core/minifloat.cpp, rewritten as __host__ __device__ functions, so that the
// NCCL backend's fill and check kernels write and expect bit for bit what the host path does.
// No CUDA header is needed: compiled by a plain C++ compiler these are ordinary inline functions,
// which is how the CPU unit tests (tests/unit/test_nccl_host_patterns.cpp) compare every one of
// them with coll::reduce_input / reduce_expected / move_value and the host minifloat codecs.
//
// Only integer and exact power-of-two double arithmetic is used (no libm), so host and device
// results cannot differ by rounding mode or math-library version.
#pragma once

#include <stdint.h>
#include <string.h>

#include "collbench/core/dtype.hpp"
#include "collbench/core/redop.hpp"

#if defined(__CUDACC__)
#define CB_HD __host__ __device__
#else
#define CB_HD
#endif

namespace collbench::backend::nccl::hd {

// Everything a kernel needs to know about a case's values (built on the host from
// coll::reduce_pattern by pattern_params() in coll/device_plan.hpp).
struct PatternParams {
  Dtype dtype = Dtype::float32;
  Redop redop = Redop::sum;
  int32_t num_ranks = 1;
  int32_t contributors = 1;  // k of coll::ReducePattern
  int32_t max_value = 1;     // contributor values lie in [1, max_value]
  int64_t identity = 0;      // what non-contributors hold (always an integer)
};

enum class SegmentKind : uint8_t {
  zero,             // 0
  reduce_input,     // coll::reduce_input(p, redop, src, n, first_elem + i)
  reduce_expected,  // coll::reduce_expected(p, redop, n, first_elem + i)
  move,             // coll::move_value(dtype, src, dst, first_elem + i)
};

// A run of `count` elements at element offset `offset_elems` of a buffer, whose element i holds
// the value of `kind` at index first_elem + i. A collective's fill or expected result is a list
// of segments (coll/device_plan.hpp).
struct Segment {
  uint64_t offset_elems = 0;
  uint64_t count = 0;
  uint64_t first_elem = 0;
  int32_t src = 0;  // reduce_input: the rank; move: the sending rank
  int32_t dst = 0;  // move: the receiving rank (0 where the payload is the same for every receiver)
  SegmentKind kind = SegmentKind::zero;
};

// ---- value rules (coll/pattern.cpp) ----------------------------------------------------------

// splitmix64 finaliser, as in coll/pattern.cpp.
CB_HD constexpr uint64_t mix(uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

// Largest L such that every integer in [0, L] is exact in the dtype (coll::exact_budget: the
// dtype's exact_limit, except e5m2 whose 2 mantissa bits stop at 8).
CB_HD constexpr int64_t exact_budget(Dtype dtype) {
  switch (dtype) {
    case Dtype::int32:
      return 2147483647LL;
    case Dtype::int64:
      return 1LL << 53;
    case Dtype::float32:
      return 1LL << 24;
    case Dtype::float64:
      return 1LL << 53;
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

CB_HD constexpr int64_t move_value_limit(Dtype dtype) {
  const int64_t budget = exact_budget(dtype);
  return budget < (1LL << 15) ? budget : (1LL << 15);
}

CB_HD constexpr int64_t move_value(Dtype dtype, int src, int dst, uint64_t elem_idx) {
  const uint64_t h = mix(elem_idx ^ (static_cast<uint64_t>(src) << 40) ^ (static_cast<uint64_t>(dst) << 20));
  return 1 + static_cast<int64_t>(h % static_cast<uint64_t>(move_value_limit(dtype)));
}

CB_HD constexpr int64_t value_of(const PatternParams& p, int rank, uint64_t elem_idx) {
  if (p.redop == Redop::prod) {
    return 1 + static_cast<int64_t>(mix(elem_idx * 1315423911ULL + static_cast<uint64_t>(rank)) % 2);
  }
  return 1 + static_cast<int64_t>(mix(elem_idx * 2654435761ULL + static_cast<uint64_t>(rank)) %
                                  static_cast<uint64_t>(p.max_value));
}

CB_HD constexpr int64_t reduce_input(const PatternParams& p, int rank, uint64_t elem_idx) {
  const auto n = static_cast<uint64_t>(p.num_ranks);
  // rank contributes iff (rank - i) mod n < k
  const uint64_t offset = (static_cast<uint64_t>(rank) + n - elem_idx % n) % n;
  if (offset >= static_cast<uint64_t>(p.contributors)) return p.identity;
  return value_of(p, rank, elem_idx);
}

CB_HD constexpr int64_t apply_redop(Redop r, int64_t a, int64_t b) {
  switch (r) {
    case Redop::sum:
      return a + b;
    case Redop::prod:
      return a * b;
    case Redop::min:
      return a < b ? a : b;
    case Redop::max:
      return a > b ? a : b;
  }
  return a;
}

// Exact in int64: every partial result is a small integer (the point of the pattern), so this
// equals coll::reduce_expected's double arithmetic.
CB_HD constexpr int64_t reduce_expected(const PatternParams& p, uint64_t elem_idx) {
  const auto n = static_cast<uint64_t>(p.num_ranks);
  int64_t acc = 0;
  for (int j = 0; j < p.contributors; ++j) {
    const auto rank = static_cast<int>((elem_idx + static_cast<uint64_t>(j)) % n);
    const int64_t v = value_of(p, rank, elem_idx);
    acc = j == 0 ? v : apply_redop(p.redop, acc, v);
  }
  if (p.contributors < p.num_ranks) acc = apply_redop(p.redop, acc, p.identity);
  return acc;
}

CB_HD constexpr int64_t segment_value(const PatternParams& p, const Segment& s, uint64_t i) {
  switch (s.kind) {
    case SegmentKind::zero:
      return 0;
    case SegmentKind::reduce_input:
      return reduce_input(p, s.src, s.first_elem + i);
    case SegmentKind::reduce_expected:
      return reduce_expected(p, s.first_elem + i);
    case SegmentKind::move:
      return move_value(p.dtype, s.src, s.dst, s.first_elem + i);
  }
  return 0;
}

// ---- exact float helpers ---------------------------------------------------------------------

CB_HD inline uint32_t float_bits(float f) {
  uint32_t u;
  memcpy(&u, &f, sizeof u);
  return u;
}
CB_HD inline float bits_float(uint32_t u) {
  float f;
  memcpy(&f, &u, sizeof f);
  return f;
}
CB_HD inline uint64_t double_bits(double d) {
  uint64_t u;
  memcpy(&u, &d, sizeof u);
  return u;
}
CB_HD inline double bits_double(uint64_t u) {
  double d;
  memcpy(&d, &u, sizeof d);
  return d;
}
// 2^e as a float, e in [-126, 127] (normal range: exact).
CB_HD inline float pow2f(int e) {
  return bits_float(static_cast<uint32_t>(e + 127) << 23);
}
// 2^e as a double, e in [-1022, 1023].
CB_HD inline double pow2d(int e) {
  return bits_double(static_cast<uint64_t>(e + 1023) << 52);
}

// Round to nearest, ties to even, for 0 <= x < 2^52 (what std::nearbyint does in the default
// rounding mode).
CB_HD inline double round_half_even(double x) {
  const auto t = static_cast<double>(static_cast<uint64_t>(x));  // truncation
  const double frac = x - t;                                     // exact
  if (frac > 0.5) return t + 1.0;
  if (frac < 0.5) return t;
  return (static_cast<uint64_t>(t) & 1u) != 0 ? t + 1.0 : t;
}

// ---- minifloat codecs (core/minifloat.cpp, same algorithm) -----------------------------------

struct MiniFormat {
  int exp_bits;
  int man_bits;
  bool has_inf;
  uint32_t nan;
};
// Functions rather than constexpr variables: device code may not refer to a host variable.
CB_HD constexpr MiniFormat fp16_format() {
  return {5, 10, true, 0x7e00};
}
CB_HD constexpr MiniFormat e5m2_format() {
  return {5, 2, true, 0x7e};
}
CB_HD constexpr MiniFormat e4m3_format() {
  return {4, 3, false, 0x7f};
}  // OCP "fn": no inf, NaN 0x7f

CB_HD inline float mini_decode(uint32_t bits, MiniFormat f) {
  const int bias = (1 << (f.exp_bits - 1)) - 1;
  const uint32_t sign = (bits >> (f.exp_bits + f.man_bits)) & 1u;
  const uint32_t exp = (bits >> f.man_bits) & ((1u << f.exp_bits) - 1u);
  const uint32_t man = bits & ((1u << f.man_bits) - 1u);
  const uint32_t max_exp = (1u << f.exp_bits) - 1u;
  float value = 0.0f;
  if (f.has_inf && exp == max_exp) {
    value = man == 0 ? bits_float(0x7f800000u) : bits_float(0x7fc00000u);
  } else if (!f.has_inf && exp == max_exp && man == (1u << f.man_bits) - 1u) {
    value = bits_float(0x7fc00000u);
  } else if (exp == 0) {
    value = static_cast<float>(man) * pow2f(1 - bias - f.man_bits);
  } else {
    value = static_cast<float>(man | (1u << f.man_bits)) * pow2f(static_cast<int>(exp) - bias - f.man_bits);
  }
  return sign != 0 ? -value : value;
}

CB_HD inline uint32_t mini_encode(float value, MiniFormat f) {
  const int bias = (1 << (f.exp_bits - 1)) - 1;
  const uint32_t u = float_bits(value);
  const uint32_t sign_bit = 1u << (f.exp_bits + f.man_bits);
  const uint32_t sign = (u >> 31) != 0 ? sign_bit : 0u;
  const uint32_t abs_bits = u & 0x7fffffffu;
  const bool is_nan = abs_bits > 0x7f800000u;
  const bool is_inf = abs_bits == 0x7f800000u;
  if (is_nan) return sign | f.nan;
  const double a = static_cast<double>(bits_float(abs_bits));
  const uint32_t max_exp = (1u << f.exp_bits) - 1u;
  const int top_exp = f.has_inf ? static_cast<int>(max_exp) - 1 : static_cast<int>(max_exp);
  const uint32_t top_man = f.has_inf ? (1u << f.man_bits) - 1u : (1u << f.man_bits) - 2u;
  const double max_finite = static_cast<double>(top_man | (1u << f.man_bits)) * pow2d(top_exp - bias - f.man_bits);
  if (is_inf || a > max_finite) {
    const double half_ulp = 0.5 * pow2d(top_exp - bias - f.man_bits);
    if (!is_inf && a < max_finite + half_ulp) {
      return sign | (static_cast<uint32_t>(top_exp) << f.man_bits) | top_man;
    }
    return f.has_inf ? (sign | (max_exp << f.man_bits)) : (sign | f.nan);
  }
  if (a == 0.0) return sign;
  // frexp: a = m * 2^e with m in [0.5, 1). `a` came from a float, so it is a normal double.
  const int e = static_cast<int>((double_bits(a) >> 52) & 0x7ffu) - 1022;
  int exp_field = e - 1 + bias;
  const int shift = exp_field <= 0 ? (1 - bias - f.man_bits) : (e - 1 - f.man_bits);
  const double scaled = a * pow2d(-shift);  // exact: a power-of-two scaling within range
  auto q = static_cast<uint32_t>(round_half_even(scaled));
  if (exp_field <= 0) return sign | q;  // subnormal (may round up into the smallest normal)
  if (q == (2u << f.man_bits)) {        // mantissa overflowed into the next binade
    q >>= 1;
    ++exp_field;
  }
  return sign | (static_cast<uint32_t>(exp_field) << f.man_bits) | (q & ((1u << f.man_bits) - 1u));
}

CB_HD inline float bf16_to_float(uint16_t bits) {
  return bits_float(static_cast<uint32_t>(bits) << 16);
}
CB_HD inline uint16_t float_to_bf16(float value) {
  const uint32_t u = float_bits(value);
  if ((u & 0x7fffffffu) > 0x7f800000u) return static_cast<uint16_t>((u >> 16) | 0x40u);
  const uint32_t rounding = 0x7fffu + ((u >> 16) & 1u);
  return static_cast<uint16_t>((u + rounding) >> 16);
}

// ---- element access through the storage format (core/dtype.cpp load/store_element) ----------

template <Dtype D>
CB_HD inline void store_as(void* base, uint64_t index, double value) {
  if constexpr (D == Dtype::int32) {
    static_cast<int32_t*>(base)[index] = static_cast<int32_t>(value);
  } else if constexpr (D == Dtype::int64) {
    static_cast<int64_t*>(base)[index] = static_cast<int64_t>(value);
  } else if constexpr (D == Dtype::float32) {
    static_cast<float*>(base)[index] = static_cast<float>(value);
  } else if constexpr (D == Dtype::float64) {
    static_cast<double*>(base)[index] = value;
  } else if constexpr (D == Dtype::float16) {
    static_cast<uint16_t*>(base)[index] = static_cast<uint16_t>(mini_encode(static_cast<float>(value), fp16_format()));
  } else if constexpr (D == Dtype::bfloat16) {
    static_cast<uint16_t*>(base)[index] = float_to_bf16(static_cast<float>(value));
  } else if constexpr (D == Dtype::float8e4m3) {
    static_cast<uint8_t*>(base)[index] = static_cast<uint8_t>(mini_encode(static_cast<float>(value), e4m3_format()));
  } else {
    static_assert(D == Dtype::float8e5m2);
    static_cast<uint8_t*>(base)[index] = static_cast<uint8_t>(mini_encode(static_cast<float>(value), e5m2_format()));
  }
}

template <Dtype D>
CB_HD inline double load_as(const void* base, uint64_t index) {
  if constexpr (D == Dtype::int32) {
    return static_cast<const int32_t*>(base)[index];
  } else if constexpr (D == Dtype::int64) {
    return static_cast<double>(static_cast<const int64_t*>(base)[index]);
  } else if constexpr (D == Dtype::float32) {
    return static_cast<const float*>(base)[index];
  } else if constexpr (D == Dtype::float64) {
    return static_cast<const double*>(base)[index];
  } else if constexpr (D == Dtype::float16) {
    return mini_decode(static_cast<const uint16_t*>(base)[index], fp16_format());
  } else if constexpr (D == Dtype::bfloat16) {
    return bf16_to_float(static_cast<const uint16_t*>(base)[index]);
  } else if constexpr (D == Dtype::float8e4m3) {
    return mini_decode(static_cast<const uint8_t*>(base)[index], e4m3_format());
  } else {
    static_assert(D == Dtype::float8e5m2);
    return mini_decode(static_cast<const uint8_t*>(base)[index], e5m2_format());
  }
}

// Runtime-dtype versions (host reference executor and tests).
CB_HD inline void store_value(void* base, uint64_t index, Dtype dtype, double value) {
  switch (dtype) {
    case Dtype::int32:
      store_as<Dtype::int32>(base, index, value);
      return;
    case Dtype::int64:
      store_as<Dtype::int64>(base, index, value);
      return;
    case Dtype::float32:
      store_as<Dtype::float32>(base, index, value);
      return;
    case Dtype::float64:
      store_as<Dtype::float64>(base, index, value);
      return;
    case Dtype::float16:
      store_as<Dtype::float16>(base, index, value);
      return;
    case Dtype::bfloat16:
      store_as<Dtype::bfloat16>(base, index, value);
      return;
    case Dtype::float8e4m3:
      store_as<Dtype::float8e4m3>(base, index, value);
      return;
    case Dtype::float8e5m2:
      store_as<Dtype::float8e5m2>(base, index, value);
      return;
  }
}

CB_HD inline double load_value(const void* base, uint64_t index, Dtype dtype) {
  switch (dtype) {
    case Dtype::int32:
      return load_as<Dtype::int32>(base, index);
    case Dtype::int64:
      return load_as<Dtype::int64>(base, index);
    case Dtype::float32:
      return load_as<Dtype::float32>(base, index);
    case Dtype::float64:
      return load_as<Dtype::float64>(base, index);
    case Dtype::float16:
      return load_as<Dtype::float16>(base, index);
    case Dtype::bfloat16:
      return load_as<Dtype::bfloat16>(base, index);
    case Dtype::float8e4m3:
      return load_as<Dtype::float8e4m3>(base, index);
    case Dtype::float8e5m2:
      return load_as<Dtype::float8e5m2>(base, index);
  }
  return 0.0;
}

}  // namespace collbench::backend::nccl::hd
