// nccl-tests logs -> collbench records: the hand-written fixtures (all_reduce, all_gather,
// reduce_scatter, alltoall; text and -J JSON) and the two real logs beside them keep the printed
// time as p50 and the printed algbw/busbw, which agree with size / time x the busbw factor;
// unknown collectives, types and reductions are skipped with a warning. Pure C++.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "collbench/core/error.hpp"
#include "collbench/record/nccltests_convert.hpp"
#include "collbench/record/nccltests_import.hpp"
#include "collbench/record/record.hpp"

using namespace collbench;
using namespace collbench::record;

namespace {

const std::string kFixtures = std::string(COLLBENCH_SOURCE_DIR) + "/tests/data/nccl-tests/";
const std::string kRealLogs = kFixtures;  // real logs copied from public repositories (README.md there)

NcclTestsConvertOptions options() {
  NcclTestsConvertOptions o;
  o.run_id = "import-test";
  o.started_at = "2026-01-01T00:00:00Z";
  o.tool_version = "0.1.0";
  o.git_sha = "test";
  o.backends_built = {"mpi"};
  o.argv = {"collbench", "import"};
  return o;
}

const CaseRecord* find_case(const std::vector<CaseRecord>& cases, std::uint64_t bytes, bool in_place) {
  for (const auto& c : cases)
    if (c.bytes == bytes && c.in_place == in_place) return &c;
  return nullptr;
}

// Every record against the row it came from: what the log printed is what the record holds, and
// busbw agrees with size / time x the busbw factor within the printed digits.
void check_against_log(const NcclTestsLog& log, const NcclTestsConverted& conv) {
  SCOPED_TRACE(log.source_path);
  ASSERT_TRUE(log.num_ranks);
  const int n = *log.num_ranks;
  const double factor = nccl_tests_busbw_factor(log.collective, n);
  std::size_t expected = 0;
  for (const auto& row : log.rows) {
    for (const bool in_place : {false, true}) {
      const NcclTestsHalf& h = in_place ? row.in_place : row.out_of_place;
      if (!h.present()) continue;
      ++expected;
      const CaseRecord* r = nullptr;
      for (const auto& c : conv.cases) {
        if (c.extra["source_row"] == row.index && c.in_place == in_place) r = &c;
      }
      ASSERT_NE(r, nullptr) << "row " << row.index;
      EXPECT_EQ(r->collective, log.collective);
      EXPECT_EQ(r->bytes, row.size_bytes);
      EXPECT_EQ(r->count, row.count);
      EXPECT_EQ(r->num_ranks, n);
      EXPECT_EQ(r->domain_sizes, std::vector<int>{n});
      EXPECT_EQ(r->backend, "nccl");
      ASSERT_TRUE(r->time_us);
      EXPECT_DOUBLE_EQ(r->time_us->p50, *h.time_us);
      EXPECT_DOUBLE_EQ(r->busbw_gbps, *h.busbw_gbps);  // preserved, not recomputed
      EXPECT_DOUBLE_EQ(r->algbw_gbps, *h.algbw_gbps);
      EXPECT_EQ(r->checked, h.wrong.has_value());
      EXPECT_EQ(r->status, h.wrong.value_or(0) > 0 ? "failed" : "ok");
      EXPECT_EQ(r->extra["source"], "nccl-tests");
      EXPECT_EQ(r->case_key, make_case_key(*r));
      // Recomputed consistently: size / time x factor, within half a unit of the printed digits.
      if (*h.time_us > 0.0) {
        const double from_time = static_cast<double>(row.size_bytes) / (*h.time_us * 1e-6) / 1e9 * factor;
        const double allowed = h.busbw_tolerance_gbps + from_time * h.time_tolerance_us / *h.time_us + 1e-6;
        EXPECT_NEAR(r->busbw_gbps, from_time, allowed) << "size " << row.size_bytes;
        EXPECT_TRUE(r->extra["nccl_tests"]["consistent"].get<bool>());
      }
      // The record survives its own JSON.
      const CaseRecord back = case_from_json(to_json(*r));
      EXPECT_EQ(back.case_key, r->case_key);
      EXPECT_DOUBLE_EQ(back.busbw_gbps, r->busbw_gbps);
      EXPECT_EQ(back.extra["source"], "nccl-tests");
    }
  }
  EXPECT_EQ(conv.cases.size(), expected);
}

NcclTestsConverted convert_file(const std::string& path, NcclTestsLog* log_out = nullptr) {
  const auto logs = load_nccl_tests_file(path);
  EXPECT_EQ(logs.size(), 1u);
  auto conv = convert_nccl_tests_log(logs.at(0), options());
  check_against_log(logs.at(0), conv);
  if (log_out) *log_out = logs.at(0);
  return conv;
}

}  // namespace

