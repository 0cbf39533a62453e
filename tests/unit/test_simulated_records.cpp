// Simulated records (docs/simulation.md): the `simulated` marks round-trip through JSON, are absent
// from measured records, and the gate refuses to compare simulated with measured unless asked.
#include <gtest/gtest.h>

#include <string>

#include "collbench/gate/gate.hpp"
#include "collbench/record/jsonl.hpp"
#include "collbench/record/record.hpp"
#include "record_fixtures.hpp"

namespace collbench {
namespace {

record::ResultFile file_of(record::CaseRecord r) {
  record::ResultFile f;
  f.path = r.simulated ? "sim.jsonl" : "measured.jsonl";
  f.cases.push_back(std::move(r));
  return f;
}

TEST(SimulatedRecordsTest, MarksRoundTripAndMeasuredRecordsHaveNone) {
  record::CaseRecord r = fixtures::allreduce_record(256, 1 << 20, 40.0);
  EXPECT_FALSE(record::to_json(r).contains("simulated"));
  r.simulated = true;
  const auto j = record::to_json(r);
  EXPECT_EQ(j.at("simulated"), true);
  EXPECT_TRUE(record::case_from_json(j).simulated);
  EXPECT_FALSE(record::case_from_json(record::to_json(fixtures::allreduce_record(2, 8, 1.0))).simulated);

  record::RunHeader h;
  h.run_id = "r";
  h.started_at = "2026-12-04T00:00:00Z";
  h.launcher = "mpiexec";
  EXPECT_FALSE(record::to_json(h).contains("simulated"));
  h.simulated = {{"engine", "simgrid-smpi"}, {"version", "3.32.0"}, {"platform", "p.xml"}, {"platform_sha256", "ab"}};
  const auto hj = record::to_json(h);
  EXPECT_EQ(hj.at("simulated").at("engine"), "simgrid-smpi");
  EXPECT_EQ(record::header_from_json(hj).simulated, h.simulated);
}

TEST(SimulatedRecordsTest, GateRefusesSimulatedAgainstMeasuredUnlessAsked) {
  record::CaseRecord measured = fixtures::allreduce_record(2, 1 << 20, 40.0);
  record::CaseRecord simulated = measured;
  simulated.simulated = true;
  const auto refused = gate::run_gate(file_of(measured), file_of(simulated), gate::GatePolicy{});
  ASSERT_EQ(refused.cases.size(), 1u);
  EXPECT_EQ(refused.cases[0].verdict, gate::Verdict::incomparable);
  EXPECT_NE(refused.cases[0].reason.find("current is simulated and baseline measured"), std::string::npos);
  EXPECT_EQ(refused.exit_code(), 4);

  gate::GateOptions allow;
  allow.allow_simulated = true;
  const auto compared = gate::run_gate(file_of(measured), file_of(simulated), gate::GatePolicy{}, allow);
  EXPECT_NE(compared.cases[0].verdict, gate::Verdict::incomparable);
  EXPECT_EQ(compared.exit_code(), 0);

  // Two simulated runs compare like two measured ones.
  const auto both = gate::run_gate(file_of(simulated), file_of(simulated), gate::GatePolicy{});
  EXPECT_NE(both.cases[0].verdict, gate::Verdict::incomparable);
}

}  // namespace
}  // namespace collbench
