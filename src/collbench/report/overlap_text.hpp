// The overlap efficiency and exposed time as the reports print them (docs/overlap.md, "Reading
// the fields"; issue 37 item 11). Efficiency lies in [0, 1] between serial (0) and full overlap
// (1) when the three timings agree; above 1 is impossible (both at once cannot beat the longer
// one alone) and below 0 is contention. A point estimate outside [0, 1] whose interval reaches
// back in is noise and printed as "within noise of ..." with its interval, never as a result.
// Pure.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

namespace collbench::report {

// From a record's `overlap` object (efficiency, efficiency_ci):
//   in [0, 1]:                  "0.880 [0.801, 0.951]" ("0.880" without an interval);
//   above 1, interval reaches 1: "within noise of full overlap (1.003 [0.981, 1.02])";
//   above 1 beyond its interval: "not a result: 1.58 [1.21, 1.9] is above 1 beyond its interval
//                                 (the phases ran under different conditions)";
//   above 1 without interval:   "not a result: 1.003 is above 1 (noise; no interval in the record)";
//   below 0, interval reaches 0: "within noise of no overlap (-0.0500 [-0.2, 0.1])";
//   below 0 beyond its interval: "-0.300 [-0.4, -0.2] (slower together: contention)";
//   no efficiency:              "n/a".
std::string overlap_efficiency_text(const nlohmann::json& overlap, int digits);

// exposed_us (exposed_ci_us): "20.0 us [12.1, 30.5]"; a negative value whose interval reaches 0:
// "within noise of 0 (-14.5 us [-30.1, 2])"; beyond it: "not a result: -14.5 us [-30.1, -2] is below
// 0 beyond its interval"; negative without an interval: "not a result: -14.5 us is below 0 (noise)".
std::string overlap_exposed_text(const nlohmann::json& overlap, int digits);

}  // namespace collbench::report
