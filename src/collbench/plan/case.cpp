// Size series.
#include "collbench/plan/case.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "collbench/core/error.hpp"

namespace collbench::plan {

std::vector<std::uint64_t> size_series(std::uint64_t min_bytes, std::uint64_t max_bytes, double factor,
                                       std::uint64_t increment) {
  if (min_bytes > max_bytes) {
    throw InputError(fmt::format("minimum size {} (-b) is larger than maximum size {} (-e)", min_bytes, max_bytes));
  }
  constexpr std::uint64_t kMaxSizes = 100000;
  std::vector<std::uint64_t> sizes;
  if (increment > 0) {
    if ((max_bytes - min_bytes) / increment >= kMaxSizes) {
      throw InputError(fmt::format("size series {}..{} in steps of {} has more than {} sizes; raise -i", min_bytes,
                                   max_bytes, increment, kMaxSizes));
    }
    // Counted, so that a step past 2^64 cannot wrap around.
    for (std::uint64_t k = 0; k <= (max_bytes - min_bytes) / increment; ++k) sizes.push_back(min_bytes + k * increment);
    return sizes;
  }
  if (!std::isfinite(factor)) throw InputError(fmt::format("size factor (-f) {} must be a finite number", factor));
  if (!(factor > 1.0)) {
    if (min_bytes == max_bytes) return {min_bytes};
    throw InputError(fmt::format("size factor (-f) {} must be greater than 1 (or give an increment with -i)", factor));
  }
  if (min_bytes == 0) {
    throw InputError("minimum size 0 (-b) cannot grow by a factor; start at 1 or more, or use -i");
  }
  // A factor barely above 1 would spin for ages on sizes that round to the same byte count:
  // bound the steps, not just the distinct sizes.
  const double steps = std::log(static_cast<double>(max_bytes) / static_cast<double>(min_bytes)) / std::log(factor);
  if (!(steps < static_cast<double>(kMaxSizes))) {
    throw InputError(fmt::format("size series {}..{} by a factor of {} has more than {} sizes; raise -f or use -i",
                                 min_bytes, max_bytes, factor, kMaxSizes));
  }
  const double limit = static_cast<double>(max_bytes) * (1 + 1e-12);
  for (double s = static_cast<double>(min_bytes); s <= limit; s *= factor) {
    // Sizes up to 2^64 - 1 are valid but llround returns a signed long long: round in double.
    const double r = std::round(s);
    const auto v = r >= static_cast<double>(max_bytes) ? max_bytes : static_cast<std::uint64_t>(r);
    if (sizes.empty() || v != sizes.back()) sizes.push_back(v);
  }
  return sizes;
}

}  // namespace collbench::plan
