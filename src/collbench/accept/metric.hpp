// The metrics an acceptance check is judged on and how each one reads; shared by the judge, the
// text/JSON writers and the HTML page so that a threshold's direction and units cannot disagree
// between them. Pure.
#pragma once

#include <string>
#include <string_view>

namespace collbench::accept {

// Metric names as they appear in verdict JSON: busbw_gbps, algbw_gbps, time_us, interference.
// True for the metrics where smaller is better (a time, the interference ratio t_both / max alone):
// their limits are ceilings, the others' floors.
bool lower_is_better(std::string_view metric);

// The short word a table shows: busbw, algbw, time, interference.
std::string metric_word(std::string_view metric);

// A value in the metric's unit: "812.3 GB/s", "41.2 us" / "3.1 ms", "1.21" (a ratio).
std::string format_metric(std::string_view metric, double value);
std::string format_gbps(double gbps);
std::string format_us(double us);

}  // namespace collbench::accept
