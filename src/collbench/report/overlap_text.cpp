// Overlap efficiency and exposed time with their intervals (see overlap_text.hpp).
#include "collbench/report/overlap_text.hpp"

#include <fmt/format.h>

#include <optional>
#include <utility>

namespace collbench::report {
namespace {

std::optional<double> number_at(const nlohmann::json& o, const char* key) {
  if (!o.is_object() || !o.contains(key) || !o[key].is_number()) return std::nullopt;
  return o[key].get<double>();
}

std::optional<std::pair<double, double>> interval_at(const nlohmann::json& o, const char* key) {
  if (!o.is_object() || !o.contains(key) || !o[key].is_array() || o[key].size() != 2) return std::nullopt;
  const auto& a = o[key];
  if (!a[0].is_number() || !a[1].is_number()) return std::nullopt;
  return std::make_pair(a[0].get<double>(), a[1].get<double>());
}

// Fixed decimals, as the console line always printed these numbers.
std::string fixed(double v, int digits) {
  return fmt::format("{:.{}f}", v, digits);
}

std::string with_interval(double v, const std::optional<std::pair<double, double>>& ci, int digits,
                          const char* unit = "") {
  std::string out = fixed(v, digits) + unit;
  if (ci) out += fmt::format(" [{}, {}]", fixed(ci->first, digits), fixed(ci->second, digits));
  return out;
}

}  // namespace

std::string overlap_efficiency_text(const nlohmann::json& overlap, int digits) {
  const auto e = number_at(overlap, "efficiency");
  if (!e) return "n/a";
  const auto ci = interval_at(overlap, "efficiency_ci");
  const std::string shown = with_interval(*e, ci, digits);
  if (*e >= 0.0 && *e <= 1.0) return shown;
  if (*e > 1.0) {
    if (!ci) return fmt::format("not a result: {} is above 1 (noise; no interval in the record)", shown);
    if (ci->first <= 1.0) return fmt::format("within noise of full overlap ({})", shown);
    return fmt::format("not a result: {} is above 1 beyond its interval (the phases ran under different conditions)",
                       shown);
  }
  if (ci && ci->second >= 0.0) return fmt::format("within noise of no overlap ({})", shown);
  return shown + " (slower together: contention)";
}

std::string overlap_exposed_text(const nlohmann::json& overlap, int digits) {
  const auto x = number_at(overlap, "exposed_us");
  if (!x) return "n/a";
  const auto ci = interval_at(overlap, "exposed_ci_us");
  const std::string shown = with_interval(*x, ci, digits, " us");
  if (*x >= 0.0) return shown;
  if (!ci) return fmt::format("not a result: {} is below 0 (noise)", shown);
  if (ci->second >= 0.0) return fmt::format("within noise of 0 ({})", shown);
  return fmt::format("not a result: {} is below 0 beyond its interval", shown);
}

}  // namespace collbench::report
