// Verification patterns.
#include "collbench/coll/pattern.hpp"

namespace collbench::coll {

ReducePattern reduce_pattern(Redop redop, Dtype dtype, int num_ranks) {
  return pattern::reduce_rule(redop, dtype, num_ranks);
}

double reduce_input(const ReducePattern& p, Redop redop, int rank, int num_ranks, std::uint64_t elem_idx) {
  const auto n = static_cast<std::uint64_t>(num_ranks);
  // rank contributes iff j = (rank - i) mod n < k
  const auto j = static_cast<std::uint32_t>((static_cast<std::uint64_t>(rank) + n - elem_idx % n) % n);
  return pattern::input_int(redop, p, pattern::weyl(pattern::kReduceKey, elem_idx), j);
}

double reduce_expected(const ReducePattern& p, Redop redop, int /*num_ranks*/, std::uint64_t elem_idx) {
  return pattern::reduced_int(redop, p, pattern::weyl(pattern::kReduceKey, elem_idx));
}

int move_value_limit(Dtype dtype) {
  return pattern::move_range(dtype);
}

double move_value(Dtype dtype, int src, int dst, std::uint64_t elem_idx) {
  return pattern::move_int(pattern::weyl(pattern::move_key(src, dst), elem_idx), pattern::move_range(dtype));
}

double corrupted(double value) {
  return -(value + 1.0);
}

}  // namespace collbench::coll
