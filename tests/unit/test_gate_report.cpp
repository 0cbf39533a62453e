// Gate verdicts, writers and the Google Benchmark export over synthetic result files: run
// headers and case records with deterministic per-iteration samples (no MPI, no timing).

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <optional>
#include <string>
#include <vector>

#include "collbench/core/error.hpp"
#include "collbench/gate/gate.hpp"
#include "collbench/record/jsonl.hpp"
#include "collbench/record/record.hpp"
#include "collbench/report/gate_writers.hpp"
#include "collbench/stats/summary.hpp"

namespace {

using collbench::record::CaseRecord;
using collbench::record::ResultFile;
using collbench::record::RunHeader;

// `n` samples around `center_us` with a deterministic relative wobble of +-`spread` (a
// low-discrepancy sequence; `phase` gives a different but equally noisy "run").
std::vector<double> samples(double center_us, std::size_t n, double spread = 0.01, int phase = 0) {
  std::vector<double> out;
  out.reserve(n);
  for (std::size_t i = 0; i < n; ++i) {
    const double u = std::fmod((static_cast<double>(i) + 0.5 + 0.37 * phase) * 0.6180339887498949, 1.0);
    out.push_back(center_us * (1.0 + spread * (2.0 * u - 1.0)));
  }
  return out;
}

// Samples whose consecutive blocks (of `per_block`) are constant: block b has value
// `block_values[b]`, so the per-repetition medians are exactly `block_values`.
std::vector<double> blocked(const std::vector<double>& block_values, std::size_t per_block = 20) {
  std::vector<double> out;
  for (double v : block_values) out.insert(out.end(), per_block, v);
  return out;
}

RunHeader header(const std::string& mpi_library = "MPICH Version: 4.0.2",
                 std::optional<std::string> nccl_version = std::nullopt, int num_hosts = 1) {
  RunHeader h;
  h.run_id = "run-" + mpi_library.substr(0, 5);
  h.started_at = "2026-01-01T00:00:00Z";
  h.tool_version = "0.1.0";
  h.launcher = "mpiexec";
  h.mpi_library = mpi_library;
  h.nccl_version = std::move(nccl_version);
  for (int r = 0; r < 2; ++r) {
    collbench::record::HostInfo host;
    host.rank = r;
    host.host = "node" + std::to_string(r % num_hosts);
    h.hosts.push_back(host);
  }
  return h;
}

CaseRecord make_case(std::uint64_t bytes, std::vector<double> samples_us, const std::string& backend = "mpi",
                     const std::string& collective = "allreduce") {
  CaseRecord r;
  r.run_id = "run";
  r.collective = collective;
  r.redop = "sum";
  r.dtype = "float32";
  r.backend = backend;
  r.algo_requested = "auto";
  r.scope = "global";
  r.timing = "isolated";
  r.buffers = backend == "mpi" ? "host" : "plain";
  r.bytes = bytes;
  r.count = bytes / 4;
  r.num_ranks = 2;
  r.domain_sizes = {2};
  r.num_domains = 1;
  r.iterations = static_cast<int>(samples_us.size());
  r.samples_us = std::move(samples_us);
  if (!r.samples_us.empty()) r.time_us = collbench::record::TimeStats::from(collbench::stats::summarize(r.samples_us));
  r.stop_reason = "max_iters";
  r.checked = true;
  r.case_key = collbench::record::make_case_key(r);
  return r;
}

ResultFile file(const std::string& path, std::vector<CaseRecord> cases, std::optional<RunHeader> h = header()) {
  ResultFile f;
  f.path = path;
  f.header = std::move(h);
  f.cases = std::move(cases);
  return f;
}

using collbench::InputError;
using collbench::gate::CaseVerdict;
using collbench::gate::GatePolicy;
using collbench::gate::GateReport;
using collbench::gate::run_gate;
using collbench::gate::Verdict;

const CaseVerdict& only(const GateReport& r) {
  EXPECT_EQ(r.cases.size(), 1u);
  return r.cases.front();
}

bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

std::size_t occurrences(const std::string& text, const std::string& part) {
  std::size_t n = 0;
  for (auto pos = text.find(part); pos != std::string::npos; pos = text.find(part, pos + part.size())) ++n;
  return n;
}

}  // namespace

