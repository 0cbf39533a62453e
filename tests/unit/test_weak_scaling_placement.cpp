// Imports and reports keep placement (issue 19 item 4): the bare "NCCL version X" line, import
// with --ranks-per-domain, placement and model of imported records in reports, the reference
// point of E(N) (--base), anomalies left out of calibration (--anomaly-below) and the packing of
// projected points (--packing). Every expected value is computed by hand in the comments.
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "collbench/core/error.hpp"
#include "collbench/core/placement.hpp"
#include "collbench/model/estimate.hpp"
#include "collbench/model/placement_model.hpp"
#include "collbench/model/system_profile.hpp"
#include "collbench/record/nccltests_convert.hpp"
#include "collbench/record/nccltests_import.hpp"
#include "collbench/report/weak_scaling_json.hpp"
#include "collbench/scaling/weak_scaling.hpp"
#include "record_fixtures.hpp"

using namespace collbench;
using namespace collbench::report;
using namespace collbench::scaling;
using model::choose_ranks_per_domain;
using model::place_and_model;
using record::CaseRecord;

namespace {

const std::string kFixtures = std::string(COLLBENCH_SOURCE_DIR) + "/tests/data/nccl-tests/";

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

// The 8 x H100 all-reduce log without nccl-tests' library code, so that NCCL's own line decides.
std::string log_without_library_code() {
  std::string text = read_file(kFixtures + "all_reduce_8xH100.txt");
  const std::string code = " nccl-headers=22105 nccl-library=22105";
  text.erase(text.find(code), code.size());
  return text;
}

std::string with_line_after_first(std::string text, const std::string& line) {
  return text.insert(text.find('\n') + 1, line + "\n");
}

record::InputFile make_file(const std::string& path, std::vector<CaseRecord> cases) {
  record::InputFile f;
  f.path = path;
  for (std::size_t i = 0; i < cases.size(); ++i) f.case_lines.push_back(static_cast<int>(i) + 2);
  f.cases = std::move(cases);
  return f;
}

// 2, 4, 8 ranks at 10, 15, 20 us (busbw 100, 100, 87.5 GB/s), 8 as 4 + 4; bounds at 0.5, 0.5 and
// 0.25 of p50: the N=8 point runs at 25% of its bound.
std::vector<record::InputFile> anomaly_set() {
  std::vector<record::InputFile> files;
  int i = 0;
  for (const auto& [n, p50, frac] :
       std::vector<std::tuple<int, double, double>>{{2, 10, 0.5}, {4, 15, 0.5}, {8, 20, 0.25}}) {
    auto r = fixtures::allreduce_record(n, 1000000, p50, n == 8 ? std::vector<int>{4, 4} : std::vector<int>{});
    r.backend = "nccl";  // a GPU measurement: the default anomaly threshold applies
    fixtures::set_model(r, "gb300-nvl72", frac * p50, (frac + 0.1) * p50);
    files.push_back(make_file("n" + std::to_string(++i) + ".jsonl", {r}));
  }
  return files;
}

bool any_contains(const std::vector<std::string>& lines, const std::string& needle) {
  for (const auto& l : lines)
    if (l.find(needle) != std::string::npos) return true;
  return false;
}

}  // namespace

// ---- nccl-tests: the bare NCCL version line, placement at import --------------------------------

TEST(NcclTestsVersion, BareNcclVersionLineIsRead) {
  const auto log = record::parse_nccl_tests_log(
      with_line_after_first(log_without_library_code(), "NCCL version 2.21.5+cuda12.4"), "bare.txt");
  ASSERT_TRUE(log.nccl_version);
  EXPECT_EQ(*log.nccl_version, "2.21.5+cuda12.4");
  // Behind a launcher's prefix (srun -l) as well; and never from a comment line.
  const auto tagged = record::parse_nccl_tests_log(
      with_line_after_first(log_without_library_code(), "3: NCCL version 2.23.4+cuda12.6"), "tagged.txt");
  EXPECT_EQ(tagged.nccl_version.value_or(""), "2.23.4+cuda12.6");
  const auto none = record::parse_nccl_tests_log(log_without_library_code(), "none.txt");
  EXPECT_FALSE(none.nccl_version);
}

