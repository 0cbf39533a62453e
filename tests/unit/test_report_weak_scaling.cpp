// Weak-scaling report: E(N) against hand-computed values on a small synthetic set, the exact
// bootstrap of the median and its coverage in a seeded simulation, % of bound, stragglers, and
// projections (labelled, calibrated, widened, warned about, refused across systems). Pure C++.
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "collbench/core/error.hpp"
#include "collbench/core/placement.hpp"
#include "collbench/model/estimate.hpp"
#include "collbench/model/system_profile.hpp"
#include "collbench/record/record.hpp"
#include "collbench/report/weak_scaling_json.hpp"
#include "collbench/scaling/weak_scaling.hpp"
#include "collbench/stats/compare.hpp"
#include "collbench/stats/summary.hpp"
#include "record_fixtures.hpp"

using namespace collbench;
using namespace collbench::report;
using namespace collbench::scaling;
using record::CaseRecord;

namespace {

constexpr std::uint64_t kBytes = 1000000;  // 1 MB per rank: algbw = 1e6 B / t

// An allreduce case at n ranks whose samples have median `p50_us` (five samples around it).
CaseRecord make_case(int n, double p50_us, std::vector<int> domain_sizes = {}) {
  return fixtures::allreduce_record(n, kBytes, p50_us, std::move(domain_sizes));
}

record::InputFile make_file(const std::string& path, std::vector<CaseRecord> cases,
                            const std::vector<std::string>& hosts = {}) {
  record::InputFile f;
  f.path = path;
  if (!hosts.empty()) {
    record::RunHeader h;
    h.run_id = cases.front().run_id;
    for (std::size_t i = 0; i < hosts.size(); ++i)
      h.hosts.push_back({static_cast<int>(i), hosts[i], 100, {}, {}, {}, {}});
    f.header = h;
    f.header_line = 1;
  }
  for (std::size_t i = 0; i < cases.size(); ++i) f.case_lines.push_back(static_cast<int>(i) + 2);
  f.cases = std::move(cases);
  return f;
}

using fixtures::set_model;

// 2, 4, 8 ranks at 10, 15, 20 us: algbw 100, 66.67, 50 GB/s; busbw = algbw x 2(n-1)/n = 100, 100,
// 87.5 GB/s, so E(4) = 1.0 and E(8) = 0.875 (busbw); 10/15 and 10/20 by time.
std::vector<record::InputFile> synthetic_set() {
  std::vector<record::InputFile> files;
  files.push_back(make_file("n2.jsonl", {make_case(2, 10.0)}));
  files.push_back(make_file("n4.jsonl", {make_case(4, 15.0)}));
  auto c8 = make_case(8, 20.0, {4, 4});
  c8.per_rank = record::PerRank{
      {21, 22, 21, 35, 21, 22, 21, 23}, {90, 90, 90, 90, 90, 90, 90, 95}, {}};  // by max it would be rank 7
  files.push_back(
      make_file("n8.jsonl", {c8}, {"node-a", "node-a", "node-a", "node-b", "node-c", "node-c", "node-c", "node-c"}));
  return files;
}

WeakScalingOptions no_projection() {
  WeakScalingOptions o;
  o.requested_ranks = {};
  return o;
}

}  // namespace