// ---- verdicts ------------------------------------------------------------------------------

TEST(GateVerdicts, IdenticalInputsPass) {
  const auto f = file("b.jsonl", {make_case(8, samples(2.0, 200)), make_case(4096, samples(9.0, 200))});
  const auto r = run_gate(f, f, GatePolicy{});
  ASSERT_EQ(r.cases.size(), 2u);
  for (const auto& c : r.cases) {
    EXPECT_EQ(c.verdict, Verdict::pass) << c.reason;
    ASSERT_TRUE(c.test.has_value());
    EXPECT_DOUBLE_EQ(c.test->ratio, 1.0);
    EXPECT_GT(c.test->p_slower, 0.5);
    EXPECT_EQ(c.test->current_blocks_us.size(), 10u);
  }
  EXPECT_EQ(r.exit_code(), 0);
}

TEST(GateVerdicts, AnotherRunAtTheSameSpeedPasses) {
  const auto b = file("b.jsonl", {make_case(8, samples(2.0, 200, 0.02, 0))});
  const auto c = file("c.jsonl", {make_case(8, samples(2.0, 200, 0.02, 3))});
  const auto r = run_gate(b, c, GatePolicy{});
  EXPECT_EQ(only(r).verdict, Verdict::pass) << only(r).reason;
  EXPECT_NEAR(only(r).test->ratio, 1.0, 0.01);
  EXPECT_EQ(r.exit_code(), 0);
}

TEST(GateVerdicts, ThreeTimesSlowerIsARegression) {
  const auto b = file("b.jsonl", {make_case(8, samples(2.0, 200, 0.02, 0))});
  const auto c = file("c.jsonl", {make_case(8, samples(6.0, 200, 0.02, 1))});
  const auto r = run_gate(b, c, GatePolicy{});
  const auto& v = only(r);
  EXPECT_EQ(v.verdict, Verdict::regression) << v.reason;
  EXPECT_NEAR(v.test->ratio, 3.0, 0.03);
  EXPECT_LE(v.test->ratio_ci_low, v.test->ratio);
  EXPECT_GE(v.test->ratio_ci_high, v.test->ratio);
  EXPECT_GT(v.test->ratio_ci_low, 2.9);
  // Complete separation of 10 + 10 blocks: U = 100, exact p = 1/184756; one case: q = p.
  EXPECT_DOUBLE_EQ(v.test->u, 100.0);
  EXPECT_TRUE(v.test->exact);
  EXPECT_NEAR(v.test->q_slower * 184756.0, 1.0, 1e-9);
  EXPECT_TRUE(contains(v.reason, "slower x3.0")) << v.reason;
  EXPECT_EQ(r.exit_code(), 1);
}

TEST(GateVerdicts, ThreeTimesFasterIsAnImprovement) {
  const auto b = file("b.jsonl", {make_case(8, samples(6.0, 200))});
  const auto c = file("c.jsonl", {make_case(8, samples(2.0, 200, 0.01, 2))});
  const auto r = run_gate(b, c, GatePolicy{});
  EXPECT_EQ(only(r).verdict, Verdict::improved) << only(r).reason;
  EXPECT_NEAR(only(r).test->ratio, 1.0 / 3.0, 0.01);
  EXPECT_EQ(r.exit_code(), 0);
}

TEST(GateVerdicts, SignificantButSmallerThanTheMinimumEffectPasses) {
  // 3% slower with 0.2% noise: every block separates (significant), but 3% < 5%.
  const auto b = file("b.jsonl", {make_case(8, samples(2.00, 200, 0.002, 0))});
  const auto c = file("c.jsonl", {make_case(8, samples(2.06, 200, 0.002, 1))});
  const auto r = run_gate(b, c, GatePolicy{});
  const auto& v = only(r);
  EXPECT_EQ(v.verdict, Verdict::pass) << v.reason;
  EXPECT_LE(v.test->q_slower, 0.05);
  EXPECT_TRUE(contains(v.reason, "within the minimum effect")) << v.reason;
  GatePolicy strict;
  strict.min_effect = 0.01;
  EXPECT_EQ(only(run_gate(b, c, strict)).verdict, Verdict::regression);
}

