// Minifloat encode/decode. One generic routine parameterised by exponent/mantissa widths
// handles fp16, e4m3 and e5m2; bfloat16 is the top half of a float32.
#include "collbench/core/minifloat.hpp"

#include <bit>
#include <cmath>
#include <limits>

namespace collbench {
namespace {

struct Format {
  int exp_bits;
  int man_bits;
  bool has_inf;       // IEEE-style top exponent reserved for inf/NaN
  std::uint32_t nan;  // canonical NaN pattern (without sign)
};

constexpr Format kFp16{5, 10, true, 0x7e00};
constexpr Format kE5M2{5, 2, true, 0x7e};
constexpr Format kE4M3{4, 3, false, 0x7f};

float decode(std::uint32_t bits, const Format& f) {
  const int bias = (1 << (f.exp_bits - 1)) - 1;
  const std::uint32_t sign = (bits >> (f.exp_bits + f.man_bits)) & 1u;
  const std::uint32_t exp = (bits >> f.man_bits) & ((1u << f.exp_bits) - 1u);
  const std::uint32_t man = bits & ((1u << f.man_bits) - 1u);
  const std::uint32_t max_exp = (1u << f.exp_bits) - 1u;
  float value = 0.0f;
  if (f.has_inf && exp == max_exp) {
    value = man == 0 ? std::numeric_limits<float>::infinity() : std::numeric_limits<float>::quiet_NaN();
  } else if (!f.has_inf && exp == max_exp && man == (1u << f.man_bits) - 1u) {
    value = std::numeric_limits<float>::quiet_NaN();
  } else if (exp == 0) {
    value = std::ldexp(static_cast<float>(man), 1 - bias - f.man_bits);
  } else {
    value = std::ldexp(static_cast<float>(man | (1u << f.man_bits)), static_cast<int>(exp) - bias - f.man_bits);
  }
  return sign != 0 ? -value : value;
}

std::uint32_t encode(float value, const Format& f) {
  const int bias = (1 << (f.exp_bits - 1)) - 1;
  const std::uint32_t sign_bit = 1u << (f.exp_bits + f.man_bits);
  const std::uint32_t sign = std::signbit(value) ? sign_bit : 0u;
  if (std::isnan(value)) return sign | f.nan;
  const double a = std::fabs(static_cast<double>(value));
  const std::uint32_t max_exp = (1u << f.exp_bits) - 1u;
  // Largest finite value.
  const int top_exp = f.has_inf ? static_cast<int>(max_exp) - 1 : static_cast<int>(max_exp);
  const std::uint32_t top_man = f.has_inf ? (1u << f.man_bits) - 1u : (1u << f.man_bits) - 2u;
  const double max_finite = std::ldexp(static_cast<double>(top_man | (1u << f.man_bits)), top_exp - bias - f.man_bits);
  if (std::isinf(value) || a > max_finite) {
    // Overflow: infinity where the format has one, else saturate to NaN per OCP e4m3fn.
    if (f.has_inf) {
      // Round-to-nearest: values below max + half ulp round to max.
      const double half_ulp = std::ldexp(0.5, top_exp - bias - f.man_bits);
      if (!std::isinf(value) && a < max_finite + half_ulp)
        return sign | (static_cast<std::uint32_t>(top_exp) << f.man_bits) | top_man;
      return sign | (max_exp << f.man_bits);
    }
    const double half_ulp = std::ldexp(0.5, top_exp - bias - f.man_bits);
    if (!std::isinf(value) && a < max_finite + half_ulp)
      return sign | (static_cast<std::uint32_t>(top_exp) << f.man_bits) | top_man;
    return sign | f.nan;
  }
  if (a == 0.0) return sign;
  int e = 0;
  std::frexp(a, &e);  // a = m * 2^e, m in [0.5, 1)
  int exp_field = e - 1 + bias;
  // Scale so that the mantissa (with implicit bit) becomes an integer with man_bits fraction bits.
  int shift = exp_field <= 0 ? (1 - bias - f.man_bits) : (e - 1 - f.man_bits);
  double scaled = std::ldexp(a, -shift);
  double rounded = std::nearbyint(scaled);  // default rounding mode: nearest-even
  auto q = static_cast<std::uint32_t>(rounded);
  if (exp_field <= 0) {
    // Subnormal (may round up into the smallest normal: q == 1 << man_bits works naturally).
    return sign | q;
  }
  if (q == (2u << f.man_bits)) {  // mantissa overflowed into the next binade
    q >>= 1;
    ++exp_field;
  }
  return sign | (static_cast<std::uint32_t>(exp_field) << f.man_bits) | (q & ((1u << f.man_bits) - 1u));
}

}  // namespace

float bf16_to_float(std::uint16_t bits) {
  return std::bit_cast<float>(static_cast<std::uint32_t>(bits) << 16);
}

std::uint16_t float_to_bf16(float value) {
  const auto u = std::bit_cast<std::uint32_t>(value);
  if (std::isnan(value)) return static_cast<std::uint16_t>((u >> 16) | 0x40u);
  const std::uint32_t rounding = 0x7fffu + ((u >> 16) & 1u);
  return static_cast<std::uint16_t>((u + rounding) >> 16);
}

float fp16_to_float(std::uint16_t bits) {
  return decode(bits, kFp16);
}
std::uint16_t float_to_fp16(float value) {
  return static_cast<std::uint16_t>(encode(value, kFp16));
}
float fp8e4m3_to_float(std::uint8_t bits) {
  return decode(bits, kE4M3);
}
std::uint8_t float_to_fp8e4m3(float value) {
  return static_cast<std::uint8_t>(encode(value, kE4M3));
}
float fp8e5m2_to_float(std::uint8_t bits) {
  return decode(bits, kE5M2);
}
std::uint8_t float_to_fp8e5m2(float value) {
  return static_cast<std::uint8_t>(encode(value, kE5M2));
}

}  // namespace collbench