TEST(ReportWeakScaling, EfficiencyMatchesHandComputedValues) {
  const auto files = synthetic_set();
  const auto rep = build_weak_scaling(files, no_projection());
  ASSERT_EQ(rep.groups.size(), 1u);
  const auto& g = rep.groups[0];
  EXPECT_EQ(g.reference_ranks, 2);
  ASSERT_EQ(g.measured.size(), 3u);
  EXPECT_EQ(g.measured[0].num_ranks, 2);
  EXPECT_NEAR(g.measured[0].busbw_gbps, 100.0, 1e-9);
  EXPECT_NEAR(*g.measured[0].efficiency, 1.0, 1e-12);
  EXPECT_NEAR(*g.measured[1].efficiency, 1.0, 1e-9);
  EXPECT_NEAR(*g.measured[2].efficiency, 0.875, 1e-9);
  // Intervals contain the point estimates; the reference's is exactly [1, 1].
  EXPECT_DOUBLE_EQ(g.measured[0].efficiency_ci->low, 1.0);
  EXPECT_DOUBLE_EQ(g.measured[0].efficiency_ci->high, 1.0);
  for (std::size_t i = 1; i < 3; ++i) {
    ASSERT_TRUE(g.measured[i].efficiency_ci);
    EXPECT_LE(g.measured[i].efficiency_ci->low, *g.measured[i].efficiency);
    EXPECT_GE(g.measured[i].efficiency_ci->high, *g.measured[i].efficiency);
    EXPECT_LT(g.measured[i].efficiency_ci->low, g.measured[i].efficiency_ci->high);
  }
  // Packing is stated and uneven packing flagged.
  EXPECT_EQ(g.measured[2].num_domains, 2);
  EXPECT_FALSE(g.measured[2].uneven);
  // Straggler: rank 3, on node-b.
  ASSERT_TRUE(g.measured[2].slowest_rank);
  EXPECT_EQ(*g.measured[2].slowest_rank, 3);
  EXPECT_EQ(g.measured[2].slowest_host.value_or(""), "node-b");
  EXPECT_DOUBLE_EQ(*g.measured[2].slowest_rank_mean_us, 35.0);
  EXPECT_DOUBLE_EQ(*g.measured[2].median_rank_mean_us, 21.5);
  // No system: no bound, and why there is no projection.
  EXPECT_FALSE(g.measured[2].pct_bound);
  EXPECT_TRUE(g.projected.empty());
}

TEST(ReportWeakScaling, TimeMetricAndSingleRankReference) {
  auto files = synthetic_set();
  files.insert(files.begin(), make_file("n1.jsonl", {make_case(1, 2.0)}));
  auto o = no_projection();
  // busbw is 0 on one rank: N0 is the smallest N with a positive busbw, and N=1 gets no E(N).
  auto rep = build_weak_scaling(files, o);
  ASSERT_EQ(rep.groups[0].measured.size(), 4u);
  EXPECT_EQ(rep.groups[0].reference_ranks, 2);
  EXPECT_FALSE(rep.groups[0].measured[0].efficiency);
  EXPECT_NEAR(*rep.groups[0].measured[3].efficiency, 0.875, 1e-9);
  // Time metric: E(N) = p50(N0) / p50(N), N0 = 1 now (its time is positive).
  o.metric = Metric::time;
  rep = build_weak_scaling(files, o);
  EXPECT_EQ(rep.groups[0].reference_ranks, 1);
  EXPECT_NEAR(*rep.groups[0].measured[1].efficiency, 2.0 / 10.0, 1e-9);
  EXPECT_NEAR(*rep.groups[0].measured[3].efficiency, 2.0 / 20.0, 1e-9);
}

TEST(ReportWeakScaling, PercentOfBoundAndUnevenPacking) {
  auto files = synthetic_set();
  set_model(files[2].cases[0], "gb300-nvl72", 5.0, 8.0);
  files[2].cases[0].domain_sizes = {5, 3};
  const auto rep = build_weak_scaling(files, no_projection());
  const auto& m = rep.groups[0].measured[2];
  EXPECT_NEAR(*m.pct_bound, 25.0, 1e-9);     // 100 x 5 / 20
  EXPECT_NEAR(*m.pct_expected, 40.0, 1e-9);  // 100 x 8 / 20
  ASSERT_TRUE(m.pct_bound_ci);
  EXPECT_LE(m.pct_bound_ci->low, 25.0);
  EXPECT_GE(m.pct_bound_ci->high, 25.0);
  EXPECT_TRUE(m.uneven);
  EXPECT_EQ(m.packing, model::packing_string(placement_from_sizes(8, {5, 3})));
  EXPECT_EQ(rep.measured_system.value_or(""), "gb300-nvl72");
}

