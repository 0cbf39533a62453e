#include "collbench/report/number_text.hpp"

#include <fmt/format.h>

#include <cmath>

namespace collbench::report {

using scaling::Interval;

std::string number_text(double v, int digits) {
  if (!std::isfinite(v)) return "–";
  const double smallest = digits >= 3 ? 0.1 : 1.0;
  return v != 0.0 && std::abs(v) < smallest ? fmt::format("{:.3g}", v) : fmt::format("{:.{}f}", v, digits);
}

std::string number_text(const std::optional<double>& v, int digits) {
  return v ? number_text(*v, digits) : std::string("–");
}

std::string interval_text(const std::optional<Interval>& i, int digits) {
  return i ? fmt::format("[{}, {}]", number_text(i->low, digits), number_text(i->high, digits)) : std::string("–");
}

std::string domains_text(const std::vector<int>& sizes) {
  return fmt::format("{}", fmt::join(sizes, ","));
}

}  // namespace collbench::report