TEST(NcclTestsVersion, LibraryCodeStillWinsOverTheBareLine) {
  const std::string text = read_file(kFixtures + "all_reduce_8xH100.txt");
  const auto log = record::parse_nccl_tests_log(with_line_after_first(text, "NCCL version 2.99.0+cuda13.0"), "x.txt");
  EXPECT_EQ(log.nccl_version.value_or(""), "2.21.5");  // nccl-library=22105
}

TEST(NcclTestsPlacement, RanksPerDomainAtImportSetsDomainsAndSaysSo) {
  const auto log = record::parse_nccl_tests_log(read_file(kFixtures + "all_reduce_8xH100.txt"), "a.txt");
  record::NcclTestsConvertOptions opt;
  opt.ranks_per_domain = 3;  // 8 ranks: 3 + 3 + 2
  opt.placement_from = "--ranks-per-domain";
  const auto conv = record::convert_nccl_tests_log(log, opt);
  ASSERT_FALSE(conv.cases.empty());
  const auto& r = conv.cases.front();
  EXPECT_EQ(r.domain_sizes, (std::vector<int>{3, 3, 2}));
  EXPECT_EQ(r.num_domains, 3);
  EXPECT_FALSE(record::placement_unknown(r));
  EXPECT_EQ(r.extra["placement_note"],
            "placement given at import (--ranks-per-domain): domains of 3 ranks in rank order, the last one partial");
  EXPECT_NE(r.case_key.find("3,3,2"), std::string::npos) << r.case_key;
  // Without it: one domain of all ranks, unknown.
  const auto plain = record::convert_nccl_tests_log(log, record::NcclTestsConvertOptions{});
  EXPECT_EQ(plain.cases.front().domain_sizes, std::vector<int>{8});
  EXPECT_TRUE(record::placement_unknown(plain.cases.front()));
}

// ---- placement and model of records in reports --------------------------------------------------

TEST(ReportPlacement, RanksPerDomainComesFromTheFlagOrTheProfile) {
  const auto gb300 = model::load_system_profile("gb300-nvl72");
  const auto from_profile = choose_ranks_per_domain(std::nullopt, &gb300);
  EXPECT_EQ(from_profile.ranks_per_domain.value_or(0), 72);
  EXPECT_EQ(from_profile.from, "system gb300-nvl72 (72-GPU domain)");
  EXPECT_EQ(choose_ranks_per_domain(64, &gb300).ranks_per_domain.value_or(0), 64);
  EXPECT_FALSE(choose_ranks_per_domain(std::nullopt, nullptr).ranks_per_domain);
  try {
    choose_ranks_per_domain(80, &gb300);
    FAIL() << "80 > 72 accepted";
  } catch (const InputError& e) {
    EXPECT_STREQ(e.what(), "--ranks-per-domain 80 exceeds the 72-GPU scale-up domain of 'gb300-nvl72'");
  }
}

TEST(ReportPlacement, ImportedRecordsArePlacedAndModelled) {
  const auto log = record::parse_nccl_tests_log(read_file(kFixtures + "all_reduce_8xH100.txt"), "a.txt");
  auto conv = record::convert_nccl_tests_log(log, record::NcclTestsConvertOptions{});
  std::vector<record::InputFile> files{make_file("a.jsonl", conv.cases)};
  const auto h100 = model::load_system_profile("h100-hgx");
  const auto got = place_and_model(files, choose_ranks_per_domain(4, &h100), &h100);
  EXPECT_EQ(got.placed, static_cast<int>(conv.cases.size()));
  EXPECT_EQ(got.modelled, static_cast<int>(conv.cases.size()));
  const auto& r = files[0].cases.back();  // 128 MiB... the last row, in place
  EXPECT_EQ(r.domain_sizes, (std::vector<int>{4, 4}));
  EXPECT_EQ(r.case_key, record::make_case_key(r));
  EXPECT_EQ(r.extra["placement_note"],
            "placement given to report (--ranks-per-domain): domains of 4 ranks in rank order, the last one partial");
  ASSERT_TRUE(r.model);
  model::CaseGeometry g;
  g.collective = "allreduce";
  g.algo = "auto";
  g.dtype = Dtype::float32;
  g.bytes = r.bytes;
  g.placement = placement_from_sizes(8, {4, 4});
  const auto est = model::estimate(h100, g);
  ASSERT_TRUE(est);
  EXPECT_DOUBLE_EQ(r.model->bound_time_us, est->bound_time_us);
  EXPECT_DOUBLE_EQ(r.model->expected_time_us, est->expected_time_us);
  EXPECT_EQ(r.model->system, "h100-hgx");
  EXPECT_DOUBLE_EQ(r.model->efficiency, est->bound_time_us / r.time_us->p50);
}