TEST(ReportWeakScaling, GroupsByCollectiveSizeAndPlacement) {
  auto files = synthetic_set();
  auto other = make_case(4, 30.0);
  other.bytes = 2 * kBytes;
  other.case_key = record::make_case_key(other);
  auto waived = make_case(4, 15.0);
  waived.status = "waived";
  waived.time_us.reset();
  files[1].cases.push_back(other);
  files[1].cases.push_back(waived);
  files[1].case_lines = {2, 3, 4};
  const auto rep = build_weak_scaling(files, no_projection());
  ASSERT_EQ(rep.groups.size(), 2u);
  EXPECT_EQ(rep.groups[1].bytes_per_rank, 2 * kBytes);
  EXPECT_EQ(rep.groups[1].measured.size(), 1u);
  ASSERT_FALSE(rep.notes.empty());
  EXPECT_NE(rep.notes[0].find("waived"), std::string::npos);
}

TEST(ReportWeakScaling, NothingToReportIsAnInputError) {
  std::vector<record::InputFile> files{make_file("empty.jsonl", {})};
  EXPECT_THROW(build_weak_scaling(files, no_projection()), InputError);
}

// ---- projections -------------------------------------------------------------------------------

TEST(ReportWeakScaling, ProjectionIsCalibratedLabelledAndWidened) {
  auto files = synthetic_set();
  for (auto& f : files)
    set_model(f.cases[0], "gb300-nvl72", 0.25 * f.cases[0].time_us->p50, 0.5 * f.cases[0].time_us->p50);
  WeakScalingOptions o;
  o.requested_ranks = {4, 16, 64};
  o.system = model::load_system_profile("gb300-nvl72");
  o.anomaly_below_pct = 0.0;  // the fixture runs at 25% of its bound: not an anomaly here
  const auto rep = build_weak_scaling(files, o);
  EXPECT_TRUE(rep.projection_status.empty()) << rep.projection_status;
  EXPECT_FALSE(rep.cross_system);
  const auto& g = rep.groups[0];
  ASSERT_EQ(g.projected.size(), 2u);  // 4 is measured: never projected
  EXPECT_EQ(g.calibration_ranks, 8);
  EXPECT_NEAR(*g.calibration_efficiency, 0.25, 1e-12);
  for (const auto& p : g.projected) {
    // Same ranks per domain as the largest measured N (4 + 4): 16 -> 4x4, 64 -> 16x4.
    EXPECT_EQ(p.domain_sizes, placement_from_ranks_per_domain(p.num_ranks, 4).domain_sizes);
    model::CaseGeometry geo;
    geo.collective = "allreduce";
    geo.algo = "ring";
    geo.dtype = Dtype::float32;
    geo.bytes = kBytes;
    geo.placement = placement_from_ranks_per_domain(p.num_ranks, 4);
    const auto est = model::estimate(*o.system, geo);
    ASSERT_TRUE(est);
    EXPECT_NEAR(p.bound_busbw_gbps, est->bound_busbw_gbps, 1e-9);
    EXPECT_NEAR(p.projected_busbw_gbps, 0.25 * est->bound_busbw_gbps, 1e-9);
    EXPECT_NEAR(p.projected_time_us, est->bound_time_us / 0.25, 1e-9);
    EXPECT_NEAR(*p.efficiency, p.projected_busbw_gbps / 100.0, 1e-9);  // busbw(N0 = 2) = 100
    EXPECT_NEAR(p.pct_bound, 25.0, 1e-9);
    ASSERT_TRUE(p.pi);
    EXPECT_LE(p.pi->low, *p.efficiency);
    EXPECT_GE(p.pi->high, *p.efficiency);
  }
  // 16 is 2x the largest measured N: k = 2, no warning; 64 is 8x: k = 4, warned.
  EXPECT_DOUBLE_EQ(g.projected[0].widening, 2.0);
  EXPECT_FALSE(g.projected[0].extrapolation_warning);
  EXPECT_DOUBLE_EQ(g.projected[1].widening, 4.0);
  EXPECT_TRUE(g.projected[1].extrapolation_warning);
  ASSERT_EQ(rep.warnings.size(), 1u);
  EXPECT_NE(rep.warnings[0].find("N=64"), std::string::npos);
  // The interval widens with the extrapolation: relative width at 8x = 2 x that at 2x.
  const auto rel_width = [](const ProjectedPoint& p) { return (p.pi->high - p.pi->low) / *p.efficiency; };
  EXPECT_NEAR(rel_width(g.projected[1]), 2.0 * rel_width(g.projected[0]), 1e-9);

  // JSON: projected points are labelled, carry no measured columns, and keep the plot fields.
  const auto j = weak_scaling_json(rep);
  EXPECT_EQ(j["schema"], kWeakScalingSchema);
  const auto& points = j["groups"][0]["points"];
  ASSERT_EQ(points.size(), 5u);
  for (const auto& p : points) {
    for (const char* k : {"num_ranks", "efficiency", "pct_bound", "projected"}) EXPECT_TRUE(p.contains(k)) << k;
    if (p["projected"].get<bool>()) {
      EXPECT_FALSE(p.contains("p50_us"));
      EXPECT_FALSE(p.contains("busbw_gbps"));
      EXPECT_TRUE(p["pi"].is_array());
      EXPECT_TRUE(p["efficiency_ci"].is_null());
    } else {
      EXPECT_TRUE(p["pi"].is_null());
      EXPECT_TRUE(p.contains("p50_us"));
    }
  }
}

