// Core vocabulary: dtypes, minifloats, reductions, names, placement, typo suggestions.
#include <gtest/gtest.h>

#include <cmath>

#include "collbench/core/dtype.hpp"
#include "collbench/core/error.hpp"
#include "collbench/core/minifloat.hpp"
#include "collbench/core/names.hpp"
#include "collbench/core/placement.hpp"
#include "collbench/core/redop.hpp"

using namespace collbench;

TEST(Dtype, SizesAndNames) {
  EXPECT_EQ(dtype_size(Dtype::int32), 4u);
  EXPECT_EQ(dtype_size(Dtype::bfloat16), 2u);
  EXPECT_EQ(dtype_size(Dtype::float8e4m3), 1u);
  EXPECT_EQ(parse_dtype("float16"), Dtype::float16);
  EXPECT_EQ(parse_dtype("half"), Dtype::float16);  // nccl-tests spelling
  EXPECT_EQ(parse_dtype("bf16"), Dtype::bfloat16);
  EXPECT_EQ(dtype_names().size(), 8u);
}

TEST(Dtype, UnknownNamesTheAcceptedOnes) {
  try {
    parse_dtype("float33");
    FAIL();
  } catch (const InputError& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find("'float33'"), std::string::npos);
    EXPECT_NE(m.find("bfloat16"), std::string::npos);
    EXPECT_NE(m.find("did you mean"), std::string::npos);
  }
}

TEST(Minifloat, KnownEncodings) {
  EXPECT_EQ(float_to_bf16(1.0f), 0x3f80);
  EXPECT_EQ(bf16_to_float(0x4040), 3.0f);
  EXPECT_EQ(float_to_fp16(1.0f), 0x3c00);
  EXPECT_EQ(float_to_fp16(2048.0f), 0x6800);
  EXPECT_EQ(fp16_to_float(0x7bff), 65504.0f);
  EXPECT_EQ(float_to_fp8e4m3(1.0f), 0x38);
  EXPECT_EQ(fp8e4m3_to_float(0x7e), 448.0f);  // largest finite e4m3
  EXPECT_EQ(float_to_fp8e5m2(1.0f), 0x3c);
  EXPECT_EQ(fp8e5m2_to_float(0x7b), 57344.0f);
  EXPECT_TRUE(std::isinf(fp8e5m2_to_float(0x7c)));
  EXPECT_TRUE(std::isnan(fp8e4m3_to_float(0x7f)));
}

TEST(Minifloat, IntegersRoundTripUpToTheExactLimit) {
  for (int v = -2048; v <= 2048; ++v) EXPECT_EQ(fp16_to_float(float_to_fp16(static_cast<float>(v))), v);
  for (int v = -256; v <= 256; ++v) EXPECT_EQ(bf16_to_float(float_to_bf16(static_cast<float>(v))), v);
  for (int v = -16; v <= 16; ++v) EXPECT_EQ(fp8e4m3_to_float(float_to_fp8e4m3(static_cast<float>(v))), v);
  for (int v = -8; v <= 8; ++v) EXPECT_EQ(fp8e5m2_to_float(float_to_fp8e5m2(static_cast<float>(v))), v);
  // Beyond: 2049 is not representable in fp16 and rounds to even (2048).
  EXPECT_EQ(fp16_to_float(float_to_fp16(2049.0f)), 2048.0f);
  EXPECT_EQ(fp8e4m3_to_float(float_to_fp8e4m3(17.0f)), 16.0f);
}

TEST(Minifloat, AllE4M3CodesRoundTrip) {
  for (int code = 0; code < 256; ++code) {
    const float f = fp8e4m3_to_float(static_cast<std::uint8_t>(code));
    if (std::isnan(f)) continue;
    EXPECT_EQ(float_to_fp8e4m3(f), code == 0x80 ? 0x80 : code) << code;
  }
}

TEST(Redop, ParseAndApply) {
  EXPECT_EQ(parse_redop("max"), Redop::max);
  EXPECT_THROW(parse_redop("avg"), InputError);
  EXPECT_EQ(apply_redop(Redop::prod, 3, 4), 12);
  EXPECT_EQ(apply_redop(Redop::min, 3, 4), 3);
}

TEST(Names, ListsAndSuggestions) {
  EXPECT_EQ(parse_algorithm("nvlstree"), "nvlstree");
  EXPECT_THROW(parse_algorithm("nvlstre3"), InputError);
  EXPECT_EQ(closest_match("hierarchcal", algorithm_names()), "hierarchical");
  EXPECT_EQ(closest_match("zzzzzzzz", algorithm_names()), "");
  EXPECT_EQ(split_list("a, b,c", "x"), (std::vector<std::string>{"a", "b", "c"}));
  EXPECT_THROW(split_list("a,,b", "x"), InputError);
  EXPECT_EQ(parse_scope("domain"), Scope::domain);
  EXPECT_THROW(parse_timing("async"), InputError);
}

TEST(Placement, RanksPerDomainWithPartialLastDomain) {
  const auto p = placement_from_ranks_per_domain(256, 72);
  EXPECT_EQ(p.domain_sizes, (std::vector<int>{72, 72, 72, 40}));
  EXPECT_EQ(p.num_ranks(), 256);
  EXPECT_EQ(p.domain_of(0), 0);
  EXPECT_EQ(p.domain_of(215), 2);
  EXPECT_EQ(p.domain_of(216), 3);
  EXPECT_EQ(p.domain_offset(3), 216);
  EXPECT_FALSE(p.uniform());
  EXPECT_EQ(p.smallest_domain(), 40);
  EXPECT_TRUE(placement_from_ranks_per_domain(1024, 64).uniform());
  EXPECT_EQ(placement_from_ranks_per_domain(1024, 72).domain_sizes.back(), 16);
}

TEST(Placement, ExplicitSizesMustSumToTheRankCount) {
  EXPECT_EQ(placement_from_sizes(4, {3, 1}).domain_sizes, (std::vector<int>{3, 1}));
  EXPECT_THROW(placement_from_sizes(4, {3, 2}), InputError);
  EXPECT_THROW(placement_from_sizes(4, {4, 0}), InputError);
  EXPECT_EQ(parse_domain_sizes("72,72,72,40"), (std::vector<int>{72, 72, 72, 40}));
  EXPECT_THROW(parse_domain_sizes("72,x"), InputError);
  EXPECT_THROW(parse_domain_sizes("72,-1"), InputError);
}

TEST(Placement, HostKeysMustBeRackMajor) {
  EXPECT_EQ(placement_from_keys({"a", "a", "b", "b"}, false, "host").domain_sizes, (std::vector<int>{2, 2}));
  try {
    placement_from_keys({"a", "b", "a", "b"}, false, "host");
    FAIL();
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("rank 2"), std::string::npos);
    EXPECT_NE(std::string(e.what()).find("--allow-interleaved"), std::string::npos);
  }
  const auto p = placement_from_keys({"a", "b", "a", "b"}, true, "host");
  EXPECT_EQ(p.domain_sizes, (std::vector<int>{2, 2}));
  EXPECT_EQ(p.domain_of(2), 0);
  EXPECT_EQ(p.domain_of(3), 1);
}
