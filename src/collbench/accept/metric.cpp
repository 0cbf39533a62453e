#include "collbench/accept/metric.hpp"

#include <fmt/format.h>

namespace collbench::accept {

bool lower_is_better(std::string_view metric) {
  return metric == "time_us" || metric == "interference";
}

std::string metric_word(std::string_view metric) {
  if (metric == "busbw_gbps") return "busbw";
  if (metric == "algbw_gbps") return "algbw";
  if (metric == "interference") return "interference";
  return "time";
}

std::string format_gbps(double gbps) {
  return fmt::format("{:.4g} GB/s", gbps);
}

std::string format_us(double us) {
  return us >= 1000.0 ? fmt::format("{:.4g} ms", us / 1000.0) : fmt::format("{:.4g} us", us);
}

std::string format_metric(std::string_view metric, double value) {
  if (metric == "interference") return fmt::format("{:.3g}", value);
  return metric == "time_us" ? format_us(value) : format_gbps(value);
}

}  // namespace collbench::accept