TEST(ReportWeakScaling, ProjectionRefusedAcrossSystemsUnlessAskedFor) {
  auto files = synthetic_set();
  for (auto& f : files) set_model(f.cases[0], "h100-hgx", 0.5 * f.cases[0].time_us->p50, 0.6 * f.cases[0].time_us->p50);
  WeakScalingOptions o;
  o.system = model::load_system_profile("gb300-nvl72");
  try {
    build_weak_scaling(files, o);
    FAIL() << "a projection across systems must be refused";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("--project-onto"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("h100-hgx"), std::string::npos) << e.what();
  }
  // --system contradicting the records stays an error with --project-onto too.
  o.project_onto = model::load_system_profile("gb300-nvl72");
  EXPECT_THROW(build_weak_scaling(files, o), InputError);
  // Explicit: projected onto gb300-nvl72, and the title says so.
  o.system.reset();
  const auto rep = build_weak_scaling(files, o);
  EXPECT_TRUE(rep.cross_system);
  EXPECT_EQ(rep.measured_system.value_or(""), "h100-hgx");
  EXPECT_EQ(rep.projection_system.value_or(""), "gb300-nvl72");
  EXPECT_NE(rep.title.find("projected onto gb300-nvl72"), std::string::npos) << rep.title;
  EXPECT_NE(rep.title.find("h100-hgx"), std::string::npos) << rep.title;
  ASSERT_EQ(rep.groups[0].projected.size(), 3u);
  for (const auto& p : rep.groups[0].projected) EXPECT_EQ(p.system, "gb300-nvl72");
  const auto j = weak_scaling_json(rep);
  EXPECT_NE(j["system"].get<std::string>().find("projected onto gb300-nvl72"), std::string::npos);
}

TEST(ReportWeakScaling, SameSystemProjectsAndWithoutProfileSaysWhyNot) {
  auto files = synthetic_set();
  for (auto& f : files) set_model(f.cases[0], "h100-hgx", 0.5 * f.cases[0].time_us->p50, 0.6 * f.cases[0].time_us->p50);
  const auto rep = build_weak_scaling(files, WeakScalingOptions{});
  EXPECT_TRUE(rep.groups[0].projected.empty());
  EXPECT_NE(rep.projection_status.find("no projection"), std::string::npos);
  EXPECT_NE(rep.projection_status.find("--system h100-hgx"), std::string::npos) << rep.projection_status;
  WeakScalingOptions o;
  o.system = model::load_system_profile("h100-hgx");
  const auto rep2 = build_weak_scaling(files, o);
  EXPECT_FALSE(rep2.cross_system);
  EXPECT_EQ(rep2.groups[0].projected.size(), 3u);
  EXPECT_EQ(rep2.title, "Weak scaling on h100-hgx");
}

TEST(ReportWeakScaling, RecordsFromSeveralSystemsAreRefused) {
  auto files = synthetic_set();
  set_model(files[0].cases[0], "h100-hgx", 5, 6);
  set_model(files[2].cases[0], "gb300-nvl72", 5, 6);
  EXPECT_THROW(build_weak_scaling(files, no_projection()), InputError);
}

