// Reduction names.
#include "collbench/core/redop.hpp"

#include <array>

#include "collbench/core/error.hpp"

namespace collbench {
namespace {
constexpr std::array<std::string_view, 4> kNames{"sum", "prod", "min", "max"};
}

std::string_view to_string(Redop r) {
  return kNames.at(static_cast<std::size_t>(r));
}

std::vector<std::string> redop_names() {
  return {kNames.begin(), kNames.end()};
}

Redop parse_redop(std::string_view name) {
  for (std::size_t i = 0; i < kNames.size(); ++i) {
    if (kNames[i] == name) return static_cast<Redop>(i);
  }
  throw InputError(unknown_name_message("reduction (-o/--redop)", name, redop_names()));
}

}  // namespace collbench