TEST(GateVerdicts, MinimumEffectGrowsWithNoise) {
  // Baseline blocks alternate 10 and 13 us; current ones 12 and 15.6 (x1.2). Log block
  // medians: every value sits log(13/10)/2 = 0.1312 from its sample's median, so the robust
  // noise is 1.4826 x 0.1312 = 0.1945 and the minimum effect exp(2 x 0.1945) - 1 = 47.6%.
  // HL shift: the differences log(12/10) = log(15.6/13) = 0.182 (50 of 100), -0.080 (25),
  // 0.445 (25) -> 0.182 (x1.2) < 0.389: PASS.
  const auto b = file("b.jsonl", {make_case(8, blocked({10, 13, 10, 13, 10, 13, 10, 13, 10, 13}))});
  const auto c = file("c.jsonl", {make_case(8, blocked({12, 15.6, 12, 15.6, 12, 15.6, 12, 15.6, 12, 15.6}))});
  const auto noisy = run_gate(b, c, GatePolicy{});
  const auto& v = only(noisy);
  EXPECT_EQ(v.verdict, Verdict::pass) << v.reason;
  EXPECT_NEAR(v.test->noise_cv, 1.482602218505602 * std::log(1.3) / 2.0, 1e-12);
  EXPECT_NEAR(v.test->min_effect, std::exp(2.0 * v.test->noise_cv) - 1.0, 1e-12);
  EXPECT_NEAR(v.test->ratio, 1.2, 1e-12);
  // U = 5 x 5 (12 beats 10) + 5 x 10 (15.6 beats all) = 75; tie groups of 5 (four values):
  // sigma^2 = 100/12 (21 - 4 x 120 / 380) = 164.47; z = 24.5 / 12.825 = 1.910; p = 0.0280.
  EXPECT_DOUBLE_EQ(v.test->u, 75.0);
  EXPECT_NEAR(v.test->p_slower, 0.02804, 2e-4);
  // Without the noise term the same data is a regression (p < alpha, x1.2 > 5%).
  GatePolicy plain;
  plain.noise_multiplier = 0.0;
  EXPECT_EQ(only(run_gate(b, c, plain)).verdict, Verdict::regression);
}

TEST(GateVerdicts, BenjaminiHochbergAcrossCasesTamesOneModestPValue) {
  // The case above (p = 0.028) among 20 unchanged cases (p about 0.5 each): q_(1) =
  // min(21 x 0.028 / 1, ..., 21 x 0.5 / 21) > 0.05, so the x1.2 slowdown beyond the minimum
  // effect is a WARN, not a REGRESSION.
  GatePolicy plain;
  plain.noise_multiplier = 0.0;
  std::vector<CaseRecord> base{make_case(8, blocked({10, 13, 10, 13, 10, 13, 10, 13, 10, 13}))};
  std::vector<CaseRecord> cur{make_case(8, blocked({12, 15.6, 12, 15.6, 12, 15.6, 12, 15.6, 12, 15.6}))};
  for (int i = 1; i <= 20; ++i) {
    base.push_back(make_case(8u << i, samples(3.0, 200, 0.01, 0)));
    cur.push_back(make_case(8u << i, samples(3.0, 200, 0.01, 0)));
  }
  const auto r = run_gate(file("b.jsonl", base), file("c.jsonl", cur), plain);
  const auto& v = r.cases.front();
  EXPECT_EQ(v.verdict, Verdict::warn) << v.reason;
  EXPECT_LT(v.test->p_slower, 0.05);
  EXPECT_GT(v.test->q_slower, 0.05);  // q_(1) = min_j 21 p_(j) / j, over the other 20 too
  EXPECT_TRUE(contains(v.reason, "not significant")) << v.reason;
  EXPECT_EQ(r.count(Verdict::pass), 20u);
  EXPECT_EQ(r.exit_code(), 0);
  plain.fail_on_warn = true;
  EXPECT_EQ(run_gate(file("b.jsonl", base), file("c.jsonl", cur), plain).exit_code(), 1);
}

