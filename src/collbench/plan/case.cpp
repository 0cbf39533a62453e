// Size series.
#include "collbench/plan/case.hpp"

#include <cmath>

#include <fmt/format.h>

#include "collbench/core/error.hpp"

namespace collbench::plan {

std::vector<std::uint64_t> size_series(std::uint64_t min_bytes, std::uint64_t max_bytes, double factor,
                                       std::uint64_t increment) {
  if (min_bytes > max_bytes) {
    throw InputError(fmt::format("minimum size {} (-b) is larger than maximum size {} (-e)", min_bytes, max_bytes));
  }
  std::vector<std::uint64_t> sizes;
  if (increment > 0) {
    for (std::uint64_t s = min_bytes; s <= max_bytes; s += increment) sizes.push_back(s);
    return sizes;
  }
  if (!(factor > 1.0)) {
    if (min_bytes == max_bytes) return {min_bytes};
    throw InputError(fmt::format("size factor (-f) {} must be greater than 1 (or give an increment with -i)", factor));
  }
  if (min_bytes == 0) {
    throw InputError("minimum size 0 (-b) cannot grow by a factor; start at 1 or more, or use -i");
  }
  for (double s = static_cast<double>(min_bytes); s <= static_cast<double>(max_bytes) * (1 + 1e-12); s *= factor) {
    const auto v = static_cast<std::uint64_t>(std::llround(s));
    if (sizes.empty() || v != sizes.back()) sizes.push_back(v);
    if (sizes.size() > 100000) throw InputError("size series has more than 100000 sizes; raise -f or -i");
  }
  return sizes;
}

}  // namespace collbench::plan
