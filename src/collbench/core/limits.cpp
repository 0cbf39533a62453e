// Stated limits: see limits.hpp.
#include "collbench/core/limits.hpp"

#include <fmt/format.h>

#include <charconv>

namespace collbench {

std::optional<std::string> count_problem(std::string_view item, int max_value, int& value) {
  long long v = 0;
  const auto res = std::from_chars(item.data(), item.data() + item.size(), v);
  const bool digits = !item.empty() && res.ptr == item.data() + item.size();
  if (digits && res.ec == std::errc::result_out_of_range)
    return fmt::format("is larger than the limit of {}", max_value);
  if (!digits || res.ec != std::errc{}) return std::string("is not a whole number");
  if (v <= 0) return std::string("is not positive");
  if (v > max_value) return fmt::format("is larger than the limit of {}", max_value);
  value = static_cast<int>(v);
  return std::nullopt;
}

}  // namespace collbench
