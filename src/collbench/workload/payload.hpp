// Row payloads for exact verification of MoE dispatch and combine (docs/interfaces.md section 8).
// Pure functions that the MPI and NCCL harnesses (host or device) share; no hardware needed.
//
// Dispatch: element i of the row that source rank s sends for token t carries
// row_signature(s, t, x, i) in [1, max_value], where x is the expert for copy rows and the
// destination rank for dedup rows. Values stay at most 15, so every one is an exact integer in
// every dtype down to fp8 e4m3 (4 significant bits: exact up to 16); fp8 e5m2 has 3 significant
// bits, so use max_row_value(dtype) (= 8 there). FP8 rows with block scales set every scale to
// 1.0, so dequantized values equal the stored integers. A row that arrives at the wrong place,
// from the wrong source, for the wrong token or expert differs in ~14/15 of its elements.
//
// Combine: expert x of source s's token t "computes" expert_output(s, t, x, i) (the same kind of
// signature, keyed by the expert), and the combined row is
//   out[t][i] = sum_{j < k} combine_weight(s, t, x_j) * expert_output(s, t, x_j, i),
// with integer weights in [1, max_weight]. combine_rule() bounds k * max_weight * max_value
// below the combine dtype's exact limit (bf16: 256), so every partial sum, in any order, is an
// exact integer: DeepSeek-V3 (k = 8, bf16) uses values <= 15 and weights <= 2, sums <= 240.
// With dedup rows the destination rank first sums its own experts' weighted outputs for the
// token (combine_expected over that subset of experts) and the source adds those partials.
#pragma once

#include <cstdint>
#include <span>

#include "collbench/core/dtype.hpp"
#include "collbench/workload/hash.hpp"

namespace collbench::workload {

inline constexpr int kMaxRowValue = 15;

// Largest m <= 15 such that every integer 1..m survives a round trip through `dtype`
// (15 for every dtype except float8e5m2: 8).
int max_row_value(Dtype dtype);

// Identity of a row: (source rank, token, expert for copy rows or destination rank for dedup rows).
constexpr std::uint64_t row_key(int src_rank_idx, int token_idx, int expert_or_dest_idx) {
  std::uint64_t h = hash_combine(stream_key(Stream::payload, 0), static_cast<std::uint64_t>(src_rank_idx));
  h = hash_combine(h, static_cast<std::uint64_t>(token_idx));
  return hash_combine(h, static_cast<std::uint64_t>(expert_or_dest_idx));
}

// Value in [1, max_value] of element `element_idx` of the row with this key. One hash serves 16
// consecutive elements (4 bits each), so filling a 7168-element row costs 448 hashes.
constexpr int row_signature(std::uint64_t key, std::int64_t element_idx, int max_value = kMaxRowValue) {
  const std::uint64_t h = mix64(key + static_cast<std::uint64_t>(element_idx / 16 + 1) * kGoldenGamma);
  const auto nibble = static_cast<int>((h >> (4 * (element_idx % 16))) & 0xF);
  return 1 + nibble % max_value;
}

constexpr int row_signature(int src_rank_idx, int token_idx, int expert_or_dest_idx, std::int64_t element_idx,
                            int max_value = kMaxRowValue) {
  return row_signature(row_key(src_rank_idx, token_idx, expert_or_dest_idx), element_idx, max_value);
}

struct CombineRule {
  int max_value = 1;   // expert outputs lie in [1, max_value]
  int max_weight = 1;  // combine weights lie in [1, max_weight]
};

// The largest values (up to 15) and weights (up to 2, preferring larger values) with
// top_k * max_weight * max_value < exact limit of `combine_dtype` (bf16: 256).
// InputError when even all-ones would overflow (top_k >= limit).
CombineRule combine_rule(int top_k, Dtype combine_dtype);

// Weight in [1, rule.max_weight] of expert `expert_idx` for token `token_idx` of `src_rank_idx`.
int combine_weight(int src_rank_idx, int token_idx, int expert_idx, const CombineRule& rule);

// What expert `expert_idx` returns for element `element_idx` of the token: in [1, rule.max_value].
inline int expert_output(int src_rank_idx, int token_idx, int expert_idx, std::int64_t element_idx,
                         const CombineRule& rule) {
  return row_signature(src_rank_idx, token_idx, expert_idx, element_idx, rule.max_value);
}

// Exact sum over `experts` (all k of the token, or the subset on one destination rank for a
// dedup partial) of weight * expert_output.
int combine_expected(int src_rank_idx, int token_idx, std::span<const std::int32_t> experts, std::int64_t element_idx,
                     const CombineRule& rule);

}  // namespace collbench::workload
