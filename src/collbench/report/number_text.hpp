// How the report tables (Markdown and HTML) print numbers. Pure.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "collbench/scaling/weak_scaling.hpp"

namespace collbench::report {

// Fixed decimals for ordinary values; three significant digits for small ones (a CPU run against
// a GPU profile reaches 0.05% of the bound, which "0.1" would hide). Non-finite values print "–".
std::string number_text(double v, int digits);
// number_text, or "–" when there is no value.
std::string number_text(const std::optional<double>& v, int digits);
// "[low, high]", or "–" when there is no interval.
std::string interval_text(const std::optional<scaling::Interval>& i, int digits);
// Domain sizes as "18,18,18,18".
std::string domains_text(const std::vector<int>& sizes);

}  // namespace collbench::report
