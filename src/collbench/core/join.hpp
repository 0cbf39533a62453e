// Numbers joined into one string ("64,64,8"), for keys and messages.
#pragma once

#include <span>
#include <string>
#include <string_view>

namespace collbench {

// Appends rather than writing `(i ? "," : "") + std::to_string(x)`: that operator+ on a temporary
// makes GCC 12 at -O3 report a false -Wrestrict inside libstdc++ (GCC PR 105329).
inline std::string join_ints(std::span<const int> items, std::string_view sep = ",") {
  std::string out;
  for (std::size_t i = 0; i < items.size(); ++i) {
    if (i != 0) out += sep;
    out += std::to_string(items[i]);
  }
  return out;
}

}  // namespace collbench