// ---- --base -------------------------------------------------------------------------------------

TEST(WeakScalingBase, ChosenBaseIsTheReferenceOfEveryPoint) {
  auto files = anomaly_set();
  WeakScalingOptions o;
  o.requested_ranks = {};
  o.metric = Metric::time;
  o.base = 4;
  const auto rep = build_weak_scaling(files, o);
  const auto& g = rep.groups[0];
  EXPECT_EQ(g.reference_ranks, 4);
  // E(N) = p50(4) / p50(N): 15/10 = 1.5, 1, 15/20 = 0.75.
  EXPECT_DOUBLE_EQ(*g.measured[0].efficiency, 1.5);
  EXPECT_DOUBLE_EQ(*g.measured[1].efficiency, 1.0);
  EXPECT_DOUBLE_EQ(*g.measured[2].efficiency, 0.75);
  ASSERT_TRUE(g.measured[0].efficiency_ci);
  EXPECT_LE(g.measured[0].efficiency_ci->low, 1.5);
  EXPECT_GE(g.measured[0].efficiency_ci->high, 1.5);
}

TEST(WeakScalingBase, BaseWithoutAPointIsAnInputError) {
  WeakScalingOptions o;
  o.requested_ranks = {};
  o.base = 16;
  try {
    build_weak_scaling(anomaly_set(), o);
    FAIL() << "--base 16 accepted";
  } catch (const InputError& e) {
    EXPECT_STREQ(e.what(),
                 "--base 16: no group has a measured point at N=16 with a positive busbw; measured N: 2, 4, 8");
  }
}

// ---- anomalies ----------------------------------------------------------------------------------

TEST(WeakScalingAnomaly, PointBelowThresholdIsFlaggedAndNotCalibratedOn) {
  WeakScalingOptions o;
  o.requested_ranks = {16};
  o.system = model::load_system_profile("gb300-nvl72");
  const auto rep = build_weak_scaling(anomaly_set(), o);
  const auto& g = rep.groups[0];
  EXPECT_FALSE(g.measured[1].anomaly);
  ASSERT_TRUE(g.measured[2].anomaly);  // 100 x 0.25 = 25% < 40%
  EXPECT_TRUE(any_contains(g.measured[2].notes,
                           "anomaly: 25.0% of the bound and 35.0% of the expected value, below the 40% threshold"));
  EXPECT_TRUE(any_contains(rep.warnings, "1 measured point(s) below 40% of their bound are flagged as anomalies"));
  // Calibrated on N=4 at 50% instead of N=8 at 25%.
  EXPECT_EQ(g.calibration_ranks, 4);
  EXPECT_DOUBLE_EQ(*g.calibration_efficiency, 0.5);
  ASSERT_EQ(g.projected.size(), 1u);
  EXPECT_DOUBLE_EQ(g.projected[0].pct_bound, 50.0);
  EXPECT_EQ(weak_scaling_json(rep)["groups"][0]["points"][2]["anomaly"], true);
  EXPECT_TRUE(weak_scaling_json(rep)["anomaly_below_pct"].is_null());  // the default per record

  // Latency-bound: 25% of the bound but 60% of the expected value (which adds latencies): not an anomaly.
  auto latency = anomaly_set();
  fixtures::set_model(latency[2].cases[0], "gb300-nvl72", 0.25 * 20, 0.6 * 20);
  EXPECT_FALSE(build_weak_scaling(latency, o).groups[0].measured[2].anomaly);

  // CPU measurements (backend mpi) are not judged by the default threshold.
  auto cpu = anomaly_set();
  for (auto& f : cpu) f.cases[0].backend = "mpi";
  EXPECT_FALSE(build_weak_scaling(cpu, o).groups[0].measured[2].anomaly);

  // A lower threshold keeps the point; 0 turns the check off.
  o.anomaly_below_pct = 20.0;
  const auto low = build_weak_scaling(anomaly_set(), o);
  EXPECT_FALSE(low.groups[0].measured[2].anomaly);
  EXPECT_EQ(low.groups[0].calibration_ranks, 8);
}

