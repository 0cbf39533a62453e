// Overlap efficiency and exposed time with their intervals (issue 37 item 11): a point estimate
// outside [0, 1] is "within noise" when its interval reaches back in, and never printed as a
// result. Exact texts.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "collbench/report/overlap_text.hpp"

using collbench::report::overlap_efficiency_text;
using collbench::report::overlap_exposed_text;
using nlohmann::json;

namespace {

json overlap(double efficiency, json ci, double exposed, json exposed_ci) {
  return {{"efficiency", efficiency}, {"efficiency_ci", ci}, {"exposed_us", exposed}, {"exposed_ci_us", exposed_ci}};
}

}  // namespace

TEST(OverlapText, InsideZeroToOneIsAResultWithItsInterval) {
  EXPECT_EQ(overlap_efficiency_text(overlap(0.88, {0.80, 0.95}, 20.0, {12.1, 30.5}), 2), "0.88 [0.80, 0.95]");
  EXPECT_EQ(overlap_exposed_text(overlap(0.88, {0.80, 0.95}, 20.0, {12.1, 30.5}), 1), "20.0 us [12.1, 30.5]");
  EXPECT_EQ(overlap_efficiency_text(overlap(1.0, nullptr, 0.0, nullptr), 2), "1.00");  // an older record
  EXPECT_EQ(overlap_efficiency_text(json{{"efficiency", nullptr}}, 2), "n/a");
}

TEST(OverlapText, AboveOneIsNoiseOrNotAResultNeverAResult) {
  // The record: efficiency 1.0034, exposed -14.5 us on a noisy 2-rank run.
  const json noisy = overlap(1.0034, {0.981, 1.02}, -14.5, {-30.1, 2.0});
  EXPECT_EQ(overlap_efficiency_text(noisy, 3), "within noise of full overlap (1.003 [0.981, 1.020])");
  EXPECT_EQ(overlap_exposed_text(noisy, 1), "within noise of 0 (-14.5 us [-30.1, 2.0])");
  const json apart = overlap(1.58, {1.21, 1.9}, -15849.3, {-20000.0, -9000.0});
  EXPECT_EQ(overlap_efficiency_text(apart, 2),
            "not a result: 1.58 [1.21, 1.90] is above 1 beyond its interval (the phases ran under different "
            "conditions)");
  EXPECT_EQ(overlap_exposed_text(apart, 1),
            "not a result: -15849.3 us [-20000.0, -9000.0] is below 0 beyond its interval");
  const json old = overlap(1.0034, nullptr, -14.5, nullptr);
  EXPECT_EQ(overlap_efficiency_text(old, 2), "not a result: 1.00 is above 1 (noise; no interval in the record)");
  EXPECT_EQ(overlap_exposed_text(old, 1), "not a result: -14.5 us is below 0 (noise)");
}

TEST(OverlapText, BelowZeroIsNoiseWhenItsIntervalReachesZeroElseContention) {
  EXPECT_EQ(overlap_efficiency_text(overlap(-0.05, {-0.2, 0.1}, 0.0, nullptr), 2),
            "within noise of no overlap (-0.05 [-0.20, 0.10])");
  EXPECT_EQ(overlap_efficiency_text(overlap(-0.3, {-0.4, -0.2}, 0.0, nullptr), 2),
            "-0.30 [-0.40, -0.20] (slower together: contention)");
}
