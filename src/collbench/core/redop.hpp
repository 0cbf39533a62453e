// Reductions (`-o/--redop`): sum, prod, min, max. Never called "op" in code or records.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace collbench {

enum class Redop : std::uint8_t { sum, prod, min, max };

std::string_view to_string(Redop r);
Redop parse_redop(std::string_view name);  // InputError naming the accepted names
std::vector<std::string> redop_names();

// Combine two values under the reduction (host reference and MPI user ops).
constexpr double apply_redop(Redop r, double a, double b) {
  switch (r) {
    case Redop::sum:
      return a + b;
    case Redop::prod:
      return a * b;
    case Redop::min:
      return a < b ? a : b;
    case Redop::max:
      return a > b ? a : b;
  }
  return a;
}

}  // namespace collbench