TEST(GateVerdicts, TooFewRepetitionsCannotReachSignificance) {
  // Three repetitions a side: the smallest one-sided p is 1 / C(6, 3) = 0.05, so at
  // alpha = 0.01 even 3x slower is only a WARN.
  GatePolicy p;
  p.repetitions = 3;
  p.alpha = 0.01;
  const auto b = file("b.jsonl", {make_case(8, samples(2.0, 60))});
  const auto c = file("c.jsonl", {make_case(8, samples(6.0, 60, 0.01, 1))});
  const auto report = run_gate(b, c, p);  // kept: `only` returns a reference into it
  const auto& v = only(report);
  EXPECT_EQ(v.verdict, Verdict::warn) << v.reason;
  EXPECT_NEAR(v.test->p_slower, 0.05, 1e-15);
}

TEST(GateVerdicts, TooFewSamplesIsAmbiguousWithTheReason) {
  const auto b = file("b.jsonl", {make_case(8, samples(2.0, 200))});
  const auto c = file("c.jsonl", {make_case(8, samples(2.0, 30))});
  const auto r = run_gate(b, c, GatePolicy{});
  EXPECT_EQ(only(r).verdict, Verdict::ambiguous);
  EXPECT_TRUE(contains(only(r).reason, "current: 30 sample(s)")) << only(r).reason;
  EXPECT_TRUE(contains(only(r).reason, "need 50")) << only(r).reason;
  EXPECT_FALSE(contains(only(r).reason, "baseline:")) << only(r).reason;
  EXPECT_EQ(r.exit_code(), 0);  // comparable, but inconclusive
}

TEST(GateVerdicts, MissingOnEitherSide) {
  const auto b = file("b.jsonl", {make_case(8, samples(2.0, 200)), make_case(64, samples(2.0, 200))});
  const auto c = file("c.jsonl", {make_case(64, samples(2.0, 200)), make_case(512, samples(2.0, 200))});
  const auto r = run_gate(b, c, GatePolicy{});
  ASSERT_EQ(r.cases.size(), 3u);
  EXPECT_EQ(r.cases[0].bytes, 8u);
  EXPECT_EQ(r.cases[0].verdict, Verdict::missing);
  EXPECT_TRUE(contains(r.cases[0].reason, "only in the baseline"));
  EXPECT_EQ(r.cases[1].verdict, Verdict::pass);
  EXPECT_EQ(r.cases[2].bytes, 512u);
  EXPECT_EQ(r.cases[2].verdict, Verdict::missing);
  EXPECT_TRUE(contains(r.cases[2].reason, "only in the current run"));
  EXPECT_EQ(r.exit_code(), 0);
  // Nothing in common: exit 4.
  const auto disjoint = run_gate(file("b.jsonl", {make_case(8, samples(2.0, 200))}),
                                 file("c.jsonl", {make_case(16, samples(2.0, 200))}), GatePolicy{});
  EXPECT_EQ(disjoint.count(Verdict::missing), 2u);
  EXPECT_EQ(disjoint.exit_code(), 4);
  EXPECT_EQ(run_gate(file("b.jsonl", {}), file("c.jsonl", {}), GatePolicy{}).exit_code(), 4);
}

