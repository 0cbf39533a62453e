// Projected intervals within the physics (docs/report.md): the clipping of a projected point's
// prediction interval at the bound on a hand-computed case, a property test over random inputs of
// the pure function and of whole reports (report.json), --calibrate-at, and "model only".
#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <string>
#include <vector>

#include "collbench/model/system_profile.hpp"
#include "collbench/report/weak_scaling_json.hpp"
#include "collbench/scaling/weak_scaling.hpp"
#include "record_fixtures.hpp"

using namespace collbench;
using namespace collbench::report;
using namespace collbench::scaling;

namespace {

record::InputFile file_with(record::CaseRecord c, const std::string& path) {
  record::InputFile f;
  f.path = path;
  f.case_lines.push_back(1);
  f.cases.push_back(std::move(c));
  return f;
}

// All-reduce of 1 MB per rank at n ranks in domains of 4, with the record's bound at `bound_frac` of
// its p50 (so % bound = 100 x bound_frac) and samples spread by +-`spread` around p50.
record::InputFile point(int n, double p50_us, double bound_frac, double spread = 0.0) {
  std::vector<int> domains(static_cast<std::size_t>(n / 4), 4);
  auto c = fixtures::allreduce_record(n, 1000000, p50_us, domains);
  if (spread > 0) {
    c.samples_us = {p50_us * (1 - spread), p50_us * (1 - spread / 2), p50_us, p50_us * (1 + spread / 2),
                    p50_us * (1 + spread)};
  }
  fixtures::set_model(c, "gb300-nvl72", bound_frac * p50_us, 1.2 * bound_frac * p50_us);
  return file_with(c, "n" + std::to_string(n) + ".jsonl");
}

}  // namespace

TEST(ProjectedInterval, ClippedAtTheBoundOnAHandComputedCase) {
  // %bound 90 with a calibration spread of +-15% widened by k = 3: [90 x 0.55, 90 x 1.45] =
  // [49.5, 130.5] -> clipped to [49.5, 100]. E(N) = 1.8 scales by 1.8 / 90 = 0.02: [0.99, 2.0], and
  // 2.0 = E x 100 / %bound = bound_busbw(N) / busbw(N0).
  const auto iv = projected_interval(90.0, {0.85, 1.15}, 3.0, 1.8);
  EXPECT_TRUE(iv.clipped);
  EXPECT_NEAR(iv.unclipped_high, 130.5, 1e-9);
  EXPECT_NEAR(iv.pct_bound.low, 49.5, 1e-9);
  EXPECT_DOUBLE_EQ(iv.pct_bound.high, 100.0);
  ASSERT_TRUE(iv.efficiency);
  EXPECT_NEAR(iv.efficiency->low, 0.99, 1e-12);
  EXPECT_NEAR(iv.efficiency->high, 2.0, 1e-12);
  // Not clipped: 80 x [1 - 2 x 0.1, 1 + 2 x 0.1] = [64, 96].
  const auto in = projected_interval(80.0, {0.9, 1.1}, 2.0, std::nullopt);
  EXPECT_FALSE(in.clipped);
  EXPECT_NEAR(in.pct_bound.low, 64.0, 1e-9);
  EXPECT_NEAR(in.pct_bound.high, 96.0, 1e-9);
  EXPECT_FALSE(in.efficiency);
}

TEST(ProjectedInterval, PropertyBothLimitsHoldForRandomInputs) {
  std::mt19937_64 rng(7);
  std::uniform_real_distribution<double> pct(0.5, 100.0), lo(0.3, 1.0), hi(1.0, 2.0), k(1.0, 6.0), e(0.01, 3.0);
  for (int i = 0; i < 10000; ++i) {
    const double p = pct(rng);
    const double eff = e(rng);
    const auto iv = projected_interval(p, {lo(rng), hi(rng)}, k(rng), eff);
    ASSERT_LE(iv.pct_bound.high, 100.0);
    ASSERT_GE(iv.pct_bound.low, 0.0);
    ASSERT_LE(iv.pct_bound.low, p + 1e-9);
    ASSERT_GE(iv.pct_bound.high, p - 1e-9);
    ASSERT_LE(iv.efficiency->high, eff * 100.0 / p * (1 + 1e-12));  // = bound_busbw(N) / busbw(N0)
    // Both panels show one interval: the same relative ends.
    ASSERT_NEAR(iv.efficiency->high / eff, iv.pct_bound.high / p, 1e-9);
    ASSERT_NEAR(iv.efficiency->low / eff, iv.pct_bound.low / p, 1e-9);
  }
}