// ---- packing of projections --------------------------------------------------------------------

TEST(WeakScalingPacking, DomainSizesPerRule) {
  EXPECT_TRUE(projected_domain_sizes(256, 72, Packing::full).empty());  // 256 = 3.56 racks
  EXPECT_EQ(projected_domain_sizes(288, 72, Packing::full), (std::vector<int>{72, 72, 72, 72}));
  EXPECT_EQ(projected_domain_sizes(256, 72, Packing::even), (std::vector<int>{64, 64, 64, 64}));
  EXPECT_EQ(projected_domain_sizes(100, 72, Packing::even), (std::vector<int>{50, 50}));
  // Equal domains: the fewest D >= ceil(N/72) that divides N. 1,024: 15 does not, 16 x 64 does
  // (spread over 15 racks it was 4x69+11x68: an NVLS team of gcd 1 and half the bound).
  EXPECT_EQ(projected_domain_sizes(1024, 72, Packing::even), std::vector<int>(16, 64));
  // 1000: 14 to 19 do not divide it, 20 x 50 does (50 >= 36, half a domain).
  EXPECT_EQ(projected_domain_sizes(1000, 72, Packing::even), std::vector<int>(20, 50));
  // 1009 is prime: no equal split keeps half a domain, so 15 domains differing by one:
  // 1009 = 15 x 67 + 4, four of 68 and eleven of 67.
  const auto even = projected_domain_sizes(1009, 72, Packing::even);
  ASSERT_EQ(even.size(), 15u);
  EXPECT_EQ(std::count(even.begin(), even.end(), 68), 4);
  EXPECT_EQ(std::count(even.begin(), even.end(), 67), 11);
  EXPECT_EQ(projected_domain_sizes(256, 72, Packing::partial), (std::vector<int>{72, 72, 72, 40}));
  EXPECT_EQ(parse_packing("even"), Packing::even);
  EXPECT_THROW(parse_packing("full-racks"), InputError);
}

TEST(WeakScalingPacking, ProjectionsStateTheirPacking) {
  WeakScalingOptions o;
  o.requested_ranks = {10, 16};
  o.system = model::load_system_profile("gb300-nvl72");
  o.anomaly_below_pct = 0.0;
  // Calibration at N=8 (4 + 4): M = 4. 16 fills 4 domains; 10 does not.
  const auto rep = build_weak_scaling(anomaly_set(), o);
  const auto& g = rep.groups[0];
  ASSERT_EQ(g.projected.size(), 1u);
  EXPECT_EQ(g.projected[0].num_ranks, 16);
  EXPECT_EQ(g.projected[0].packing, "4x4");
  EXPECT_EQ(g.projected[0].packing_rule, "full");
  EXPECT_TRUE(any_contains(g.projected[0].notes, "packing 4x4: whole domains of 4 ranks (--packing full)"));
  EXPECT_TRUE(any_contains(g.notes,
                           "no projection at N=10: 10 ranks do not fill domains of 4 (whole domains: N=8 or 12); pass "
                           "--packing even (5x2) or --packing partial (2x4+2)"));

  o.packing = Packing::partial;
  const auto partial = build_weak_scaling(anomaly_set(), o);
  const auto& p10 = partial.groups[0].projected[0];
  EXPECT_EQ(p10.num_ranks, 10);
  EXPECT_EQ(p10.domain_sizes, (std::vector<int>{4, 4, 2}));
  EXPECT_TRUE(any_contains(p10.notes, "a partial last domain of 2 (--packing partial); its 2 ranks' NICs"));
  // Its bound is the model's on 4 + 4 + 2.
  model::CaseGeometry geo;
  geo.collective = "allreduce";
  geo.algo = "ring";
  geo.dtype = Dtype::float32;
  geo.bytes = 1000000;
  geo.placement = placement_from_sizes(10, {4, 4, 2});
  const auto est = model::estimate(*o.system, geo);
  ASSERT_TRUE(est);
  EXPECT_DOUBLE_EQ(p10.bound_time_us, est->bound_time_us);
}

