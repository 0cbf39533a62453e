// Acceptance beyond the model's checked range (issue 35 item 8): a cross-rack check with more GPUs
// than any published point that reached its fraction of expected is judged against a reference
// result (a site baseline, or a published point of the same case), never against the expected
// value alone. gb200-nvl72's published all-reduce points (profiles/published/gb200-nvl72.yaml):
// one rack at 1.01 of expected (confirmed), 20 racks at 0.42 (not): checked up to 72 GPUs.
#include <gtest/gtest.h>

#include <string>

#include "accept_fixtures.hpp"
#include "collbench/model/system_profile.hpp"

namespace {

using namespace collbench::accept_fixtures;

// One all-reduce check of 4 GiB over racks of 72 at `busbw` GB/s (model fields from the record).
AcceptReport judge_racks(int n, double busbw, const std::string& threshold) {
  const std::string yaml =
      "name: t\nchecks:\n  - name: fabric\n    collective: allreduce\n    bytes: 4G\n"
      "    ranks_per_domain: 72\n    threshold: " +
      threshold + "\n";
  auto f = build(yaml, n, [&](const PlannedCase& pc, int) {
    CaseRecord r = ok_record(pc, 10000.0, n, 2.0 * (n - 1) / n);
    r.busbw_gbps = busbw;
    set_model(r, 1700.0, 820.0);
    return r;
  });
  static const auto system = collbench::model::load_system_profile("gb200-nvl72");
  return judge(f.profile, f.records, &system);
}

}  // namespace

TEST(AcceptReference, PublishedPointIsTheReferenceBeyondTheCheckedRange) {
  // 1,440 GPUs at 300 GB/s: against expected (0.8 x 820 = 656) it would fail; the published
  // 20-rack figure at 4 GiB, 346.4 GB/s, gives 0.8 x 346.4 = 277.12 GB/s: PASS.
  const auto rep = judge_racks(1440, 300.0, "{fraction_of_expected: 0.8}");
  ASSERT_EQ(rep.rows.size(), 1u);
  const Row& row = rep.rows[0];
  EXPECT_TRUE(row.beyond_checked_range);
  EXPECT_EQ(row.checked_range, "published allreduce points on gb200-nvl72 reach 0.8 x expected up to 72 GPUs");
  ASSERT_EQ(row.limits.size(), 1u);
  EXPECT_EQ(row.limits[0].kind, "fraction_of_reference");
  EXPECT_NEAR(*row.limits[0].limit, 0.8 * 346.4, 1e-9);
  EXPECT_EQ(row.verdict, Verdict::pass) << row.reason;
  EXPECT_NE(row.reason.find("reference published: CoreWeave nccl-tests PR #48"), std::string::npos) << row.reason;
}

TEST(AcceptReference, WithoutAReferenceTheExpectedValueIsNotUsedAlone) {
  // Two racks: beyond 72, no published 144-GPU point: not judged, and nothing else to judge.
  const auto rep = judge_racks(144, 800.0, "{fraction_of_expected: 0.8}");
  const Row& row = rep.rows[0];
  EXPECT_TRUE(row.beyond_checked_range);
  EXPECT_FALSE(row.limits[0].judged);
  EXPECT_EQ(row.verdict, Verdict::fail);
  EXPECT_NE(row.reason.find("cannot judge: fraction_of_reference 0.8: not judged (144 GPUs is beyond the model's "
                            "checked range (published allreduce points on gb200-nvl72 reach 0.8 x expected up to 72 "
                            "GPUs), so the expected value is not used alone; give the check "
                            "threshold.reference_busbw_gbps"),
            std::string::npos)
      << row.reason;
  // The bound is physics: a fraction_of_bound still judges (800 >= 0.3 x 1700).
  const auto with_bound = judge_racks(144, 800.0, "{fraction_of_expected: 0.8, fraction_of_bound: 0.3}");
  EXPECT_EQ(with_bound.rows[0].verdict, Verdict::pass) << with_bound.rows[0].reason;
}

TEST(AcceptReference, SiteBaselineComesFirst) {
  const auto rep = judge_racks(
      144, 300.0, "{fraction_of_expected: 0.8, reference_busbw_gbps: 400, reference_source: \"site run 2026-11\"}");
  const Row& row = rep.rows[0];
  EXPECT_EQ(row.reference_source, "site baseline: site run 2026-11");
  EXPECT_NEAR(*row.limits[0].limit, 320.0, 1e-9);
  EXPECT_EQ(row.verdict, Verdict::fail);  // 300 < 0.8 x 400
}

TEST(AcceptReference, WithinTheCheckedRangeNothingChanges) {
  // One rack, scope global: one domain, no cross-rack traffic: judged against expected as before.
  const auto rep = judge_racks(72, 800.0, "{fraction_of_expected: 0.8}");
  const Row& row = rep.rows[0];
  EXPECT_FALSE(row.beyond_checked_range);
  EXPECT_EQ(row.limits[0].kind, "fraction_of_expected");
  EXPECT_NEAR(*row.limits[0].limit, 0.8 * 820.0, 1e-9);
}