TEST(ReportImport, EveryFixtureConvertsWithBusbwPreserved) {
  for (const char* name :
       {"all_reduce_8xH100.txt", "all_gather_16rank_cut_srun.txt", "reduce_scatter_16rank_mpirun_tagged.txt",
        "alltoall_4gpu_retyped.txt", "alltoall_8xH200_v3.json", "all_reduce_4gpu_v1.json"}) {
    const auto conv = convert_file(kFixtures + name);
    EXPECT_FALSE(conv.cases.empty()) << name;
  }
}

TEST(ReportImport, AlltoallRetypedLogKeepsNotApplicableChecks) {
  NcclTestsLog log;
  const auto conv = convert_file(kFixtures + "alltoall_4gpu_retyped.txt", &log);
  EXPECT_EQ(log.collective, "alltoall");
  const auto* out = find_case(conv.cases, 2147483648ULL, false);
  const auto* in = find_case(conv.cases, 2147483648ULL, true);
  ASSERT_TRUE(out && in);
  EXPECT_DOUBLE_EQ(out->time_us->p50, 7222.74);
  EXPECT_DOUBLE_EQ(out->busbw_gbps, 222.99);
  EXPECT_TRUE(out->checked);
  EXPECT_FALSE(in->checked);  // "#wrong N/A"
  EXPECT_FALSE(out->redop.has_value());
  EXPECT_EQ(out->dtype, "float32");
  EXPECT_EQ(out->bytes_per_rank_send, 2147483648ULL);
  EXPECT_EQ(out->iterations, 20);
  EXPECT_EQ(out->warmup, 5);
  EXPECT_EQ(out->samples_us, std::vector<double>{7222.74});
  EXPECT_DOUBLE_EQ(out->time_us->p99, 7222.74);
}

TEST(ReportImport, JsonPerIterationTimesBecomeSamples) {
  NcclTestsLog log;
  const auto conv = convert_file(kFixtures + "alltoall_8xH200_v3.json", &log);
  const auto* r = find_case(conv.cases, 33554432, false);
  ASSERT_NE(r, nullptr);
  EXPECT_DOUBLE_EQ(r->time_us->p50, 142.217728);
  EXPECT_DOUBLE_EQ(r->time_us->p99, 149.328614);
  EXPECT_DOUBLE_EQ(r->time_us->min, 139.373373);
  EXPECT_EQ(r->samples_us.size(), 3u);
  EXPECT_EQ(r->samples_dropped, 17u);
  EXPECT_EQ(r->extra["nccl_tests"]["time_fields_repeating_the_printed_time"],
            nlohmann::json::array({"p5", "ci95_low", "ci95_high"}));
  EXPECT_EQ(r->num_ranks, 8);
}

TEST(ReportImport, RealLogsConvert) {
  NcclTestsLog together;
  const auto rs = convert_file(kRealLogs + "reducescatter-8xH100-together.txt", &together);
  EXPECT_EQ(rs.cases.size(), 62u);  // 31 rows x out-of-place and in-place (size-0 rows included)
  const auto* r = find_case(rs.cases, 4194304, false);
  ASSERT_NE(r, nullptr);
  EXPECT_EQ(r->collective, "reducescatter");
  EXPECT_DOUBLE_EQ(r->time_us->p50, 41.33);
  EXPECT_DOUBLE_EQ(r->algbw_gbps, 101.49);
  EXPECT_DOUBLE_EQ(r->busbw_gbps, 88.80);
  EXPECT_EQ(r->bytes_per_rank_recv, 4194304u / 8);
  EXPECT_EQ(r->extra["nccl_tests_version"], "2.17.9");
  EXPECT_EQ(rs.hosts.size(), 8u);
  EXPECT_EQ(rs.hosts[3].host, "gpu-dp-2jvzl-pqq7p");

  NcclTestsLog pkb;
  const auto ar = convert_file(kRealLogs + "allreduce-2xK80-perfkitbenchmarker.txt", &pkb);
  EXPECT_EQ(ar.cases.size(), 22u);
  const auto* a = find_case(ar.cases, 33554432, false);
  ASSERT_NE(a, nullptr);
  EXPECT_DOUBLE_EQ(a->time_us->p50, 55989);
  EXPECT_DOUBLE_EQ(a->busbw_gbps, 0.60);
  EXPECT_FALSE(a->checked);  // validation: 0
  EXPECT_EQ(a->iterations, 1);
  EXPECT_EQ(a->num_ranks, 2);
}