TEST(GateVerdicts, DifferentNcclVersionsAreIncomparable) {
  const auto b = file("b.jsonl", {make_case(1 << 20, samples(50.0, 200), "nccl")}, header("MPICH", "2.21.5"));
  const auto c = file("c.jsonl", {make_case(1 << 20, samples(50.0, 200), "nccl")}, header("MPICH", "2.23.4"));
  const auto r = run_gate(b, c, GatePolicy{});
  EXPECT_EQ(only(r).verdict, Verdict::incomparable);
  EXPECT_TRUE(contains(only(r).reason, "nccl_version differs: '2.21.5' (baseline) vs '2.23.4' (current)"))
      << only(r).reason;
  EXPECT_FALSE(only(r).test.has_value());
  EXPECT_EQ(r.exit_code(), 4);
  // The MPI library only bootstraps NCCL runs: a different one does not matter there...
  const auto c2 = file("c.jsonl", {make_case(1 << 20, samples(50.0, 200), "nccl")}, header("Open MPI", "2.21.5"));
  EXPECT_EQ(only(run_gate(b, c2, GatePolicy{})).verdict, Verdict::pass);
  // ...but it is the library under test for the MPI backend.
  const auto m1 = file("b.jsonl", {make_case(8, samples(2.0, 200))}, header("MPICH Version: 4.0.2"));
  const auto m2 = file("c.jsonl", {make_case(8, samples(2.0, 200))}, header("MPICH Version: 4.1"));
  const auto rm = run_gate(m1, m2, GatePolicy{});
  EXPECT_EQ(only(rm).verdict, Verdict::incomparable);
  EXPECT_TRUE(contains(only(rm).reason, "mpi_library differs")) << only(rm).reason;
}

TEST(GateVerdicts, TopologyAndStatusMakeCasesIncomparable) {
  const auto b = file("b.jsonl", {make_case(8, samples(2.0, 200))}, header("MPICH", std::nullopt, 1));
  const auto c = file("c.jsonl", {make_case(8, samples(2.0, 200))}, header("MPICH", std::nullopt, 2));
  EXPECT_TRUE(contains(only(run_gate(b, c, GatePolicy{})).reason, "host count differs: 1 vs 2"));

  auto waived = make_case(8, samples(2.0, 200));
  waived.status = "waived";
  waived.reason = "algorithm nvls needs the NCCL backend";
  const auto r = run_gate(file("b.jsonl", {waived}), file("c.jsonl", {make_case(8, samples(2.0, 200))}), GatePolicy{});
  EXPECT_EQ(only(r).verdict, Verdict::incomparable);
  EXPECT_TRUE(contains(only(r).reason, "baseline status waived (algorithm nvls")) << only(r).reason;

  auto spin = make_case(8, samples(2.0, 200));
  auto yield = spin;
  spin.extra["progress"] = "spin";
  yield.extra["progress"] = "yield";
  EXPECT_TRUE(
      contains(only(run_gate(file("b", {spin}), file("c", {yield}), GatePolicy{})).reason, "progress mode differs"));
  // One side without a run header: versions cannot be verified.
  EXPECT_EQ(only(run_gate(file("b", {spin}, std::nullopt), file("c", {spin}), GatePolicy{})).verdict,
            Verdict::incomparable);
}

