// `collbench calibrate`'s point-to-point summary (run/host_calibration.hpp): latency, best rate,
// the margin and its cap, against hand-computed values.
#include <gtest/gtest.h>

#include "collbench/run/host_calibration.hpp"

using collbench::run::PingPongTime;
using collbench::run::summarize_point_to_point;

TEST(HostCalibration, LatencyIsTheSmallMessagesBestTime) {
  const auto p = summarize_point_to_point({8, 2e-6, 3e-6}, {});
  EXPECT_DOUBLE_EQ(p.latency_s, 2e-6);
  EXPECT_DOUBLE_EQ(p.margin, 0.5);  // 3 us median / 2 us best - 1
  EXPECT_DOUBLE_EQ(p.bandwidth_bytes_per_s, 0.0);
  EXPECT_EQ(p.bandwidth_message_bytes, 0u);
}

TEST(HostCalibration, BandwidthIsTheBestRateAndTheMarginFollowsTheSizesThatRaisedIt) {
  // Rates: 64 KiB / 10 us = 6.5536 GB/s, 1 MiB / 100 us = 10.48576 GB/s (the best), 4 MiB / 1 ms =
  // 4.194304 GB/s. Margins: latency 0.5, 64 KiB 0.1, 1 MiB 1.0; the 4 MiB size (median/best - 1 =
  // 4) never raised the best rate, so it does not count.
  const auto p = summarize_point_to_point({8, 2e-6, 3e-6},
                                          {{64u << 10, 1e-5, 1.1e-5}, {1u << 20, 1e-4, 2e-4}, {4u << 20, 1e-3, 5e-3}});
  EXPECT_DOUBLE_EQ(p.latency_s, 2e-6);
  EXPECT_DOUBLE_EQ(p.bandwidth_bytes_per_s, 1048576.0 / 1e-4);
  EXPECT_EQ(p.bandwidth_message_bytes, 1u << 20);
  EXPECT_DOUBLE_EQ(p.margin, 1.0);
}

TEST(HostCalibration, TheFirstSizeOfEqualRatesWins) {
  // 2 MiB in 200 us is exactly the rate of 1 MiB in 100 us: the later size neither replaces the
  // message size nor adds its margin (9).
  const auto p = summarize_point_to_point({8, 1e-6, 1e-6}, {{1u << 20, 1e-4, 1.2e-4}, {2u << 20, 2e-4, 2e-3}});
  EXPECT_EQ(p.bandwidth_message_bytes, 1u << 20);
  EXPECT_DOUBLE_EQ(p.margin, 1.2e-4 / 1e-4 - 1.0);
}

TEST(HostCalibration, TheMarginIsCappedAtTen) {
  const auto p = summarize_point_to_point({8, 1e-6, 2e-5}, {{1u << 20, 1e-4, 1e-4}});  // 20 - 1 = 19
  EXPECT_DOUBLE_EQ(p.margin, 10.0);
}
