// Typo suggestions and list formatting for error messages.
#include "collbench/core/error.hpp"

#include <algorithm>
#include <cctype>

namespace collbench {

std::size_t edit_distance(std::string_view a, std::string_view b) {
  std::vector<std::size_t> prev(b.size() + 1);
  std::vector<std::size_t> cur(b.size() + 1);
  for (std::size_t j = 0; j <= b.size(); ++j) prev[j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    cur[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      const bool same =
          std::tolower(static_cast<unsigned char>(a[i - 1])) == std::tolower(static_cast<unsigned char>(b[j - 1]));
      cur[j] = std::min({prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (same ? 0 : 1)});
    }
    std::swap(prev, cur);
  }
  return prev[b.size()];
}

std::string closest_match(std::string_view bad, const std::vector<std::string>& valid) {
  std::string best;
  std::size_t best_distance = std::string::npos;
  for (const auto& name : valid) {
    const std::size_t d = edit_distance(bad, name);
    if (d < best_distance) {
      best_distance = d;
      best = name;
    }
  }
  // A typo changes at most about a third of the word.
  const std::size_t limit = std::max<std::size_t>(2, bad.size() / 3);
  return best_distance <= limit ? best : std::string{};
}

std::string join(const std::vector<std::string>& items, std::string_view sep) {
  std::string out;
  for (std::size_t i = 0; i < items.size(); ++i) {
    if (i != 0) out += sep;
    out += items[i];
  }
  return out;
}

std::string unknown_name_message(std::string_view what, std::string_view bad, const std::vector<std::string>& valid) {
  std::string msg = "unknown " + std::string(what) + " '" + std::string(bad) + "'; accepted: " + join(valid);
  const std::string hint = closest_match(bad, valid);
  if (!hint.empty()) msg += " (did you mean '" + hint + "'?)";
  return msg;
}

}  // namespace collbench
