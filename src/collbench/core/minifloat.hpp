// Software conversions for the 16- and 8-bit float formats (bfloat16, IEEE half, FP8 E4M3 and
// E5M2, OCP definitions). Host-side only: used to fill inputs, check results and implement
// MPI reductions on these types. Round-to-nearest-even on encode.
#pragma once

#include <cstdint>

namespace collbench {

float bf16_to_float(std::uint16_t bits);
std::uint16_t float_to_bf16(float value);

float fp16_to_float(std::uint16_t bits);
std::uint16_t float_to_fp16(float value);

// E4M3 (OCP "fn" variant: no infinities, one NaN pattern 0x7f/0xff, max 448).
float fp8e4m3_to_float(std::uint8_t bits);
std::uint8_t float_to_fp8e4m3(float value);

// E5M2 (IEEE-like: infinities and NaNs, max 57344).
float fp8e5m2_to_float(std::uint8_t bits);
std::uint8_t float_to_fp8e5m2(float value);

}  // namespace collbench
