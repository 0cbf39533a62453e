// --layout nccl-tests (report/nccltests_layout_writer.cpp): the exact text for records in and out
// of place, a half without its twin, a waived case, a new block; nccl-tests' number cells; and
// collbench's importer reading the output back.
#include <gtest/gtest.h>

#include "collbench/record/nccltests_convert.hpp"
#include "collbench/record/nccltests_import.hpp"
#include "collbench/report/console_writer.hpp"
#include "collbench/report/nccltests_layout_writer.hpp"

using namespace collbench;
using namespace collbench::report;
using record::CaseRecord;

namespace {

CaseRecord measured(std::uint64_t bytes, bool in_place, double p50_us) {
  CaseRecord r;
  r.collective = "allreduce";
  r.redop = "sum";
  r.dtype = "float32";
  r.backend = "mpi";
  r.algo_requested = "auto";
  r.scope = "global";
  r.timing = "pipelined";
  r.in_place = in_place;
  r.bytes = bytes;
  r.count = bytes / 4;
  r.num_ranks = 2;
  r.domain_sizes = {2};
  record::TimeStats t;
  t.p50 = p50_us;
  t.min = p50_us - 1;
  t.max = p50_us + 2;
  t.p99 = p50_us + 1.5;
  t.cv = 0.125;
  r.time_us = t;
  r.algbw_gbps = static_cast<double>(bytes) / (p50_us * 1e3);
  r.busbw_gbps = r.algbw_gbps;  // 2(n-1)/n = 1 on 2 ranks
  r.checked = true;
  r.case_key = record::make_case_key(r);
  return r;
}

record::RunHeader header() {
  record::RunHeader h;
  h.tool_version = "9.9";
  h.hosts = {{0, "node-a", 101, std::nullopt, std::nullopt, std::nullopt, std::nullopt},
             {1, "node-a", 102, std::string("NVIDIA H200"), std::nullopt, std::string("0000:3b:00"), std::nullopt}};
  h.config = {{"cases", nlohmann::json::array()}};
  for (const bool ip : {false, true}) {
    for (const int bytes : {1024, 4096}) {
      h.config["cases"].push_back({{"collective", "allreduce"},
                                   {"backend", "mpi"},
                                   {"timing", "pipelined"},
                                   {"in_place", ip},
                                   {"bytes", bytes},
                                   {"warmup", 5},
                                   {"min_iters", 20},
                                   {"max_iters", 20},
                                   {"batch", 20},
                                   {"check", true},
                                   {"graph", 0},
                                   {"root", 0}});
    }
  }
  return h;
}

const char* const kPreamble =
    "# collbench 9.9 (--layout nccl-tests): backend mpi, domains [2], timing pipelined\n"
    "# Collective test starting: all_reduce_perf\n"
    "# nThread 1 nGpus 1 minBytes 1024 maxBytes 4096 warmup iters: 5 iters: 20 agg iters: 20 validation: 1 graph: 0\n"
    "#\n"
    "# Using devices\n"
    "#  Rank  0 Group  0 Pid    101 on     node-a device  0 [none] CPU (host memory, no GPU)\n"
    "#  Rank  1 Group  0 Pid    102 on     node-a device  1 [0000:3b:00] NVIDIA H200\n"
    "#\n"
    "#                                                              out-of-place                       in-place  "
    "          \n"
    "#       size         count      type   redop    root     time   algbw   busbw  #wrong     time   algbw   busbw"
    "  #wrong\n"
    "#        (B)    (elements)                               (us)  (GB/s)  (GB/s)             (us)  (GB/s)  (GB/s)"
    "        \n";

}  // namespace

TEST(NcclTestsLayoutWriter, NumberCellsAsNcclTestsPrintsThem) {
  EXPECT_EQ(nccltests_number(14.567, 7), "  14.57");
  EXPECT_EQ(nccltests_number(1517.564, 7), "1517.56");
  EXPECT_EQ(nccltests_number(55989.04, 7), "55989.0");
  EXPECT_EQ(nccltests_number(1234567.4, 7), "1234567");
  EXPECT_EQ(nccltests_number(12345678.9, 7), "1.2e+07");
  EXPECT_EQ(nccltests_number(353.774, 6), "353.77");
  EXPECT_EQ(nccltests_number(1234.5, 6), "1234.5");
  EXPECT_EQ(nccltests_number(0.004, 6), "  0.00");
  EXPECT_EQ(nccltests_type_name("float32"), "float");
  EXPECT_EQ(nccltests_type_name("float16"), "half");
  EXPECT_EQ(nccltests_type_name("float8e4m3"), "f8e4m3");
  EXPECT_EQ(nccltests_program("reducescatter"), "reduce_scatter_perf");
  EXPECT_EQ(nccltests_program("moe-dispatch"), "collbench_moe-dispatch");
}

