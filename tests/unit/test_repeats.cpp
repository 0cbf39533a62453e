// --repeats k (docs/measurement.md "Repeats", docs/gate.md "Between repeats"): Student's t and
// Welch's test against closed forms, the spread between repeat medians, the record's time_us and
// `repeats` object, and the gate's decision on hand-made records, every expected value worked out
// by hand (or from a closed form written out here).
#include <gtest/gtest.h>

#include <cmath>
#include <numbers>
#include <string>
#include <vector>

#include "collbench/core/error.hpp"
#include "collbench/gate/gate.hpp"
#include "collbench/record/jsonl.hpp"
#include "collbench/record/record.hpp"
#include "collbench/report/repeats_line.hpp"
#include "collbench/stats/compare.hpp"
#include "collbench/stats/repeats.hpp"
#include "collbench/stats/summary.hpp"

namespace {

using collbench::record::CaseRecord;
using collbench::record::RepeatPart;
using collbench::record::TimeStats;

// ---- Student's t -------------------------------------------------------------------------------

TEST(StudentT, MatchesTheClosedFormsForOneAndTwoDegreesOfFreedom) {
  for (double t : {0.0, 0.3, 1.0, 2.5, 7.0, 40.0}) {
    // df 1 is the Cauchy distribution; df 2 has P(T > t) = (1 - t / sqrt(t^2 + 2)) / 2.
    EXPECT_NEAR(collbench::stats::student_t_sf(t, 1), 0.5 - std::atan(t) / std::numbers::pi, 1e-15) << t;
    EXPECT_NEAR(collbench::stats::student_t_sf(t, 2), 0.5 * (1.0 - t / std::sqrt(t * t + 2.0)), 1e-15) << t;
    EXPECT_NEAR(collbench::stats::student_t_sf(-t, 2), 1.0 - collbench::stats::student_t_sf(t, 2), 1e-15) << t;
  }
}

TEST(StudentT, MatchesTheClosedFormsForThreeAndFourDegreesOfFreedom) {
  for (double t : {0.5, 1.7, 3.0, 9.0}) {
    // A&S 26.7.3 with df 3: A = 2/pi (theta + sin cos); 26.7.4 with df 4: A = sin (1 + cos^2 / 2).
    const double th3 = std::atan(t / std::sqrt(3.0));
    const double a3 = 2.0 / std::numbers::pi * (th3 + std::sin(th3) * std::cos(th3));
    EXPECT_NEAR(collbench::stats::student_t_sf(t, 3), (1.0 - a3) / 2.0, 1e-15) << t;
    const double s4 = t / std::sqrt(t * t + 4.0);
    const double c4 = 4.0 / (t * t + 4.0);
    EXPECT_NEAR(collbench::stats::student_t_sf(t, 4), (1.0 - s4 * (1.0 + c4 / 2.0)) / 2.0, 1e-15) << t;
  }
}

TEST(StudentT, QuantilesInvertTheTailAndMatchTheTables) {
  // df 2: t = a sqrt(2 / (1 - a^2)) with a = 1 - 2 tail; 0.95 sqrt(2 / 0.0975) = 4.30265...
  EXPECT_NEAR(collbench::stats::student_t_quantile_upper(0.025, 2), 0.95 * std::sqrt(2.0 / 0.0975), 1e-9);
  // The printed tables (two-sided 95%): 12.706 (df 1), 2.776 (df 4), 2.228 (df 10), 2.042 (df 30).
  EXPECT_NEAR(collbench::stats::student_t_quantile_upper(0.025, 1), 12.706, 5e-4);
  EXPECT_NEAR(collbench::stats::student_t_quantile_upper(0.025, 4), 2.776, 5e-4);
  EXPECT_NEAR(collbench::stats::student_t_quantile_upper(0.025, 10), 2.228, 5e-4);
  EXPECT_NEAR(collbench::stats::student_t_quantile_upper(0.025, 30), 2.042, 5e-4);
  for (int df : {1, 2, 5, 9, 40}) {
    const double q = collbench::stats::student_t_quantile_upper(0.01, df);
    EXPECT_NEAR(collbench::stats::student_t_sf(q, df), 0.01, 1e-12) << df;
  }
}

// ---- Welch ---------------------------------------------------------------------------------------

// Logs of {10, 11, 12.1} and of 1.5 x those: equal spreads h = ln 1.1 on both sides, so
// s^2 = h^2, se = h sqrt(2/3), df = (2 h^2/3)^2 / (2 (h^2/3)^2 / 2) = 4 exactly, t = ln 1.5 / se.
TEST(Welch, EqualSpreadsGiveFourDegreesOfFreedomAndTheClosedFormP) {
  const std::vector<double> y{std::log(10.0), std::log(11.0), std::log(12.1)};
  const std::vector<double> x{std::log(15.0), std::log(16.5), std::log(18.15)};
  const auto w = collbench::stats::welch_test(x, y, 0.95);
  ASSERT_TRUE(w.has_value());
  const double h = std::log(1.1);
  const double se = h * std::sqrt(2.0 / 3.0);
  const double t = std::log(1.5) / se;  // 5.2103
  EXPECT_NEAR(w->shift, std::log(1.5), 1e-12);
  EXPECT_NEAR(w->se, se, 1e-12);
  EXPECT_NEAR(w->t, t, 1e-9);
  EXPECT_NEAR(w->df_welch, 4.0, 1e-9);
  EXPECT_EQ(w->df, 4);
  EXPECT_NEAR(w->pooled_sd, h, 1e-12);
  const double s4 = t / std::sqrt(t * t + 4.0);
  const double p = (1.0 - s4 * (1.0 + 2.0 / (t * t + 4.0))) / 2.0;  // 0.003235
  EXPECT_NEAR(w->p_greater, p, 1e-12);
  EXPECT_NEAR(w->p_greater, 0.003235, 1e-6);
  EXPECT_NEAR(w->p_less, 1.0 - p, 1e-12);
  EXPECT_NEAR(w->ci_high - w->shift, 2.776445 * se, 1e-6);  // t_{0.975, 4} = 2.776445
  EXPECT_NEAR(w->shift - w->ci_low, 2.776445 * se, 1e-6);
}

TEST(Welch, UnequalSpreadsRoundTheDegreesOfFreedomDown) {
  // x: 1, 2, 3 (s^2 = 1); y: 0, 0, 0, 4 (mean 1, s^2 = 4): vx = 1/3, vy = 1,
  // df = (4/3)^2 / ((1/9)/2 + 1/3) = (16/9) / (7/18) = 32/7 = 4.571 -> 4.
  const std::vector<double> x{1.0, 2.0, 3.0};
  const std::vector<double> y{0.0, 0.0, 0.0, 4.0};
  const auto w = collbench::stats::welch_test(x, y, 0.95);
  ASSERT_TRUE(w.has_value());
  EXPECT_NEAR(w->shift, 1.0, 1e-15);
  EXPECT_NEAR(w->se, std::sqrt(4.0 / 3.0), 1e-15);
  EXPECT_NEAR(w->df_welch, 32.0 / 7.0, 1e-12);
  EXPECT_EQ(w->df, 4);
  EXPECT_NEAR(w->pooled_sd, std::sqrt((2.0 * 1.0 + 3.0 * 4.0) / 5.0), 1e-15);
}

TEST(Welch, NeedsTwoValuesASideAndHandlesZeroSpread) {
  EXPECT_FALSE(collbench::stats::welch_test(std::vector<double>{1.0}, std::vector<double>{1.0, 2.0}, 0.95));
  const std::vector<double> same{2.0, 2.0, 2.0};
  const auto equal = collbench::stats::welch_test(same, same, 0.95);
  ASSERT_TRUE(equal.has_value());
  EXPECT_EQ(equal->p_greater, 1.0);
  EXPECT_EQ(equal->p_less, 1.0);
  const std::vector<double> higher{3.0, 3.0, 3.0};
  const auto up = collbench::stats::welch_test(higher, same, 0.95);
  EXPECT_EQ(up->p_greater, 0.0);
  EXPECT_EQ(up->p_less, 1.0);
  EXPECT_EQ(up->ci_low, 1.0);
  EXPECT_EQ(up->ci_high, 1.0);
}

// ---- spread between repeats ------------------------------------------------------------------------

TEST(RepeatSpread, ThreeRepeats) {
  const std::vector<double> medians{12.0, 10.0, 15.0};
  const auto s = collbench::stats::repeat_spread(medians);
  EXPECT_EQ(s.k, 3u);
  EXPECT_DOUBLE_EQ(s.median, 12.0);
  EXPECT_NEAR(s.spread_pct, 100.0 * 5.0 / 12.0, 1e-12);  // 41.67%
  const double m = (std::log(10.0) + std::log(12.0) + std::log(15.0)) / 3.0;
  const double ss = std::pow(std::log(10.0) - m, 2) + std::pow(std::log(12.0) - m, 2) + std::pow(std::log(15.0) - m, 2);
  EXPECT_NEAR(s.sd_log, std::sqrt(ss / 2.0), 1e-15);  // 0.2031
  EXPECT_NEAR(s.sd_log, 0.203075, 1e-6);
  // Three values cannot give 95%: min to max covers 1 - 2 / 2^3 = 75%.
  EXPECT_EQ(s.low, 10.0);
  EXPECT_EQ(s.high, 15.0);
  EXPECT_DOUBLE_EQ(s.confidence, 0.75);
}

TEST(RepeatSpread, CoverageOfOrderStatistics) {
  EXPECT_DOUBLE_EQ(collbench::stats::order_statistic_coverage(6, 1), 1.0 - 2.0 / 64.0);          // 0.96875
  EXPECT_DOUBLE_EQ(collbench::stats::order_statistic_coverage(10, 2), 1.0 - 2.0 * 11 / 1024.0);  // 0.9785
  EXPECT_DOUBLE_EQ(collbench::stats::order_statistic_coverage(10, 3), 1.0 - 2.0 * 56 / 1024.0);  // 0.8906
  // Ten repeats 1..10: j = 2 is the largest with coverage >= 95%, so [2, 9].
  const std::vector<double> ten{5, 3, 8, 1, 10, 2, 7, 4, 9, 6};
  const auto s = collbench::stats::repeat_spread(ten);
  EXPECT_DOUBLE_EQ(s.median, 5.5);
  EXPECT_EQ(s.low, 2.0);
  EXPECT_EQ(s.high, 9.0);
  EXPECT_DOUBLE_EQ(s.confidence, 1.0 - 22.0 / 1024.0);
  EXPECT_NEAR(s.spread_pct, 100.0 * 9.0 / 5.5, 1e-12);
}

// ---- the record ----------------------------------------------------------------------------------

RepeatPart part(double p50, double lo, double hi, double min, double max, int iters, const char* stop) {
  RepeatPart p;
  p.time.p50 = p50;
  p.time.p5 = p50 * 0.9;
  p.time.p95 = p50 * 1.2;
  p.time.p99 = p50 * 1.5;
  p.time.min = min;
  p.time.max = max;
  p.time.mean = p50 * 1.05;
  p.time.stdev = p50 * 0.1;
  p.time.cv = 0.1 / 1.05;
  p.time.ci95_low = lo;
  p.time.ci95_high = hi;
  p.iterations = iters;
  p.samples_kept = static_cast<std::uint64_t>(iters);
  p.stop_reason = stop;
  return p;
}

std::vector<RepeatPart> three_parts() {
  return {part(12.0, 11.94, 12.12, 11.0, 40.0, 300, "converged"), part(10.0, 9.99, 10.02, 9.5, 90.0, 500, "converged"),
          part(15.0, 14.85, 15.06, 14.0, 30.0, 200, "max_time")};
}

TEST(RepeatRecord, TimeIsTheMedianOverRepeatsOfEachStatistic) {
  const TimeStats t = collbench::record::combined_time(three_parts());
  EXPECT_DOUBLE_EQ(t.p50, 12.0);        // median of 12, 10, 15
  EXPECT_DOUBLE_EQ(t.ci95_low, 11.94);  // median of 11.94, 9.99, 14.85
  EXPECT_DOUBLE_EQ(t.ci95_high, 12.12);
  EXPECT_DOUBLE_EQ(t.p95, 12.0 * 1.2);
  EXPECT_DOUBLE_EQ(t.min, 9.5);   // the smallest
  EXPECT_DOUBLE_EQ(t.max, 90.0);  // the largest
  EXPECT_EQ(collbench::record::combined_stop_reason(three_parts()), "max_time");
  EXPECT_EQ(collbench::record::combined_stop_reason({three_parts()[0], three_parts()[1]}), "converged");
}

TEST(RepeatRecord, RepeatsObjectHasTheSpreadAndTheWithinRunInterval) {
  const auto r = collbench::record::repeats_of(three_parts());
  EXPECT_EQ(r.k, 3);
  EXPECT_EQ(r.p50_us, (std::vector<double>{12.0, 10.0, 15.0}));
  EXPECT_EQ(r.iterations, (std::vector<int>{300, 500, 200}));
  EXPECT_EQ(r.stop_reason, (std::vector<std::string>{"converged", "converged", "max_time"}));
  EXPECT_NEAR(r.spread_pct, 41.6667, 1e-4);
  EXPECT_EQ(r.between_low_us, 10.0);
  EXPECT_EQ(r.between_high_us, 15.0);
  EXPECT_DOUBLE_EQ(r.between_confidence, 0.75);
  // Within-run half-widths: 0.09/12 = 0.75%, 0.015/10 = 0.15%, 0.105/15 = 0.70% -> median 0.70%.
  EXPECT_NEAR(r.within_ci_pct, 0.70, 1e-9);
}

CaseRecord repeated_record(const std::vector<double>& medians) {
  CaseRecord r;
  r.run_id = "run";
  r.collective = "allreduce";
  r.redop = "sum";
  r.dtype = "float32";
  r.backend = "mpi";
  r.algo_requested = "auto";
  r.scope = "global";
  r.timing = "isolated";
  r.buffers = "host";
  r.bytes = 1024;
  r.count = 256;
  r.num_ranks = 2;
  r.domain_sizes = {2};
  r.num_domains = 1;
  r.stop_reason = "max_iters";
  r.checked = true;
  std::vector<RepeatPart> parts;
  for (double m : medians) {
    parts.push_back(part(m, m * 0.99, m * 1.01, m * 0.8, m * 3, 60, "max_iters"));
    r.samples_us.insert(r.samples_us.end(), 60, m);
  }
  r.iterations = static_cast<int>(r.samples_us.size());
  r.time_us = collbench::record::combined_time(parts);
  r.repeats = collbench::record::repeats_of(parts);
  r.case_key = collbench::record::make_case_key(r);
  return r;
}

TEST(RepeatRecord, JsonRoundTripAndSingleRunRecordsWithoutTheKey) {
  const CaseRecord r = repeated_record({12.0, 10.0, 15.0});
  const auto j = collbench::record::to_json(r);
  ASSERT_TRUE(j.contains("repeats"));
  EXPECT_EQ(j["repeats"]["k"], 3);
  EXPECT_EQ(j["repeats"]["p50_us"], nlohmann::json({12.0, 10.0, 15.0}));
  const CaseRecord back = collbench::record::case_from_json(j);
  ASSERT_TRUE(back.repeats.has_value());
  EXPECT_EQ(back.repeats->p50_us, r.repeats->p50_us);
  EXPECT_EQ(back.repeats->samples_kept, r.repeats->samples_kept);
  EXPECT_DOUBLE_EQ(back.repeats->within_ci_pct, r.repeats->within_ci_pct);
  EXPECT_FALSE(back.extra.contains("repeats"));
  EXPECT_EQ(collbench::record::to_json(back), j);
  CaseRecord single = r;
  single.repeats.reset();
  EXPECT_FALSE(collbench::record::to_json(single).contains("repeats"));
}

TEST(RepeatRecord, MalformedRepeatsAreBadInputNamingTheKey) {
  auto j = collbench::record::to_json(repeated_record({12.0, 10.0, 15.0}));
  j["repeats"]["p50_us"] = {12.0, 10.0};
  try {
    collbench::record::case_from_json(j);
    FAIL() << "accepted a repeats object with 2 medians for k = 3";
  } catch (const collbench::InputError& e) {
    EXPECT_NE(std::string(e.what()).find("record key 'repeats': k = 3"), std::string::npos) << e.what();
  }
  j["repeats"].erase("spread_pct");
  EXPECT_THROW(collbench::record::case_from_json(j), collbench::InputError);
}

TEST(RepeatRecord, TableLineShowsTheSpreadNextToTheWithinRunInterval) {
  const CaseRecord r = repeated_record({12.0, 10.0, 15.0});
  EXPECT_EQ(collbench::report::repeats_line(r),
            "#   repeats 3: p50 12.00, 10.00, 15.00 us -> median 12.00 us | between repeats: spread 41.7%, "
            "[10.00, 15.00] us (75% coverage) | within a run: +-1.00% (95% CI of the median)\n");
  CaseRecord single = r;
  single.repeats.reset();
  EXPECT_EQ(collbench::report::repeats_line(single), "");
}

// ---- the gate ------------------------------------------------------------------------------------

collbench::record::ResultFile file_of(const std::string& path, CaseRecord r) {
  collbench::record::ResultFile f;
  f.path = path;
  f.cases.push_back(std::move(r));
  return f;
}

collbench::gate::CaseVerdict gate_case(const CaseRecord& baseline, const CaseRecord& current) {
  const auto report = collbench::gate::run_gate(file_of("b.jsonl", baseline), file_of("c.jsonl", current), {}, {});
  EXPECT_EQ(report.cases.size(), 1u);
  return report.cases.front();
}

// Baseline repeats 10, 11, 12.1: spread h = ln 1.1 = 0.0953 in logs, so the minimum effect is
// max(ln 1.05, 2 x 0.0953) = 0.1906, i.e. 21.0%.
TEST(RepeatGate, OneAndAHalfTimesSlowerIsARegression) {
  const auto v = gate_case(repeated_record({10.0, 11.0, 12.1}), repeated_record({15.0, 16.5, 18.15}));
  ASSERT_TRUE(v.test.has_value());
  EXPECT_EQ(v.test->method, "repeats");
  EXPECT_EQ(v.verdict, collbench::gate::Verdict::regression) << v.reason;
  EXPECT_NEAR(v.test->ratio, 1.5, 1e-12);
  EXPECT_NEAR(v.test->t, 5.210265, 1e-6);
  EXPECT_EQ(v.test->df, 4);
  EXPECT_NEAR(v.test->p_slower, 0.003235, 1e-6);
  EXPECT_NEAR(v.test->q_slower, 0.003235, 1e-6);  // one case: q = p
  EXPECT_NEAR(v.test->noise_cv, std::log(1.1), 1e-12);
  EXPECT_NEAR(v.test->min_effect, 0.21, 1e-12);  // exp(2 ln 1.1) - 1 = 1.21 - 1
  EXPECT_NE(v.reason.find("3 vs 3 repeats"), std::string::npos) << v.reason;
}

TEST(RepeatGate, ThirtyPercentSlowerIsARegressionTenPercentIsNot) {
  const auto slower = gate_case(repeated_record({10.0, 11.0, 12.1}), repeated_record({13.0, 14.3, 15.73}));
  EXPECT_EQ(slower.verdict, collbench::gate::Verdict::regression) << slower.reason;
  EXPECT_NEAR(slower.test->t, 3.371406, 1e-6);
  EXPECT_NEAR(slower.test->p_slower, 0.014004, 1e-6);
  // x1.1: t = 1.2247, p = 0.1439 > 0.05 and 9.5% < the 21% minimum effect.
  const auto same = gate_case(repeated_record({10.0, 11.0, 12.1}), repeated_record({11.0, 12.1, 13.31}));
  EXPECT_EQ(same.verdict, collbench::gate::Verdict::pass) << same.reason;
  EXPECT_NEAR(same.test->p_slower, 0.143932, 1e-6);
}

TEST(RepeatGate, SignificantButWithinTheRepeatNoiseIsAPass) {
  // Baseline 10, 13, 16.9 (ln 1.3 apart): min effect 2 ln 1.3 -> 69%. Current x1.6: t = ln 1.6 /
  // (ln 1.3 sqrt(2/3)) = 2.19, p = 0.047 <= 0.05, but 60% < 69%: PASS, "within the minimum effect".
  const auto v = gate_case(repeated_record({10.0, 13.0, 16.9}), repeated_record({16.0, 20.8, 27.04}));
  EXPECT_EQ(v.verdict, collbench::gate::Verdict::pass) << v.reason;
  EXPECT_NEAR(v.test->min_effect, 0.69, 1e-12);
  EXPECT_LE(v.test->p_slower, 0.05);
  EXPECT_NE(v.reason.find("within the minimum effect"), std::string::npos) << v.reason;
}

TEST(RepeatGate, WithoutRepeatsOnBothSidesTheBlockRuleDecides) {
  CaseRecord baseline = repeated_record({10.0, 11.0, 12.1});
  const CaseRecord current = repeated_record({15.0, 16.5, 18.15});
  baseline.repeats.reset();
  const auto v = gate_case(baseline, current);
  ASSERT_TRUE(v.test.has_value());
  EXPECT_EQ(v.test->method, "blocks");
  EXPECT_EQ(v.test->current_blocks_us.size(), 10u);
}

}  // namespace
