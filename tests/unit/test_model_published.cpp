// Published points (profiles/published/) and the model's validated range (issue 35 item 8):
// strict parsing, measured / expected by the model, how far the expected value held, and the
// nearest points. The shipped gb200-nvl72 points: one rack at 4 and 8 GiB (CoreWeave PR #43), 20
// racks at 2 and 4 GiB (PR #48).
#include <gtest/gtest.h>

#include <string>

#include "collbench/core/error.hpp"
#include "collbench/model/published.hpp"
#include "collbench/model/system_profile.hpp"

using namespace collbench;
using namespace collbench::model;

TEST(ModelPublished, ParsesStrictly) {
  const auto p = parse_published_points(R"(system: x
points:
  - collective: allreduce
    domain_sizes: [8, 8]
    bytes: 1G
    busbw: 100GB/s
    source: somewhere
)",
                                        "x.yaml");
  ASSERT_EQ(p.points.size(), 1u);
  EXPECT_EQ(p.points[0].gpus(), 16);
  EXPECT_EQ(p.points[0].bytes, 1ull << 30);
  EXPECT_DOUBLE_EQ(p.points[0].measured_busbw_gbps, 100.0);
  EXPECT_EQ(p.points[0].algo, "auto");
  try {
    parse_published_points("system: x\npoints:\n  - collective: allreduce\n    domain_size: [8]\n", "x.yaml");
    FAIL() << "no error";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("x.yaml:4: key 'points[0].domain_size': unknown key"), std::string::npos)
        << e.what();
  }
}

TEST(ModelPublished, Gb200PointsAgainstTheModel) {
  const auto s = load_system_profile("gb200-nvl72");
  const auto points = load_published_points("gb200-nvl72");
  ASSERT_EQ(points.points.size(), 4u);
  // One rack, 8 GiB: 834.57 GB/s against the expected NVLS value (the cap 835 x efficiency losses):
  // confirmed (>= 0.8 of expected), under the bound (1750.7).
  const auto rack = check_point(s, points.points[1]);
  ASSERT_TRUE(rack.estimate);
  EXPECT_GT(rack.measured_over_expected, 0.95);
  EXPECT_LT(rack.measured_over_bound, 0.5);
  // 20 racks, 4 GiB: 346.4 GB/s against 826.6 expected: 0.42 (docs/model.md).
  const auto twenty = check_point(s, points.points[3]);
  ASSERT_TRUE(twenty.estimate);
  EXPECT_NEAR(twenty.measured_over_expected, 0.42, 0.005);
  const auto range = checked_range(s, points, "allreduce", 256);
  EXPECT_EQ(range.largest_gpus, 1440);
  EXPECT_EQ(range.confirmed_gpus, 72);
  ASSERT_EQ(range.nearest.size(), 2u);
  EXPECT_EQ(range.nearest[0]->gpus(), 72);
  EXPECT_EQ(range.nearest[1]->gpus(), 1440);
  EXPECT_EQ(checked_range(s, points, "alltoall", 256).largest_gpus, 0);
  const std::string line = checked_range_line(s, points, "allreduce", 256);
  EXPECT_EQ(line.rfind("gb200-nvl72 allreduce: published points up to 1440 GPUs; the expected value held (>= 0.8 of "
                       "expected) up to 72 GPUs (256 GPUs is beyond); nearest to 256 GPUs: 72 GPUs (72) at 4GiB",
                       0),
            0u)
      << line;
  EXPECT_EQ(checked_range_line(s, points, "alltoall", 256),
            "gb200-nvl72 alltoall: not checked against any published measurement (docs/model.md, \"Validated "
            "range\")");
  // A system with no file: no points, nothing checked.
  EXPECT_TRUE(load_published_points("gb300-nvl72").points.empty());
}