TEST(GateVerdicts, AbsoluteFloorOnModelEfficiency) {
  GatePolicy p;
  p.floors["allreduce"] = 0.5;
  auto low = make_case(8, samples(2.0, 200));
  low.model = collbench::record::ModelFields{};
  low.model->efficiency = 0.3;
  const auto base = file("b.jsonl", {make_case(8, samples(2.0, 200))});
  const auto r = run_gate(base, file("c.jsonl", {low}), p);
  EXPECT_EQ(only(r).verdict, Verdict::below_floor);
  EXPECT_TRUE(contains(only(r).reason, "efficiency 0.300 < floor 0.500")) << only(r).reason;
  EXPECT_TRUE(only(r).test.has_value());  // the relative numbers are still there
  EXPECT_EQ(r.exit_code(), 1);

  auto good = low;
  good.model->efficiency = 0.8;
  const auto ok = run_gate(base, file("c.jsonl", {good}), p);
  EXPECT_EQ(only(ok).verdict, Verdict::pass);
  EXPECT_TRUE(only(ok).floor->passed);

  // No model: the floor cannot be checked, and a note says so.
  const auto unchecked = run_gate(base, base, p);
  EXPECT_EQ(only(unchecked).verdict, Verdict::pass);
  EXPECT_FALSE(only(unchecked).floor->efficiency.has_value());
  ASSERT_EQ(unchecked.notes.size(), 1u);
  EXPECT_TRUE(contains(unchecked.notes[0], "floors not checked for 1 case(s)")) << unchecked.notes[0];

  // A floor needs no baseline: it applies to incomparable and new cases too.
  const auto other_mpi = file("c.jsonl", {low}, header("Open MPI v5"));
  EXPECT_EQ(only(run_gate(base, other_mpi, p)).verdict, Verdict::below_floor);
  EXPECT_EQ(only(run_gate(file("b.jsonl", {}), file("c.jsonl", {low}), p)).verdict, Verdict::below_floor);
  // "default" covers collectives not named.
  GatePolicy by_default;
  by_default.floors["default"] = 0.5;
  by_default.floors["alltoall"] = 0.1;
  EXPECT_EQ(only(run_gate(base, file("c.jsonl", {low}), by_default)).verdict, Verdict::below_floor);
}

TEST(GateVerdicts, InjectedFaultsAreRefusedUnlessAllowed) {
  auto slowed = make_case(8, samples(6.0, 200));
  slowed.fault = "slow:factor=3";
  const auto b = file("b.jsonl", {make_case(8, samples(2.0, 200))});
  const auto c = file("c.jsonl", {slowed});
  try {
    run_gate(b, c, GatePolicy{});
    FAIL() << "a faulted record was accepted";
  } catch (const InputError& e) {
    EXPECT_TRUE(contains(e.what(), "c.jsonl")) << e.what();
    EXPECT_TRUE(contains(e.what(), "slow:factor=3")) << e.what();
    EXPECT_TRUE(contains(e.what(), "--allow-faults")) << e.what();
  }
  EXPECT_EQ(only(run_gate(b, c, GatePolicy{}, {true})).verdict, Verdict::regression);
  auto faulted_header = header();
  faulted_header.fault = "delay:rank=1,us=100";
  EXPECT_THROW(run_gate(file("b.jsonl", {make_case(8, samples(2.0, 200))}, faulted_header), b, GatePolicy{}),
               InputError);
}

TEST(GateVerdicts, RepeatedCaseKeysAreInvalidInput) {
  const auto twice = file("b.jsonl", {make_case(8, samples(2.0, 200)), make_case(8, samples(2.0, 200))});
  EXPECT_THROW(run_gate(twice, twice, GatePolicy{}), InputError);
}

// ---- writers -------------------------------------------------------------------------------

namespace {

// One case of each kind: REGRESSION (8 B), MISSING (64 B), INCOMPARABLE-free PASS (512 B).
GateReport mixed_report() {
  const auto b = file("base & co.jsonl", {make_case(8, samples(2.0, 200)), make_case(64, samples(2.0, 200)),
                                          make_case(512, samples(3.0, 200))});
  auto slowed = make_case(8, samples(6.0, 200, 0.01, 1));
  const auto c = file("cur.jsonl", {slowed, make_case(512, samples(3.0, 200, 0.01, 2))});
  return run_gate(b, c, GatePolicy{});
}

}  // namespace

TEST(GateWriters, JsonCarriesVerdictsAndNumbers) {
  const auto r = mixed_report();
  const auto j = collbench::report::gate_to_json(r);
  EXPECT_EQ(j["schema"], "collbench.gate/1");
  EXPECT_EQ(j["summary"]["exit_code"], 1);
  EXPECT_EQ(j["summary"]["counts"]["REGRESSION"], 1);
  EXPECT_EQ(j["summary"]["counts"]["MISSING"], 1);
  EXPECT_EQ(j["summary"]["counts"]["PASS"], 1);
  ASSERT_EQ(j["cases"].size(), 3u);
  EXPECT_EQ(j["cases"][0]["verdict"], "REGRESSION");
  EXPECT_NEAR(j["cases"][0]["test"]["ratio"].get<double>(), 3.0, 0.05);
  EXPECT_EQ(j["cases"][0]["test"]["current_blocks_us"].size(), 10u);
  EXPECT_TRUE(j["cases"][1]["test"].is_null());
  EXPECT_EQ(j["policy"]["repetitions"], 10);
}

