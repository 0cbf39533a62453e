// The NCCL backend's __host__ __device__ value rules and element codecs (backend/nccl/pattern_hd.hpp)
// against the host originals (coll/pattern.hpp, core/minifloat.hpp, core/dtype.hpp): the fill and
// check kernels run exactly these functions, so equality here is what makes device-side
// verification agree with the host path bit for bit. CPU only; runs in every build.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

#include "collbench/backend/nccl/pattern_hd.hpp"
#include "collbench/coll/device_plan.hpp"
#include "collbench/coll/pattern.hpp"
#include "collbench/core/dtype.hpp"
#include "collbench/core/minifloat.hpp"

namespace {

using namespace collbench;
namespace hd = collbench::backend::nccl::hd;
using backend::nccl::pattern_params;

constexpr Redop kRedops[] = {Redop::sum, Redop::prod, Redop::min, Redop::max};
constexpr int kRankCounts[] = {1, 2, 3, 4, 5, 7, 8, 9, 16, 17, 64, 72, 256, 1000, 1024};

std::uint32_t bits_of(float f) {
  std::uint32_t u;
  std::memcpy(&u, &f, 4);
  return u;
}

// Same float, or both NaN.
::testing::AssertionResult same_float(float a, float b) {
  if (std::isnan(a) && std::isnan(b)) return ::testing::AssertionSuccess();
  if (bits_of(a) == bits_of(b)) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << a << " vs " << b;
}

std::vector<float> encode_probe_values() {
  std::vector<float> v;
  for (int i = -70000; i <= 70000; ++i) v.push_back(static_cast<float>(i));
  for (int i = -300000; i <= 300000; i += 7) v.push_back(static_cast<float>(i) / 1024.0f);
  for (int e = -150; e <= 128; ++e) {
    const float p = std::ldexp(1.0f, e);
    for (float m : {1.0f, 1.0625f, 1.125f, 1.25f, 1.5f, 1.75f, 1.875f, 1.9375f}) {
      v.push_back(p * m);
      v.push_back(-p * m);
    }
  }
  const float specials[] = {0.0f,
                            -0.0f,
                            std::numeric_limits<float>::infinity(),
                            -std::numeric_limits<float>::infinity(),
                            std::numeric_limits<float>::quiet_NaN(),
                            -std::numeric_limits<float>::quiet_NaN(),
                            std::numeric_limits<float>::min(),
                            std::numeric_limits<float>::denorm_min(),
                            std::numeric_limits<float>::max(),
                            65504.0f,
                            65519.0f,
                            65520.0f,
                            65536.0f,  // fp16 max, below/at its overflow tie
                            448.0f,
                            463.0f,
                            464.0f,
                            480.0f,  // e4m3 max and the saturation edge
                            57344.0f,
                            61439.0f,
                            61440.0f,
                            65536.0f,  // e5m2 max and its overflow tie
                            1.0f / 65536.0f,
                            1.0f / 131072.0f,
                            3.0f / 262144.0f};
  for (float f : specials) v.push_back(f);
  std::mt19937 rng(12345);
  for (int i = 0; i < 400000; ++i) {
    const auto u = static_cast<std::uint32_t>(rng());
    float f;
    std::memcpy(&f, &u, 4);
    v.push_back(f);
  }
  return v;
}

TEST(NcclHostPatterns, MinifloatDecodeMatchesHostForEveryPattern) {
  for (std::uint32_t b = 0; b < 65536; ++b) {
    const auto bits = static_cast<std::uint16_t>(b);
    ASSERT_TRUE(same_float(hd::mini_decode(bits, hd::fp16_format()), fp16_to_float(bits))) << "fp16 " << b;
    ASSERT_TRUE(same_float(hd::bf16_to_float(bits), bf16_to_float(bits))) << "bf16 " << b;
  }
  for (std::uint32_t b = 0; b < 256; ++b) {
    const auto bits = static_cast<std::uint8_t>(b);
    ASSERT_TRUE(same_float(hd::mini_decode(bits, hd::e4m3_format()), fp8e4m3_to_float(bits))) << "e4m3 " << b;
    ASSERT_TRUE(same_float(hd::mini_decode(bits, hd::e5m2_format()), fp8e5m2_to_float(bits))) << "e5m2 " << b;
  }
}

TEST(NcclHostPatterns, MinifloatEncodeMatchesHostBitForBit) {
  for (float f : encode_probe_values()) {
    ASSERT_EQ(hd::mini_encode(f, hd::fp16_format()), float_to_fp16(f)) << "fp16 of " << f << " bits " << bits_of(f);
    ASSERT_EQ(hd::float_to_bf16(f), float_to_bf16(f)) << "bf16 of " << f;
    ASSERT_EQ(hd::mini_encode(f, hd::e4m3_format()), float_to_fp8e4m3(f)) << "e4m3 of " << f << " bits " << bits_of(f);
    ASSERT_EQ(hd::mini_encode(f, hd::e5m2_format()), float_to_fp8e5m2(f)) << "e5m2 of " << f << " bits " << bits_of(f);
  }
}

TEST(NcclHostPatterns, ElementStoreAndLoadMatchCoreForEveryDtype) {
  std::vector<double> values;
  for (int i = -5000; i <= 5000; ++i) values.push_back(i);
  std::mt19937_64 rng(7);
  std::uniform_real_distribution<double> d(-1e5, 1e5);
  for (int i = 0; i < 20000; ++i) values.push_back(d(rng));
  for (const auto& info : all_dtypes()) {
    std::vector<unsigned char> a(8), b(8);
    for (double v : values) {
      std::fill(a.begin(), a.end(), 0);
      std::fill(b.begin(), b.end(), 0);
      store_element(a.data(), 0, info.dtype, v);
      hd::store_value(b.data(), 0, info.dtype, v);
      ASSERT_EQ(std::memcmp(a.data(), b.data(), info.size_bytes), 0) << info.name << " store " << v;
      const double la = load_element(a.data(), 0, info.dtype);
      const double lb = hd::load_value(a.data(), 0, info.dtype);
      ASSERT_TRUE((std::isnan(la) && std::isnan(lb)) || la == lb) << info.name << " load " << v;
    }
  }
}

TEST(NcclHostPatterns, ExactBudgetMatchesDtypeTable) {
  for (const auto& info : all_dtypes()) {
    const std::int64_t expected = info.dtype == Dtype::float8e5m2 ? 8 : info.exact_limit;
    EXPECT_EQ(hd::exact_budget(info.dtype), expected) << info.name;
    EXPECT_EQ(pattern::move_range(info.dtype), coll::move_value_limit(info.dtype)) << info.name;
  }
}

TEST(NcclHostPatterns, PatternParamsCarryTheHostPattern) {
  for (const auto& info : all_dtypes()) {
    for (Redop r : kRedops) {
      for (int n : kRankCounts) {
        const auto host = coll::reduce_pattern(r, info.dtype, n);
        const auto p = pattern_params(info.dtype, r, n);
        EXPECT_EQ(p.rule.contributors, host.contributors);
        EXPECT_EQ(p.rule.base_range, host.base_range);
        EXPECT_EQ(p.rule.max_value, host.max_value);
        EXPECT_EQ(p.rule.identity, host.identity);
        EXPECT_EQ(p.move_range, coll::move_value_limit(info.dtype));
        EXPECT_EQ(p.num_ranks, n);
      }
    }
  }
}

TEST(NcclHostPatterns, ReduceInputAndExpectedMatchHost) {
  std::vector<std::uint64_t> elems;
  for (std::uint64_t i = 0; i < 1500; ++i) elems.push_back(i);
  for (std::uint64_t i = 0; i < 64; ++i) elems.push_back((1ULL << 40) + i * 977);  // large element indices
  for (const auto& info : all_dtypes()) {
    for (Redop r : kRedops) {
      for (int n : kRankCounts) {
        const auto host = coll::reduce_pattern(r, info.dtype, n);
        const auto p = pattern_params(info.dtype, r, n);
        for (std::uint64_t e : elems) {
          ASSERT_EQ(static_cast<double>(hd::reduce_expected(p, e)), coll::reduce_expected(host, r, n, e))
              << info.name << " " << to_string(r) << " n=" << n << " elem " << e;
          for (int rank : {0, 1, n / 2, n - 1}) {
            if (rank < 0 || rank >= n) continue;
            ASSERT_EQ(static_cast<double>(hd::reduce_input(p, rank, e)), coll::reduce_input(host, r, rank, n, e))
                << info.name << " " << to_string(r) << " n=" << n << " rank " << rank << " elem " << e;
          }
        }
      }
    }
  }
}

TEST(NcclHostPatterns, MoveValueMatchesHost) {
  for (const auto& info : all_dtypes()) {
    for (int src : {0, 1, 2, 7, 71, 1023}) {
      for (int dst : {0, 1, 5, 64, 1023}) {
        for (std::uint64_t e = 0; e < 700; ++e) {
          ASSERT_EQ(static_cast<double>(hd::move_value(info.dtype, src, dst, e)),
                    coll::move_value(info.dtype, src, dst, e))
              << info.name << " " << src << "->" << dst << " elem " << e;
        }
      }
    }
  }
}

TEST(NcclHostPatterns, SegmentValueDispatchesOnKind) {
  const auto p = pattern_params(Dtype::float32, Redop::sum, 4);
  hd::Segment s;
  s.first_elem = 10;
  s.kind = hd::SegmentKind::zero;
  EXPECT_EQ(hd::segment_value(p, s, 3), 0);
  s.kind = hd::SegmentKind::reduce_input;
  s.src = 2;
  EXPECT_EQ(hd::segment_value(p, s, 3), hd::reduce_input(p, 2, 13));
  s.kind = hd::SegmentKind::reduce_expected;
  EXPECT_EQ(hd::segment_value(p, s, 3), hd::reduce_expected(p, 13));
  s.kind = hd::SegmentKind::move;
  s.dst = 3;
  EXPECT_EQ(hd::segment_value(p, s, 3), hd::move_value(Dtype::float32, 2, 3, 13));
}

TEST(NcclHostPatterns, PoisonNeverEqualsAnExpectedValue) {
  // DeviceBuffer fills new memory with 0xff bytes: NaN in every float type, -1 in the integer
  // types. Pattern values are >= 1 (move) or >= 0 (identities), so poison always counts wrong.
  for (const auto& info : all_dtypes()) {
    std::vector<unsigned char> poison(8, 0xff);
    const double v = load_element(poison.data(), 0, info.dtype);
    EXPECT_TRUE(std::isnan(v) || v < 0.0) << info.name << " poison reads " << v;
  }
}

}  // namespace