TEST(ProjectedInterval, PropertyReportJsonNeverPromisesMoreThanTheBound) {
  const auto system = model::load_system_profile("gb300-nvl72");
  std::mt19937_64 rng(11);
  std::uniform_real_distribution<double> frac(0.3, 0.99), spread(0.0, 0.4), t(5.0, 50.0);
  int clipped = 0;
  for (int trial = 0; trial < 40; ++trial) {
    WeakScalingOptions o;
    o.system = system;
    o.requested_ranks = {16, 32, 64, 128};
    o.resamples = 200;
    const std::vector<record::InputFile> files{point(4, t(rng), frac(rng), spread(rng)),
                                               point(8, t(rng), frac(rng), spread(rng))};
    const auto rep = build_weak_scaling(files, o);
    const auto j = weak_scaling_json(rep);
    const auto& pts = j["groups"][0]["points"];
    const double busbw0 = pts[0]["busbw_gbps"].get<double>();
    for (const auto& p : pts) {
      if (!p["projected"].get<bool>() || p["pi"].is_null()) continue;
      EXPECT_LE(p["pct_bound_pi"][1].get<double>(), 100.0);
      EXPECT_LE(p["pi"][1].get<double>(), p["bound_busbw_gbps"].get<double>() / busbw0 * (1 + 1e-9));
      clipped += p["interval_clipped"].get<bool>() ? 1 : 0;
    }
  }
  EXPECT_GT(clipped, 0);  // the random set reaches the clipping
}

TEST(ProjectedInterval, CalibrateAtProjectsBesideMeasuredPointsAndModelOnlyBeyond4x) {
  WeakScalingOptions o;
  o.system = model::load_system_profile("gb300-nvl72");
  o.requested_ranks = {8, 16, 64};
  o.calibrate_at = 4;
  const std::vector<record::InputFile> files{point(4, 10.0, 0.5, 0.05), point(8, 14.0, 0.45, 0.05),
                                             point(16, 20.0, 0.4, 0.05)};
  const auto rep = build_weak_scaling(files, o);
  const auto& g = rep.groups[0];
  EXPECT_EQ(g.calibration_ranks, 4);
  ASSERT_EQ(g.projected.size(), 3u);  // 8 and 16 beside their measured points, and 64
  EXPECT_EQ(g.projected[0].num_ranks, 8);
  EXPECT_NEAR(g.projected[0].pct_bound, 50.0, 1e-9);   // calibrated at N=4, not at 16
  EXPECT_FALSE(g.projected[1].extrapolation_warning);  // 16 is measured: not beyond the largest
  // 64 = 4 x 16, the largest measured: not beyond 4x; with 16 ranks measured, 128 would be.
  EXPECT_FALSE(g.projected[2].extrapolation_warning);
  o.requested_ranks = {128};
  const auto far = build_weak_scaling(files, o);
  ASSERT_EQ(far.groups[0].projected.size(), 1u);
  EXPECT_TRUE(far.groups[0].projected[0].extrapolation_warning);
  EXPECT_TRUE(weak_scaling_json(far)["groups"][0]["points"][3]["model_only"].get<bool>());
  // A calibration point that does not exist is said, not guessed.
  o.calibrate_at = 5;
  const auto none = build_weak_scaling(files, o);
  EXPECT_TRUE(none.groups[0].projected.empty());
  const auto& notes = none.groups[0].notes;  // the validated-range note may follow it
  EXPECT_NE(std::find(notes.begin(), notes.end(), "no projection: --calibrate-at 5: no point at N=5 in this group"),
            notes.end());
}