// ---- projections between measured points (issue 35 item 9) ---------------------------------------

namespace {

// All-reduce of 1 GB per rank measured at 144 (2 x 72) and 1,440 (20 x 72) GPUs, at 95% and 45.5%
// of their bounds (as CoreWeave's imports: 0.950 and 0.455).
std::vector<record::InputFile> two_rack_counts() {
  std::vector<record::InputFile> files;
  for (const auto& [n, frac] : std::vector<std::pair<int, double>>{{144, 0.95}, {1440, 0.455}}) {
    auto r = fixtures::allreduce_record(n, 1000000000, 10000.0, std::vector<int>(static_cast<std::size_t>(n / 72), 72));
    r.backend = "nccl";
    fixtures::set_model(r, "gb200-nvl72", frac * 10000.0, frac * 10000.0 * 1.05);
    files.push_back(make_file("n" + std::to_string(n) + ".jsonl", {r}));
  }
  return files;
}

}  // namespace

TEST(WeakScalingInterpolation, LinearInLog2N) {
  // t = log2(256/144) / log2(1440/144) = 0.830075 / 3.321928 = 0.249878;
  // 0.95 + 0.249878 x (0.455 - 0.95) = 0.826310.
  EXPECT_NEAR(interpolate_efficiency(144, 0.95, 1440, 0.455, 256), 0.826310, 1e-6);
  EXPECT_DOUBLE_EQ(interpolate_efficiency(144, 0.95, 1440, 0.455, 144), 0.95);
  EXPECT_DOUBLE_EQ(interpolate_efficiency(144, 0.95, 1440, 0.455, 1440), 0.455);
}

TEST(WeakScalingInterpolation, ProjectionsBetweenMeasuredPointsInterpolate) {
  WeakScalingOptions o;
  o.requested_ranks = {72, 256, 2880};
  o.system = model::load_system_profile("gb200-nvl72");
  o.packing = Packing::even;
  const auto rep = build_weak_scaling(two_rack_counts(), o);
  const auto& g = rep.groups[0];
  ASSERT_EQ(g.projected.size(), 3u);
  // 72, below the smallest measured N: 144's efficiency carried down, not extrapolated.
  EXPECT_EQ(g.projected[0].num_ranks, 72);
  EXPECT_EQ(g.projected[0].method, "nearest measured");
  EXPECT_NEAR(g.projected[0].pct_bound, 95.0, 1e-9);
  // 256 (4 x 64): interpolated, 82.63% of the bound, not 1,440's 45.5%.
  EXPECT_EQ(g.projected[1].num_ranks, 256);
  EXPECT_EQ(g.projected[1].packing, "4x64");
  EXPECT_EQ(g.projected[1].method, "interpolated");
  EXPECT_NEAR(g.projected[1].pct_bound, 82.6310, 1e-3);
  EXPECT_TRUE(any_contains(g.projected[1].notes,
                           "interpolated between measured N=144 (0.950 of the bound) and "
                           "N=1440 (0.455), linear in log2 N: 0.826"));
  EXPECT_DOUBLE_EQ(g.projected[1].widening, 1.0);
  // 2,880, beyond the largest: 1,440's efficiency, as before.
  EXPECT_EQ(g.projected[2].method, "extrapolated from the largest measured N");
  EXPECT_NEAR(g.projected[2].pct_bound, 45.5, 1e-9);
  // The validated range is stated (docs/model.md): gb200-nvl72's published all-reduce points.
  EXPECT_TRUE(any_contains(g.notes, "validated range: gb200-nvl72 allreduce: published points up to 1440 GPUs"));
}