TEST(GateWriters, JunitHasOneTestcasePerCaseWithFailureAndSkipped) {
  const auto xml = collbench::report::render_gate_junit(mixed_report());
  EXPECT_EQ(xml.rfind("<?xml version=\"1.0\"", 0), 0u);
  EXPECT_EQ(occurrences(xml, "<testcase "), 3u);
  EXPECT_EQ(occurrences(xml, "<failure "), 1u);
  EXPECT_EQ(occurrences(xml, "<skipped "), 1u);
  // Jenkins' junit-10.xsd allows no skipped attribute on <testsuites>: counts there, skipped on the suite
  EXPECT_TRUE(
      contains(xml, "<testsuites name=\"collbench gate\" tests=\"3\" failures=\"1\" errors=\"0\" time=\"0.000\">"))
      << xml;
  EXPECT_TRUE(contains(xml,
                       "<testsuite name=\"collbench.gate\" tests=\"3\" failures=\"1\" errors=\"0\" skipped=\"1\" "
                       "time=\"0.000\">"))
      << xml;
  EXPECT_TRUE(contains(xml, "type=\"REGRESSION\""));
  EXPECT_TRUE(contains(xml, "base &amp; co.jsonl"));
  EXPECT_FALSE(contains(xml, "base & co"));
  EXPECT_EQ(occurrences(xml, "<testcase "), occurrences(xml, "</testcase>"));
}

TEST(GateWriters, JunitCarriesTheTimestampAndRealTimes) {
  auto r = mixed_report();
  r.started_at = "2026-12-04T11:46:17Z";
  r.duration_s = 0.25;
  const auto xml = collbench::report::render_gate_junit(r);
  // Ant's schema takes the timestamp without a zone designator (it stays UTC)
  EXPECT_TRUE(contains(xml, "skipped=\"1\" time=\"0.250\" timestamp=\"2026-12-04T11:46:17\">")) << xml;
  EXPECT_TRUE(
      contains(xml, "<testsuites name=\"collbench gate\" tests=\"3\" failures=\"1\" errors=\"0\" time=\"0.250\">"));
  // a testcase's time: the current record's mean x iterations; the 8 B case: 200 samples around 6 us
  const double timed = r.cases[0].timed_s;
  EXPECT_NEAR(timed, 200 * 6.0e-6, 200 * 6.0e-6 * 0.05);
  EXPECT_TRUE(contains(xml, fmt::format("name=\"{}\" time=\"{:.3f}\"", r.cases[0].case_key, timed)));
  EXPECT_EQ(collbench::report::junit_timestamp("2026-12-04T11:46:17Z"), "2026-12-04T11:46:17");
  EXPECT_EQ(collbench::report::junit_timestamp("2026-12-04T11:46:17"), "2026-12-04T11:46:17");
  EXPECT_EQ(collbench::report::junit_timestamp(""), "");
}

TEST(GateWriters, MarkdownAndTable) {
  const auto r = mixed_report();
  const auto md = collbench::report::render_gate_markdown(r);
  EXPECT_TRUE(contains(md, "| REGRESSION | allreduce auto float32 8B n=2")) << md;
  EXPECT_TRUE(contains(md, "allreduce\\|sum\\|float32")) << md;  // pipes in keys escaped
  EXPECT_TRUE(contains(md, "exit code 1"));
  const auto table = collbench::report::render_gate_table(r);
  EXPECT_TRUE(contains(table, " REGRESSION "));
  EXPECT_TRUE(contains(table, " MISSING "));
  EXPECT_TRUE(contains(table, "1 REGRESSION, 1 PASS, 1 MISSING -> exit 1")) << table;
}