TEST(ReportImport, ImportBuildsOneRunHeader) {
  const auto logs = load_nccl_tests_file(kFixtures + "all_reduce_8xH100.txt");
  const auto imp = import_nccl_tests(logs, options());
  EXPECT_EQ(imp.header.launcher, "singleton");
  EXPECT_EQ(imp.header.config["source"], "nccl-tests");
  ASSERT_EQ(imp.header.config["logs"].size(), 1u);
  EXPECT_EQ(imp.header.config["logs"][0]["path"], kFixtures + "all_reduce_8xH100.txt");
  EXPECT_EQ(imp.header.hosts.size(), 8u);
  EXPECT_TRUE(imp.header.system.is_null());
  const auto back = header_from_json(to_json(imp.header));
  EXPECT_EQ(back.run_id, "import-test");
  for (const auto& c : imp.cases) EXPECT_EQ(c.run_id, "import-test");
  // Importing the same log twice warns about the repeated cases.
  auto twice = logs;
  twice.push_back(logs.front());
  const auto imp2 = import_nccl_tests(twice, options());
  bool warned = false;
  for (const auto& w : imp2.warnings) warned |= w.find("the same case as") != std::string::npos;
  EXPECT_TRUE(warned);
}

namespace {

NcclTestsLog hand_log(const std::string& collective, std::optional<int> num_ranks) {
  NcclTestsLog log;
  log.format = "text";
  log.source_path = "hand.txt";
  log.collective = collective;
  log.num_ranks = num_ranks;
  log.header["iters"] = "20";
  for (const char* type : {"float", "int8"}) {
    for (const char* op : {"sum", "avg"}) {
      NcclTestsRow row;
      row.size_bytes = 1048576;
      row.count = 262144;
      row.type = type;
      row.redop = op;
      row.out_of_place.time_us = 10.0;
      row.out_of_place.algbw_gbps = 104.86;
      row.out_of_place.busbw_gbps = 157.29;
      row.out_of_place.time_tolerance_us = 0.005;
      row.out_of_place.algbw_tolerance_gbps = 0.005;
      row.out_of_place.busbw_tolerance_gbps = 0.005;
      row.out_of_place.wrong = 0;
      row.line = static_cast<int>(log.rows.size()) + 10;
      row.index = log.rows.size();
      log.rows.push_back(row);
    }
  }
  return log;
}

}  // namespace

TEST(ReportImport, UnknownTypesReductionsAndCollectivesAreSkippedWithWarnings) {
  const auto conv = convert_nccl_tests_log(hand_log("allreduce", 4), options());
  ASSERT_EQ(conv.cases.size(), 1u);  // float + sum only
  EXPECT_EQ(conv.cases[0].redop.value_or(""), "sum");
  EXPECT_EQ(conv.cases[0].iterations, 20);
  std::string all;
  for (const auto& w : conv.warnings) all += w + "\n";
  EXPECT_NE(all.find("type 'int8'"), std::string::npos) << all;
  EXPECT_NE(all.find("reduction 'avg'"), std::string::npos) << all;

  const auto hypercube = convert_nccl_tests_log(hand_log("hypercube", 4), options());
  EXPECT_TRUE(hypercube.skipped);
  EXPECT_TRUE(hypercube.cases.empty());
  ASSERT_FALSE(hypercube.warnings.empty());
  EXPECT_NE(hypercube.warnings.back().find("hypercube"), std::string::npos);
}

// nccl-tests' gather, scatter and reduce import as collbench's own since collbench runs them.
TEST(ReportImport, GatherScatterAndReduceImportAsTheirCollectives) {
  for (const char* name : {"gather", "scatter", "reduce"}) {
    const auto conv = convert_nccl_tests_log(hand_log(name, 4), options());
    EXPECT_FALSE(conv.skipped) << name;
    ASSERT_FALSE(conv.cases.empty()) << name;
    EXPECT_EQ(conv.cases[0].collective, name);
  }
}

TEST(ReportImport, InconsistentBusbwIsWarnedAndKept) {
  auto log = hand_log("allreduce", 4);
  log.rows[0].out_of_place.busbw_gbps = 120.0;  // not 104.86 x 1.5
  const auto conv = convert_nccl_tests_log(log, options());
  ASSERT_EQ(conv.cases.size(), 1u);
  EXPECT_DOUBLE_EQ(conv.cases[0].busbw_gbps, 120.0);
  EXPECT_FALSE(conv.cases[0].extra["nccl_tests"]["consistent"].get<bool>());
  bool warned = false;
  for (const auto& w : conv.warnings) warned |= w.find("busbw that is not size / time") != std::string::npos;
  EXPECT_TRUE(warned);
}

TEST(ReportImport, MissingRankCountOrCollectiveIsAnInputError) {
  EXPECT_THROW(convert_nccl_tests_log(hand_log("allreduce", std::nullopt), options()), InputError);
  auto o = options();
  o.num_ranks = 4;
  EXPECT_EQ(convert_nccl_tests_log(hand_log("allreduce", std::nullopt), o).cases.size(), 1u);
  o.num_ranks = 8;
  EXPECT_THROW(convert_nccl_tests_log(hand_log("allreduce", 4), o), InputError);  // contradicts the log
  EXPECT_THROW(convert_nccl_tests_log(hand_log("", 4), options()), InputError);
  auto c = options();
  c.collective = "allreduce";
  EXPECT_EQ(convert_nccl_tests_log(hand_log("", 4), c).cases.size(), 1u);
}