TEST(ReportWeakScaling, RecordsWithoutModelUseTheSystemProfileForBounds) {
  const auto files = synthetic_set();
  WeakScalingOptions o;
  o.requested_ranks = {16};
  o.system = model::load_system_profile("gb300-nvl72");
  o.anomaly_below_pct = 0.0;  // the synthetic times are far below gb300's bound: not anomalies here
  const auto rep = build_weak_scaling(files, o);
  const auto& m = rep.groups[0].measured[2];
  ASSERT_TRUE(m.pct_bound);
  model::CaseGeometry geo;
  geo.collective = "allreduce";
  geo.algo = "ring";
  geo.bytes = kBytes;
  geo.placement = placement_from_sizes(8, {4, 4});
  const auto est = model::estimate(*o.system, geo);
  ASSERT_TRUE(est);
  EXPECT_NEAR(*m.pct_bound, 100.0 * est->bound_time_us / 20.0, 1e-9);
  EXPECT_NE(m.bound_source.find("computed by the report"), std::string::npos);
  ASSERT_EQ(rep.notes.size(), 1u);
  EXPECT_NE(rep.notes[0].find("taken as the system"), std::string::npos);
  EXPECT_EQ(rep.groups[0].projected.size(), 1u);
}

// ---- bootstrap ---------------------------------------------------------------------------------

TEST(ReportBootstrap, ResampledMedianHasTheExactDistribution) {
  // n = 3: the resample median is 1 when two or three draws are 1: 3(1/3)^2(2/3) + (1/3)^3 = 7/27.
  std::mt19937_64 rng(7);
  const std::vector<double> three{1.0, 2.0, 3.0};
  int ones = 0, twos = 0;
  const int draws = 200000;
  for (int i = 0; i < draws; ++i) {
    const double m = resampled_median(three, rng);
    ones += m == 1.0;
    twos += m == 2.0;
  }
  EXPECT_NEAR(ones / static_cast<double>(draws), 7.0 / 27.0, 0.005);
  EXPECT_NEAR(twos / static_cast<double>(draws), 13.0 / 27.0, 0.005);
  // n = 2: the median averages both draws: 1 (1/4), 2 (1/2), 3 (1/4).
  const std::vector<double> two{1.0, 3.0};
  int mid = 0;
  for (int i = 0; i < draws; ++i) mid += resampled_median(two, rng) == 2.0;
  EXPECT_NEAR(mid / static_cast<double>(draws), 0.5, 0.005);
}

TEST(ReportBootstrap, MatchesNaiveResampling) {
  // The O(1) draw against materialised resamples: same quantiles of the bootstrap median.
  std::mt19937_64 gen(11);
  std::lognormal_distribution<double> dist(3.0, 0.4);
  for (std::size_t n : {20u, 21u}) {
    std::vector<double> x(n);
    for (auto& v : x) v = dist(gen);
    std::sort(x.begin(), x.end());
    std::vector<double> fast, naive;
    std::uniform_int_distribution<std::size_t> pick(0, n - 1);
    std::vector<double> resample(n);
    for (int i = 0; i < 40000; ++i) {
      fast.push_back(resampled_median(x, gen));
      for (auto& v : resample) v = x[pick(gen)];
      std::sort(resample.begin(), resample.end());
      naive.push_back(stats::percentile_sorted(resample, 0.5));
    }
    // The bootstrap median is discrete: compare its distribution function at every midpoint
    // between sample values (40,000 draws each: a standard error below 0.0025).
    const auto cdf = [](const std::vector<double>& draws, double t) {
      return static_cast<double>(std::count_if(draws.begin(), draws.end(), [t](double d) { return d <= t; })) /
             static_cast<double>(draws.size());
    };
    for (std::size_t i = 0; i + 1 < n; ++i) {
      const double t = 0.5 * (x[i] + x[i + 1]);
      EXPECT_NEAR(cdf(fast, t), cdf(naive, t), 0.012)
          << "n=" << n << " t between x[" << i << "] and x[" << i + 1 << "]";
    }
  }
}