TEST(NcclTestsLayoutWriter, TwinsSideBySideAndTheRestMarked) {
  auto w = make_console_writer("table", {"nccl-tests", true, false});
  EXPECT_EQ(w->begin(header()), "");
  EXPECT_EQ(w->add(measured(1024, false, 2.0)), kPreamble);  // held for its in-place twin
  EXPECT_EQ(w->add(measured(1024, true, 4.0)),
            "        1024           256     float     sum      -1     2.00    0.51    0.51       0     4.00    0.26    "
            "0.26       0\n");
  EXPECT_EQ(w->add(measured(4096, false, 8.0)), "");
  CaseRecord waived = measured(4096, true, 1.0);
  waived.time_us.reset();
  waived.status = "waived";
  waived.reason = "allreduce was refused";
  EXPECT_EQ(
      w->add(waived),
      "        4096          1024     float     sum      -1     8.00    0.51    0.51       0      N/A     N/A     "
      "N/A     N/A\n"
      "# waived 4096 B float in place: allreduce was refused\n");
  EXPECT_EQ(w->end({}),
            "# Out of bounds values : 0 OK\n"
            "# Avg bus bandwidth    : 0.426667 \n"
            "#\n"
            "# Collective test concluded: all_reduce_perf\n"
            "#\n");
}

TEST(NcclTestsLayoutWriter, PerIterationColumnsAndANewBlock) {
  auto w = make_console_writer("table", {"nccl-tests", true, true});
  w->begin(record::RunHeader{});  // no configuration: both groups
  const std::string first = w->add(measured(1024, true, 2.0));
  EXPECT_NE(first.find("#wrong    i_min    i_max    i_p99    i_cv%     time   algbw   busbw  #wrong    i_min    i_max"
                       "    i_p99    i_cv%\n"),
            std::string::npos)
      << first;
  const std::string row = first.substr(first.find("        1024"));
  EXPECT_EQ(
      row,
      "        1024           256     float     sum      -1      N/A     N/A     N/A     N/A      N/A      N/A      "
      "N/A      N/A     2.00    0.51    0.51       0     1.00     4.00     3.50    12.50\n");
  CaseRecord other = measured(1024, false, 2.0);
  other.collective = "allgather";
  other.redop.reset();
  other.case_key = record::make_case_key(other);
  const std::string next = w->add(other);
  EXPECT_EQ(next.substr(0, next.find("# collbench")),
            "# Out of bounds values : 0 OK\n# Avg bus bandwidth    : 0.512 \n#\n"
            "# Collective test concluded: all_reduce_perf\n#\n");
  EXPECT_NE(next.find("# Collective test starting: all_gather_perf\n"), std::string::npos);
}

TEST(NcclTestsLayoutWriter, ImporterReadsItBackIncludingNotMeasuredHalves) {
  auto w = make_console_writer("table", {"nccl-tests", true, false});
  std::string text = w->begin(header());
  text += w->add(measured(1024, false, 2.0));
  text += w->add(measured(1024, true, 4.0));
  text += w->add(measured(4096, false, 8.0));
  text += w->end({});
  const auto logs = record::parse_nccl_tests_logs(text, "layout.txt");
  ASSERT_EQ(logs.size(), 1u);
  EXPECT_EQ(logs[0].collective, "allreduce");
  EXPECT_EQ(logs[0].num_ranks, 2);
  EXPECT_TRUE(logs[0].warnings.empty()) << logs[0].warnings.front();
  ASSERT_EQ(logs[0].rows.size(), 2u);
  EXPECT_DOUBLE_EQ(*logs[0].rows[1].out_of_place.time_us, 8.0);
  EXPECT_FALSE(logs[0].rows[1].in_place.present());  // N/A: not measured
  record::NcclTestsConvertOptions o;
  const auto imp = record::import_nccl_tests(logs, o);
  ASSERT_EQ(imp.cases.size(), 3u);
  EXPECT_EQ(imp.cases[2].bytes, 4096u);
  EXPECT_DOUBLE_EQ(imp.cases[2].busbw_gbps, 0.51);
}