// ---- Google Benchmark export ---------------------------------------------------------------

TEST(GateGbenchExport, RepetitionsAggregatesAndErrors) {
  auto waived = make_case(1024, {});
  waived.status = "waived";
  waived.reason = "needs NCCL";
  auto failed = make_case(2048, {});
  failed.status = "failed";
  failed.reason = "wrong results";
  auto short_run = make_case(64, samples(2.5, 12));
  const auto f =
      file("r.jsonl", {make_case(8, blocked({1, 2, 3, 4, 5, 6, 7, 8, 9, 10}, 6)), short_run, waived, failed});
  const auto j = collbench::report::export_gbench(f);
  ASSERT_TRUE(j.contains("context"));
  const auto& benches = j["benchmarks"];
  // 10 repetitions + 4 aggregates, 1 plain entry, 1 error entry; the waived case has none.
  ASSERT_EQ(benches.size(), 16u);
  const std::string key = f.cases[0].case_key;
  for (int i = 0; i < 10; ++i) {
    EXPECT_EQ(benches[i]["name"], key);
    EXPECT_EQ(benches[i]["run_type"], "iteration");
    EXPECT_EQ(benches[i]["repetition_index"], i);
    EXPECT_EQ(benches[i]["repetitions"], 10);
    EXPECT_EQ(benches[i]["iterations"], 6);
    EXPECT_DOUBLE_EQ(benches[i]["real_time"].get<double>(), 1000.0 * (i + 1));  // block median i + 1 us, in ns
    EXPECT_DOUBLE_EQ(benches[i]["cpu_time"].get<double>(), 1000.0 * (i + 1));
    EXPECT_EQ(benches[i]["time_unit"], "ns");
  }
  EXPECT_EQ(benches[10]["name"], key + "_mean");
  EXPECT_DOUBLE_EQ(benches[10]["real_time"].get<double>(), 5500.0);
  EXPECT_EQ(benches[11]["name"], key + "_median");
  EXPECT_EQ(benches[11]["aggregate_name"], "median");
  EXPECT_DOUBLE_EQ(benches[11]["real_time"].get<double>(), 5500.0);
  // stddev with n - 1: sum of (i - 5.5)^2 over 1..10 is 82.5 (us^2), in ns
  EXPECT_NEAR(benches[12]["real_time"].get<double>(), 1000.0 * std::sqrt(82.5 / 9.0), 1e-9);
  EXPECT_EQ(benches[12]["time_unit"], "ns");
  // cv is a fraction (aggregate_unit percentage), not a time: not scaled
  EXPECT_EQ(benches[13]["aggregate_unit"], "percentage");
  EXPECT_NEAR(benches[13]["real_time"].get<double>(), std::sqrt(82.5 / 9.0) / 5.5, 1e-12);
  EXPECT_EQ(benches[14]["name"], short_run.case_key);
  EXPECT_EQ(benches[14]["iterations"], 12);
  EXPECT_DOUBLE_EQ(benches[14]["real_time"].get<double>(), 1000.0 * short_run.time_us->p50);
  EXPECT_EQ(benches[15]["name"], failed.case_key);
  EXPECT_EQ(benches[15]["error_occurred"], true);
  EXPECT_EQ(benches[15]["error_message"], "status failed: wrong results");
  for (const auto& b : benches) EXPECT_NE(b["name"], waived.case_key);
  ASSERT_EQ(j["context"]["collbench_waived_cases"].size(), 1u);
  EXPECT_EQ(j["context"]["collbench_waived_cases"][0], waived.case_key + ": needs NCCL");
  // aggregates only: the 4 aggregates, the plain entry and the error entry
  const auto agg = collbench::report::export_gbench(f, {10, 5, true})["benchmarks"];
  ASSERT_EQ(agg.size(), 6u);
  EXPECT_EQ(agg[0]["name"], key + "_mean");
  EXPECT_EQ(agg[0]["run_type"], "aggregate");
}
