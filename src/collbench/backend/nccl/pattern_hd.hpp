// The NCCL backend's view of the verification pattern: the value rules, parameters and segments
// of core/pattern_rules.hpp (shared with the host path, coll/pattern.cpp) under the names the
// kernels use, and the element encodings of core/dtype.cpp + core/minifloat.cpp rewritten as
// __host__ __device__ functions (single-element reads and writes: fault injection, tests). No
// CUDA header is needed: compiled by a plain C++ compiler these are ordinary inline functions,
// which is how the CPU unit tests (tests/unit/test_nccl_host_patterns.cpp) compare every one of
// them with the host originals.
//
// Only integer and exact power-of-two float arithmetic is used (no libm), so host and device
// results cannot differ by rounding mode or math-library version.
#pragma once

#include <stdint.h>
#include <string.h>

#include "collbench/core/dtype.hpp"
#include "collbench/core/pattern_rules.hpp"
#include "collbench/core/redop.hpp"

namespace collbench::backend::nccl::hd {

using pattern::Cursor;
using pattern::exact_budget;
using pattern::PatternParams;
using pattern::Segment;
using pattern::segment_value;
using pattern::SegmentKind;

// The input of `rank` at element `elem_idx` (coll::reduce_input).
CB_HD inline uint32_t reduce_input(const PatternParams& p, int rank, uint64_t elem_idx) {
  Segment s;
  s.kind = SegmentKind::reduce_input;
  s.src = rank;
  s.first_elem = elem_idx;
  return segment_value(p, s, 0);
}

// The reduced value at element `elem_idx` (coll::reduce_expected).
CB_HD inline uint32_t reduce_expected(const PatternParams& p, uint64_t elem_idx) {
  return pattern::reduced_int(p.redop, p.rule, pattern::weyl(pattern::kReduceKey, elem_idx));
}

// The value `src` sends `dst` at element `elem_idx` (coll::move_value).
CB_HD inline uint32_t move_value(Dtype dtype, int src, int dst, uint64_t elem_idx) {
  return pattern::move_int(pattern::weyl(pattern::move_key(src, dst), elem_idx), pattern::move_range(dtype));
}

// ---- exact float helpers ---------------------------------------------------------------------

CB_HD inline uint32_t float_bits(float f) {
  return pattern::f32_bits(f);
}
CB_HD inline float bits_float(uint32_t u) {
  return pattern::f32_of_bits(u);
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
