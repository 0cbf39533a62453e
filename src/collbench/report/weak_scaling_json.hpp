// Rendering the weak-scaling report (scaling/weak_scaling.hpp) for the plotting package.
#pragma once

#include <cstddef>
#include <nlohmann/json.hpp>
#include <string>

#include "collbench/scaling/weak_scaling.hpp"

namespace collbench::report {

// The JSON that `python3 -m collbench_plot weak-scaling` plots (plotting/README.md), with every
// measured and projected number of the report.
nlohmann::json weak_scaling_json(const scaling::WeakScalingReport& report);

// The plotting package's stem for group `index` ("weak_scaling_<index>_..."), to find its PNG.
std::string weak_scaling_plot_prefix(std::size_t index);

}  // namespace collbench::report
