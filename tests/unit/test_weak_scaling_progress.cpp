// Weak scaling across progress modes (issue 37 item 10): a point measured with `yield` beside a
// reference measured with `spin` is left out of E(N) unless --allow-mixed-progress, and the
// point, the group and a warning say so.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "collbench/scaling/weak_scaling.hpp"
#include "record_fixtures.hpp"

using namespace collbench;
using namespace collbench::scaling;

namespace {

record::InputFile file_at(int n, double p50_us, const std::string& progress) {
  record::InputFile f;
  f.path = "n" + std::to_string(n) + ".jsonl";
  auto r = fixtures::allreduce_record(n, 1000000, p50_us, {});
  if (!progress.empty()) r.extra["progress"] = progress;
  f.cases.push_back(r);
  f.case_lines.push_back(2);
  return f;
}

// N=2 spin at 10 us, N=4 yield at 15 us, N=8 spin at 20 us: E(4) = 1.0, E(8) = 0.875 by busbw.
std::vector<record::InputFile> mixed(const std::string& at4) {
  return {file_at(2, 10.0, "spin"), file_at(4, 15.0, at4), file_at(8, 20.0, "spin")};
}

WeakScalingOptions options(bool allow) {
  WeakScalingOptions o;
  o.requested_ranks = {};
  o.allow_mixed_progress = allow;
  return o;
}

}  // namespace

TEST(WeakScalingProgress, AYieldPointBesideASpinReferenceHasNoEfficiency) {
  const auto rep = build_weak_scaling(mixed("yield"), options(false));
  const auto& g = rep.groups.at(0);
  ASSERT_EQ(g.measured.size(), 3u);
  EXPECT_EQ(g.measured[1].progress, "yield");
  EXPECT_FALSE(g.measured[1].efficiency);
  EXPECT_FALSE(g.measured[1].efficiency_ci);
  EXPECT_NEAR(*g.measured[2].efficiency, 0.875, 1e-9);  // the spin points keep theirs
  const std::string what = "mixed progress modes (progress yield at N=4, spin at the reference N0=2)";
  EXPECT_EQ(g.measured[1].notes.back(), "no E(N): " + what +
                                            "; measure every N with one --progress, or pass --allow-mixed-progress to "
                                            "compare them anyway");
  ASSERT_EQ(g.notes.size(), 1u);
  EXPECT_EQ(g.notes[0], "N=4 left out of E(N): " + what);
  ASSERT_EQ(rep.warnings.size(), 1u);
  EXPECT_EQ(rep.warnings[0],
            "allreduce 1000000 B: " + what + "; N=4 left out of E(N) (--allow-mixed-progress keeps it)");
}

TEST(WeakScalingProgress, AllowMixedProgressKeepsTheEfficiencyAndStillSaysSo) {
  const auto rep = build_weak_scaling(mixed("yield"), options(true));
  const auto& g = rep.groups.at(0);
  EXPECT_NEAR(*g.measured[1].efficiency, 1.0, 1e-9);
  EXPECT_TRUE(g.measured[1].efficiency_ci);
  EXPECT_TRUE(g.notes.empty());
  ASSERT_EQ(rep.warnings.size(), 1u);
  EXPECT_EQ(rep.warnings[0],
            "allreduce 1000000 B: mixed progress modes (progress yield at N=4, spin at the reference N0=2); E(N=4) "
            "kept by --allow-mixed-progress");
}

TEST(WeakScalingProgress, OneModeOrAnUnknownModeIsNotMixed) {
  for (const std::string at4 : {"spin", ""}) {  // "": an import without a progress field
    const auto rep = build_weak_scaling(mixed(at4), options(false));
    EXPECT_NEAR(*rep.groups.at(0).measured[1].efficiency, 1.0, 1e-9) << at4;
    EXPECT_TRUE(rep.warnings.empty()) << at4;
  }
}
