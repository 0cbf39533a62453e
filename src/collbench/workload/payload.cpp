// Verification payload rules (see payload.hpp).
#include "collbench/workload/payload.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "collbench/core/error.hpp"

namespace collbench::workload {

namespace {

// Largest m <= cap such that every integer 1..m survives a round trip through `dtype`. Measured
// rather than taken from a table so that it follows the actual conversions (fp8 e5m2 holds
// 1..8 exactly, then only even numbers).
int contiguous_exact_integers(Dtype dtype, int cap) {
  unsigned char storage[8] = {};
  int m = 0;
  while (m < cap) {
    store_element(storage, 0, dtype, m + 1.0);
    if (load_element(storage, 0, dtype) != m + 1.0) break;
    ++m;
  }
  return m;
}

}  // namespace

int max_row_value(Dtype dtype) {
  return contiguous_exact_integers(dtype, kMaxRowValue);
}

CombineRule combine_rule(int top_k, Dtype combine_dtype) {
  // Sums stay below `limit`, the count of contiguous exact integers (bf16: 256, so sums <= 255).
  const std::int64_t limit = contiguous_exact_integers(combine_dtype, 1 << 12);
  const int max_value = max_row_value(combine_dtype);
  if (top_k < 1 || top_k >= limit) {
    throw InputError(
        fmt::format("combine in {} cannot be verified exactly with top_k = {}: the sum of {} rows of 1 "
                    "already reaches the exact limit {}",
                    to_string(combine_dtype), top_k, top_k, limit));
  }
  CombineRule rule;
  for (const int weight : {2, 1}) {
    const auto value = static_cast<int>(std::min<std::int64_t>(max_value, (limit - 1) / (top_k * weight)));
    if (value >= max_value || (weight == 1 && value >= 1)) {
      rule.max_weight = weight;
      rule.max_value = value;
      return rule;
    }
  }
  return rule;
}

int combine_weight(int src_rank_idx, int token_idx, int expert_idx, const CombineRule& rule) {
  std::uint64_t h = hash_combine(stream_key(Stream::combine, 0), static_cast<std::uint64_t>(src_rank_idx));
  h = hash_combine(h, static_cast<std::uint64_t>(token_idx));
  h = hash_combine(h, static_cast<std::uint64_t>(expert_idx));
  return 1 + static_cast<int>(h % static_cast<std::uint64_t>(rule.max_weight));
}

int combine_expected(int src_rank_idx, int token_idx, std::span<const std::int32_t> experts, std::int64_t element_idx,
                     const CombineRule& rule) {
  int sum = 0;
  for (const auto e : experts) {
    sum +=
        combine_weight(src_rank_idx, token_idx, e, rule) * expert_output(src_rank_idx, token_idx, e, element_idx, rule);
  }
  return sum;
}

}  // namespace collbench::workload
