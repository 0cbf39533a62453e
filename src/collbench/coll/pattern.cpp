// Verification patterns.
#include "collbench/coll/pattern.hpp"

#include <algorithm>
#include <cmath>

namespace collbench::coll {
namespace {

// splitmix64 finaliser: a cheap, well-mixed hash of the element coordinates.
constexpr std::uint64_t mix(std::uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

// Largest integer L such that every integer in [0, L] is exact in the dtype.
std::int64_t exact_budget(Dtype dtype) {
  switch (dtype) {
    case Dtype::float8e5m2:
      return 8;  // 2 mantissa bits: 9 is not representable
    default:
      return dtype_info(dtype).exact_limit;
  }
}

int contributor_cap(Dtype dtype) {
  switch (dtype) {
    case Dtype::float8e4m3:
    case Dtype::float8e5m2:
      return 2;
    case Dtype::bfloat16:
      return 8;
    default:
      return 16;
  }
}

int value_of(const ReducePattern& p, Redop redop, int rank, std::uint64_t elem_idx) {
  if (redop == Redop::prod)
    return 1 + static_cast<int>(mix(elem_idx * 1315423911ULL + static_cast<std::uint64_t>(rank)) % 2);
  return 1 + static_cast<int>(mix(elem_idx * 2654435761ULL + static_cast<std::uint64_t>(rank)) %
                              static_cast<std::uint64_t>(p.max_value));
}

}  // namespace

ReducePattern reduce_pattern(Redop redop, Dtype dtype, int num_ranks) {
  const std::int64_t budget = exact_budget(dtype);
  const int n = std::max(num_ranks, 1);
  ReducePattern p{};
  switch (redop) {
    case Redop::sum: {
      p.contributors = std::min(n, contributor_cap(dtype));
      // k values of at most v must stay below the budget: k * v <= budget - 1.
      p.max_value = static_cast<int>(std::min<std::int64_t>(1000, (budget - 1) / p.contributors));
      p.identity = 0.0;
      break;
    }
    case Redop::prod: {
      // Values in {1, 2}: the product is at most 2^k, so k <= log2(budget).
      const int log2_budget = static_cast<int>(std::floor(std::log2(static_cast<double>(budget))));
      p.contributors = std::min({n, contributor_cap(dtype), log2_budget});
      p.max_value = 2;
      p.identity = 1.0;
      break;
    }
    case Redop::min:
    case Redop::max: {
      p.contributors = std::min(n, contributor_cap(dtype));
      p.max_value = static_cast<int>(std::min<std::int64_t>(1000, budget - 1));
      // min: non-contributors hold a value above every contributor; max: below.
      p.identity = redop == Redop::min ? static_cast<double>(p.max_value + 1) : 0.0;
      break;
    }
  }
  p.max_value = std::max(p.max_value, 1);
  return p;
}

double reduce_input(const ReducePattern& p, Redop redop, int rank, int num_ranks, std::uint64_t elem_idx) {
  const auto n = static_cast<std::uint64_t>(num_ranks);
  // rank contributes iff (rank - i) mod n < k
  const std::uint64_t offset = (static_cast<std::uint64_t>(rank) + n - elem_idx % n) % n;
  if (offset >= static_cast<std::uint64_t>(p.contributors)) return p.identity;
  return value_of(p, redop, rank, elem_idx);
}

double reduce_expected(const ReducePattern& p, Redop redop, int num_ranks, std::uint64_t elem_idx) {
  const auto n = static_cast<std::uint64_t>(num_ranks);
  double acc = 0.0;
  for (int j = 0; j < p.contributors; ++j) {
    const auto rank = static_cast<int>((elem_idx + static_cast<std::uint64_t>(j)) % n);
    const double v = value_of(p, redop, rank, elem_idx);
    acc = j == 0 ? v : apply_redop(redop, acc, v);
  }
  if (p.contributors < num_ranks) acc = apply_redop(redop, acc, p.identity);
  return acc;
}

int move_value_limit(Dtype dtype) {
  return static_cast<int>(std::min<std::int64_t>(exact_budget(dtype), 1 << 15));
}

double move_value(Dtype dtype, int src, int dst, std::uint64_t elem_idx) {
  const std::uint64_t h =
      mix(elem_idx ^ (static_cast<std::uint64_t>(src) << 40) ^ (static_cast<std::uint64_t>(dst) << 20));
  return 1.0 + static_cast<double>(h % static_cast<std::uint64_t>(move_value_limit(dtype)));
}

double corrupted(double value) {
  return -(value + 1.0);
}

}  // namespace collbench::coll
