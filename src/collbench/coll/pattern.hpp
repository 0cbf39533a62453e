// Exactly verifiable inputs (docs/interfaces.md section 8). Pure functions shared by every backend:
// the value rules themselves are core/pattern_rules.hpp, which the NCCL fill and check kernels
// run as well, so host and device compute the same values from one header.
//
// Reductions: element i of the full vector receives a non-identity value from only the
// k = contributors ranks r = (i + j) mod n, j < k; every other rank holds the reduction's
// identity. Contributor j holds base(i) + j (sum, min, max) or 1 + bit j of the element's hash
// (prod), so the reduced value has a closed form (reduce_expected: O(1) per element whatever n).
// Rotating the contributor set across elements checks every rank, and bounding k and the values
// keeps every partial result an exactly representable integer in any order of reduction
// (sum < 2^4 for fp8 e4m3, < 2^8 for bfloat16, < 2^11 for float16, ...).
//
// Data movement (all-gather, all-to-all, broadcast, send/recv): the value of element i that
// rank `src` sends to rank `dst` is a small integer hashed from (src, dst, i), so a block that
// arrives at the wrong place or from the wrong peer is counted as wrong.
#pragma once

#include <cstdint>

#include "collbench/core/dtype.hpp"
#include "collbench/core/pattern_rules.hpp"
#include "collbench/core/redop.hpp"

namespace collbench::coll {

// contributors (k), base_range, max_value (contributor values lie in [1, max_value]), identity.
using ReducePattern = pattern::ReduceRule;

// The pattern for a reduction in a dtype on n ranks.
ReducePattern reduce_pattern(Redop redop, Dtype dtype, int num_ranks);

// Input held by `rank` at global element `elem_idx`.
double reduce_input(const ReducePattern& p, Redop redop, int rank, int num_ranks, std::uint64_t elem_idx);

// The exact reduction result at global element `elem_idx` (the closed form).
double reduce_expected(const ReducePattern& p, Redop redop, int num_ranks, std::uint64_t elem_idx);

// Largest value used by data-movement patterns in a dtype (values lie in [1, limit]).
int move_value_limit(Dtype dtype);

// Value of element `elem_idx` that rank `src` sends to rank `dst` (dst = 0 where the payload
// is the same for every receiver).
double move_value(Dtype dtype, int src, int dst, std::uint64_t elem_idx);

// A value that differs from `value` in every dtype (used by fault injection to corrupt one
// element so that verification must catch it).
double corrupted(double value);

}  // namespace collbench::coll
