// Records of accept's repetitions (one per repetition under one case key) grouped for the gate as
// --repeats groups its repeats (issue 37 item 6): exact statistics, and which files are grouped.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "collbench/core/error.hpp"
#include "collbench/gate/gate.hpp"
#include "collbench/record/jsonl.hpp"

using collbench::record::CaseRecord;
using collbench::record::ResultFile;
using collbench::record::RunHeader;
using collbench::record::TimeStats;

namespace {

// One repetition: samples 0.9 p, p, 1.1 p (median p).
CaseRecord repetition(const std::string& key, double p50) {
  CaseRecord r;
  r.case_key = key;
  r.collective = "allreduce";
  r.bytes = 1000;
  r.num_ranks = 2;
  r.iterations = 3;
  r.samples_us = {0.9 * p50, p50, 1.1 * p50};
  TimeStats t;
  t.p50 = p50;
  t.min = 0.9 * p50;
  t.max = 1.1 * p50;
  t.ci95_low = 0.95 * p50;
  t.ci95_high = 1.05 * p50;
  r.time_us = t;
  r.algbw_gbps = 1000 / (p50 * 1e3);
  r.busbw_gbps = r.algbw_gbps;  // factor 1 (2 ranks: 2 (n-1)/n)
  r.stop_reason = "converged";
  return r;
}

// A file whose header lists `cases` case entries; `repeated` lists the first one twice.
ResultFile file_of(std::vector<CaseRecord> records, bool repeated) {
  ResultFile f;
  f.path = repeated ? "records-a.jsonl" : "run.jsonl";
  RunHeader h;
  h.run_id = "r";
  h.config = {{"name", "x"}, {"cases", nlohmann::json::array({{{"bytes", 1000}}, {{"bytes", 8}}})}};
  if (repeated) h.config["cases"].push_back({{"bytes", 1000}});
  f.header = h;
  f.cases = std::move(records);
  return f;
}

}  // namespace

TEST(GateRepetitions, AcceptsRepetitionsBecomeOneRecordWithTheirRepeatMedians) {
  std::size_t grouped = 0;
  const ResultFile f = collbench::record::group_repetitions(
      file_of({repetition("A", 10.0), repetition("B", 5.0), repetition("A", 12.0), repetition("A", 11.0)}, true),
      grouped);
  EXPECT_EQ(grouped, 1u);
  ASSERT_EQ(f.cases.size(), 2u);
  const CaseRecord& a = f.cases[0];
  EXPECT_EQ(a.case_key, "A");  // in order of first appearance
  EXPECT_EQ(f.cases[1].case_key, "B");
  EXPECT_FALSE(f.cases[1].repeats.has_value());
  ASSERT_TRUE(a.repeats.has_value());
  EXPECT_EQ(a.repeats->k, 3);
  EXPECT_EQ(a.repeats->p50_us, (std::vector<double>{10.0, 12.0, 11.0}));
  EXPECT_DOUBLE_EQ(a.time_us->p50, 11.0);  // the median of the repetition medians
  EXPECT_DOUBLE_EQ(a.time_us->min, 9.0);
  EXPECT_DOUBLE_EQ(a.time_us->max, 13.2);
  EXPECT_EQ(a.iterations, 9);
  EXPECT_EQ(a.samples_us.size(), 9u);
  EXPECT_DOUBLE_EQ(a.algbw_gbps, 1000 / 11e3);
  EXPECT_DOUBLE_EQ(a.busbw_gbps, 1000 / 11e3);
}

TEST(GateRepetitions, AFailedRepetitionMakesTheGroupFailedAndOtherFilesStayAsTheyAre) {
  std::vector<CaseRecord> reps{repetition("A", 10.0), repetition("A", 12.0)};
  reps[1].status = "failed";
  reps[1].reason = "wrong elements";
  std::size_t grouped = 0;
  const ResultFile f = collbench::record::group_repetitions(file_of(reps, true), grouped);
  ASSERT_EQ(f.cases.size(), 1u);
  EXPECT_EQ(f.cases[0].status, "failed");
  EXPECT_EQ(f.cases[0].reason.value_or(""), "wrong elements");
  EXPECT_FALSE(f.cases[0].repeats.has_value());  // one repetition measured: nothing to group
  // A run or sweep file (each case once in its header) keeps its repeated key: the gate refuses it.
  const ResultFile run = collbench::record::group_repetitions(file_of(reps, false), grouped);
  EXPECT_EQ(grouped, 0u);
  EXPECT_EQ(run.cases.size(), 2u);
  try {
    (void)collbench::gate::run_gate(run, run, {}, {});
    FAIL() << "a repeated key in a run's file must be refused";
  } catch (const collbench::InputError& e) {
    EXPECT_NE(std::string(e.what()).find("case 'A' appears more than once (records 1 and 2)"), std::string::npos);
  }
}

TEST(GateRepetitions, TwoRacksAcceptanceRecordsAreGatedBetweenRepeats) {
  std::size_t grouped = 0;
  const ResultFile rack_a = collbench::record::group_repetitions(
      file_of({repetition("A", 10.0), repetition("A", 11.0), repetition("A", 12.1)}, true), grouped);
  const ResultFile rack_b = collbench::record::group_repetitions(
      file_of({repetition("A", 15.0), repetition("A", 16.5), repetition("A", 18.15)}, true), grouped);
  const auto rep = collbench::gate::run_gate(rack_a, rack_b, {}, {});
  ASSERT_EQ(rep.cases.size(), 1u);
  const auto& v = rep.cases[0];
  ASSERT_TRUE(v.test.has_value()) << v.reason;
  EXPECT_EQ(v.test->method, "repeats");
  EXPECT_EQ(v.verdict, collbench::gate::Verdict::regression) << v.reason;
  EXPECT_NEAR(v.test->ratio, 1.5, 1e-12);  // the RepeatGate example, from three records a side
  EXPECT_NEAR(v.test->t, 5.210265, 1e-6);
}