TEST(ReportBootstrap, RatioIntervalCoversTheTrueRatioAtTheStatedRate) {
  // Seeded simulation: two lognormal time distributions with known medians 10 and 20 us; the 95%
  // interval of median(a)/median(b) should contain 0.5 about 95% of the time.
  std::mt19937_64 gen(2024);
  const int trials = 400;
  int covered = 0;
  for (int t = 0; t < trials; ++t) {
    std::lognormal_distribution<double> a(std::log(10.0), 0.3);
    std::lognormal_distribution<double> b(std::log(20.0), 0.5);
    std::vector<double> xa(101), xb(120);
    for (auto& v : xa) v = a(gen);
    for (auto& v : xb) v = b(gen);
    const auto ci = bootstrap_median_ratio_ci(xa, xb, 0.95, 1000, 1000 + static_cast<std::uint64_t>(t));
    ASSERT_TRUE(ci);
    covered += ci->low <= 0.5 && 0.5 <= ci->high;
  }
  const double rate = covered / static_cast<double>(trials);
  RecordProperty("coverage", std::to_string(rate));
  EXPECT_GT(rate, 0.90) << rate;
  EXPECT_LT(rate, 0.99) << rate;
}

TEST(ReportBootstrap, AgreesWithTheGeneralBootstrapOfStats) {
  // stats::bootstrap_ratio_ci resamples the values themselves; both estimate the same interval.
  std::mt19937_64 gen(5);
  std::lognormal_distribution<double> a(std::log(30.0), 0.2);
  std::lognormal_distribution<double> b(std::log(40.0), 0.3);
  std::vector<double> xa(200), xb(150);
  for (auto& v : xa) v = a(gen);
  for (auto& v : xb) v = b(gen);
  const auto fast = bootstrap_median_ratio_ci(xa, xb, 0.95, 20000, 9);
  const auto general = stats::bootstrap_ratio_ci(xa, xb, stats::median, 0.95, 20000, 9);
  ASSERT_TRUE(fast && general);
  const double ratio = stats::median(xa) / stats::median(xb);
  EXPECT_NEAR(fast->low, general->low, 0.01 * ratio);
  EXPECT_NEAR(fast->high, general->high, 0.01 * ratio);
}

TEST(ReportBootstrap, SeededAndDegenerateCases) {
  const std::vector<double> x{1, 2, 3, 4, 5, 6, 7};
  const auto a = bootstrap_median_ci(x, 0.95, 500, 3);
  const auto b = bootstrap_median_ci(x, 0.95, 500, 3);
  ASSERT_TRUE(a && b);
  EXPECT_EQ(a->low, b->low);
  EXPECT_EQ(a->high, b->high);
  EXPECT_LE(a->low, 4.0);
  EXPECT_GE(a->high, 4.0);
  const std::vector<double> one{5.0};
  EXPECT_FALSE(bootstrap_median_ci(one, 0.95, 500, 3));
  EXPECT_FALSE(bootstrap_median_ratio_ci(one, x, 0.95, 500, 3));
  EXPECT_THROW(bootstrap_median_ci(x, 1.5, 500, 3), InputError);
}

// A measurement faster than its bound is named in a report warning (the profile is wrong for
// this machine); one within the bound is not.
TEST(WeakScaling, WarnsAboutPointsBeyondTheirBound) {
  auto files = synthetic_set();
  set_model(files[0].cases[0], "cpu-local", 5.0, 6.0);    // 10 us measured, bound 5 us: 50%
  set_model(files[1].cases[0], "cpu-local", 30.0, 32.0);  // 15 us measured, bound 30 us: 200%
  const auto rep = build_weak_scaling(files, no_projection());
  std::vector<std::string> beyond;
  for (const auto& w : rep.warnings) {
    if (w.find("beat their analytic bound") != std::string::npos) beyond.push_back(w);
  }
  ASSERT_EQ(beyond.size(), 1u);
  EXPECT_NE(beyond[0].find("1 measured point(s)"), std::string::npos) << beyond[0];
  EXPECT_NE(beyond[0].find("allreduce 1000000 B/rank at N=4 (200%)"), std::string::npos) << beyond[0];
  EXPECT_EQ(beyond[0].find("N=2"), std::string::npos) << beyond[0];
}
