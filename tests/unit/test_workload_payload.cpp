// Row payloads for exact verification of MoE dispatch and combine: ranges, exactness in every
// dtype, sensitivity to misplaced rows, and the combine weighting rule.
#include <gtest/gtest.h>

#include <vector>

#include "collbench/core/dtype.hpp"
#include "collbench/core/error.hpp"
#include "collbench/workload/payload.hpp"
#include "collbench/workload/routing.hpp"

using namespace collbench;
using namespace collbench::workload;

TEST(MoePayload, MaxRowValuePerDtype) {
  for (const auto& d : all_dtypes()) {
    const int expected = d.dtype == Dtype::float8e5m2 ? 8 : 15;  // e5m2: 3 significant bits
    EXPECT_EQ(max_row_value(d.dtype), expected) << d.name;
  }
}

TEST(MoePayload, SignaturesAreSmallExactAndDiscriminating) {
  unsigned char storage[8];
  int equal_to_neighbour = 0;
  int equal_to_other_token = 0;
  constexpr int kElements = 7168;
  for (std::int64_t i = 0; i < kElements; ++i) {
    const int v = row_signature(3, 17, 42, i);
    ASSERT_GE(v, 1);
    ASSERT_LE(v, 15);
    store_element(storage, 0, Dtype::float8e4m3, v);
    ASSERT_EQ(load_element(storage, 0, Dtype::float8e4m3), v);
    const int e5m2 = row_signature(3, 17, 42, i, max_row_value(Dtype::float8e5m2));
    store_element(storage, 0, Dtype::float8e5m2, e5m2);
    ASSERT_EQ(load_element(storage, 0, Dtype::float8e5m2), e5m2);
    EXPECT_EQ(v, row_signature(row_key(3, 17, 42), i));  // both spellings agree
    equal_to_neighbour += v == row_signature(3, 17, 43, i) ? 1 : 0;
    equal_to_other_token += v == row_signature(3, 18, 42, i) ? 1 : 0;
  }
  // A misplaced row matches in about 1/15 of its elements.
  EXPECT_LT(equal_to_neighbour, kElements / 8);
  EXPECT_LT(equal_to_other_token, kElements / 8);
  EXPECT_NE(row_signature(4, 17, 42, 0) * 1000 + row_signature(4, 17, 42, 1), 0);
}

TEST(MoePayload, CombineRuleKeepsBf16SumsExact) {
  const CombineRule bf16 = combine_rule(8, Dtype::bfloat16);
  EXPECT_EQ(bf16.max_value, 15);
  EXPECT_EQ(bf16.max_weight, 2);
  EXPECT_LT(8 * bf16.max_value * bf16.max_weight, 256);  // 240
  const CombineRule wide_k = combine_rule(20, Dtype::bfloat16);
  EXPECT_EQ(wide_k.max_weight, 1);
  EXPECT_EQ(wide_k.max_value, 12);  // 20 x 12 = 240 < 256
  const CombineRule fp8 = combine_rule(8, Dtype::float8e4m3);
  EXPECT_EQ(fp8.max_value, 1);
  EXPECT_EQ(fp8.max_weight, 1);
  EXPECT_THROW(combine_rule(16, Dtype::float8e4m3), InputError);
  EXPECT_EQ(combine_rule(8, Dtype::float32).max_value, 15);
}

TEST(MoePayload, CombineOfRoutedTokensIsExactInBf16AndPartialsAddUp) {
  RoutingConfig c;
  c.num_ranks = 8;
  c.num_experts = 256;
  c.top_k = 8;
  c.num_expert_groups = 8;
  c.tokens_per_rank = 64;
  c.settings.groups_per_token = 4;
  const RoutingGenerator gen(c);
  const RankRouting r = gen.route_rank(5);
  const CombineRule rule = combine_rule(8, Dtype::bfloat16);
  unsigned char storage[8];
  bool weights_vary = false;
  for (int t = 0; t < r.num_tokens; ++t) {
    const auto experts = r.token_experts(t);
    const auto dests = r.token_dest_ranks(t);
    for (const auto e : experts) {
      const int w = combine_weight(5, t, e, rule);
      EXPECT_TRUE(w == 1 || w == 2);
      weights_vary |= w == 2;
    }
    for (std::int64_t i = 0; i < 7168; i += 97) {
      const int full = combine_expected(5, t, experts, i, rule);
      EXPECT_GE(full, 8);
      EXPECT_LT(full, 256);
      store_element(storage, 0, Dtype::bfloat16, full);
      EXPECT_EQ(load_element(storage, 0, Dtype::bfloat16), full);
      // Dedup combine: each destination sums its own experts first.
      int partials = 0;
      for (int d = 0; d < 8; ++d) {
        std::vector<std::int32_t> local;
        for (int j = 0; j < 8; ++j) {
          if (dests[j] == d) local.push_back(experts[j]);
        }
        partials += combine_expected(5, t, local, i, rule);
      }
      EXPECT_EQ(partials, full);
    }
  }
  EXPECT_TRUE(weights_vary);
}
