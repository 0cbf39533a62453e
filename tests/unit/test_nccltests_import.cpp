// nccl-tests log and -J JSON import: two real logs copied from public repositories and the
// hand-written fixtures, all in tests/data/nccl-tests (README.md there names the sources; all_reduce,
// all_gather, reduce_scatter, alltoall; cut, launcher-prefixed and retyped variants), older
// layouts, and bad input.
// Pure C++; no hardware needed.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <sstream>
#include <string>

#include "collbench/core/error.hpp"
#include "collbench/record/nccltests_import.hpp"
#include "nccltests_test_util.hpp"

using namespace collbench;
using namespace collbench::record;

using namespace nccltests_test;

// --------------------------------------------------------------------------------------------
// Real logs

TEST(NcclTestsRealLogs, PerfKitBenchmarkerAllReduce2xK80OldLayout) {
  const auto log = parse_nccl_tests_log(real_log(kPkb), kPkb);
  EXPECT_EQ(log.format, "text");
  EXPECT_EQ(log.collective, "allreduce");  // only the file name says so
  EXPECT_EQ(log.collective_source, "file name");
  ASSERT_EQ(log.rows.size(), 11u);
  EXPECT_EQ(log.num_ranks, 2);
  EXPECT_EQ(log.num_ranks_source, "devices list");
  EXPECT_TRUE(log.devices_complete);
  ASSERT_EQ(log.devices.size(), 2u);
  EXPECT_EQ(log.devices[0].host, "pkb-2b6a393d-2");
  EXPECT_EQ(log.devices[1].host, "pkb-2b6a393d-3");
  EXPECT_EQ(log.devices[0].pid, 9192);
  EXPECT_FALSE(log.devices[0].group.has_value());  // 2.0-era: no Group
  EXPECT_EQ(log.devices[0].bus_id, "0x00");
  EXPECT_EQ(log.devices[0].name, "Tesla K80");
  EXPECT_FALSE(log.nccl_version.has_value());
  EXPECT_FALSE(log.nccl_tests_version.has_value());
  EXPECT_EQ(log.header.at("iters"), "1");
  EXPECT_EQ(log.header.at("validation"), "0");
  EXPECT_EQ(log.header.at("nGpus"), "1");
  EXPECT_EQ(log.header.at("step"), "2(factor)");
  EXPECT_EQ(log.header.at("warmup iters"), "5");
  EXPECT_EQ(log.header.at("agg iters"), "1");
  ASSERT_TRUE(log.avg_busbw.has_value());
  EXPECT_DOUBLE_EQ(*log.avg_busbw, 0.565546);
  EXPECT_EQ(log.out_of_bounds, 0);

  // Expected rows of SOURCES.md.
  struct Expected {
    std::uint64_t size;
    double time, algbw, busbw;
  };
  for (const Expected e : {Expected{1048576, 2410.0, 0.44, 0.44}, Expected{33554432, 55989, 0.60, 0.60},
                           Expected{1073741824, 1752724, 0.61, 0.61}}) {
    const auto* r = row_with_size(log, e.size);
    ASSERT_NE(r, nullptr) << e.size;
    EXPECT_DOUBLE_EQ(*r->out_of_place.time_us, e.time);
    EXPECT_DOUBLE_EQ(*r->out_of_place.algbw_gbps, e.algbw);
    EXPECT_DOUBLE_EQ(*r->out_of_place.busbw_gbps, e.busbw);
    EXPECT_FALSE(r->out_of_place.wrong.has_value());  // N/A: validation off
    EXPECT_FALSE(r->in_place.wrong.has_value());
    EXPECT_EQ(r->type, "float");
    EXPECT_EQ(r->redop, "sum");
    EXPECT_EQ(r->root, -1);
  }
  EXPECT_EQ(log.rows.front().line, 10);
  EXPECT_EQ(log.rows.front().count, 262144u);
  EXPECT_DOUBLE_EQ(*log.rows.front().in_place.time_us, 2709.7);
  EXPECT_DOUBLE_EQ(log.rows.front().out_of_place.time_tolerance_us, 0.05);
  EXPECT_DOUBLE_EQ(log.rows[3].out_of_place.time_tolerance_us, 0.5);  // "14868"
  expect_busbw_preserved_and_consistent(log);
  EXPECT_FALSE(any_warning_contains(log, "average bus bandwidth")) << all_warnings(log);
}

TEST(NcclTestsRealLogs, TogetherReduceScatter8xH100WithSizeZeroRows) {
  const auto log = parse_nccl_tests_log(real_log(kTogether), kTogether);
  EXPECT_EQ(log.collective, "reducescatter");
  EXPECT_EQ(log.program, "reduce_scatter_perf");
  EXPECT_EQ(log.collective_source, "program name");
  ASSERT_EQ(log.rows.size(), 31u);
  EXPECT_EQ(log.num_ranks, 8);
  EXPECT_EQ(log.num_ranks_source, "devices list");
  EXPECT_TRUE(log.devices_complete);
  EXPECT_EQ(log.devices[7].bus_id, "0000:55:00");
  EXPECT_EQ(log.devices[7].group, 0);
  EXPECT_EQ(log.devices[7].device, 7);
  EXPECT_EQ(log.devices[7].name, "NVIDIA H100 80GB HBM3");
  EXPECT_EQ(log.nccl_tests_version, "2.17.9");
  EXPECT_EQ(log.nccl_version, "2.26.2");
  EXPECT_EQ(log.header.at("nGpus"), "8");
  EXPECT_EQ(log.header.at("maxBytes"), "8589934592");
  ASSERT_TRUE(log.avg_busbw.has_value());
  EXPECT_DOUBLE_EQ(*log.avg_busbw, 111.49);

  // The first four rows have size 0 and count 0 and still carry times.
  const double zero_times[] = {0.94, 0.91, 0.90, 0.88};
  for (int i = 0; i < 4; ++i) {
    const auto& r = log.rows[static_cast<std::size_t>(i)];
    EXPECT_EQ(r.size_bytes, 0u);
    EXPECT_EQ(r.count, 0u);
    EXPECT_DOUBLE_EQ(*r.out_of_place.time_us, zero_times[i]);
    EXPECT_DOUBLE_EQ(*r.out_of_place.busbw_gbps, 0.0);
    EXPECT_EQ(r.out_of_place.wrong, 0u);
    EXPECT_EQ(r.in_place.wrong, 0u);
  }
  struct Expected {
    std::uint64_t size;
    double time, algbw, busbw;
  };
  for (const Expected e : {Expected{128, 35.51, 0.00, 0.00}, Expected{4194304, 41.33, 101.49, 88.80},
                           Expected{8589934592ull, 20767.1, 413.63, 361.93}}) {
    const auto* r = row_with_size(log, e.size);
    ASSERT_NE(r, nullptr) << e.size;
    EXPECT_DOUBLE_EQ(*r->out_of_place.time_us, e.time);
    EXPECT_DOUBLE_EQ(*r->out_of_place.algbw_gbps, e.algbw);
    EXPECT_DOUBLE_EQ(*r->out_of_place.busbw_gbps, e.busbw);
  }
  expect_busbw_preserved_and_consistent(log);
  EXPECT_TRUE(log.warnings.empty()) << all_warnings(log);
}

TEST(NcclTestsRealLogs, RankCountRecoveredWhenTheDeviceListIsCut) {
  std::string text = real_log(kTogether);
  // Keep ranks 0 and 1, replace ranks 2..7 by "...": what a log pasted into a ticket looks like.
  const auto from = text.find("#  Rank  2");
  const auto to = text.find("#\n#    ", from);
  ASSERT_NE(from, std::string::npos);
  ASSERT_NE(to, std::string::npos);
  text.replace(from, to - from, "#  ...\n");
  const auto log = parse_nccl_tests_log(text, kTogether);
  EXPECT_FALSE(log.devices_complete);
  EXPECT_EQ(log.devices.size(), 2u);
  EXPECT_EQ(log.num_ranks, 8) << all_warnings(log);
  EXPECT_EQ(log.num_ranks_source, "busbw/algbw ratio");
  EXPECT_TRUE(any_warning_contains(log, "recovered from the busbw/algbw ratio")) << all_warnings(log);
  EXPECT_TRUE(any_warning_contains(log, "cut")) << all_warnings(log);
  expect_busbw_preserved_and_consistent(log);
}

TEST(NcclTestsRealLogs, WindowsLineEndingsReadTheSame) {
  std::string text = real_log(kPkb), crlf;
  for (char c : text) {
    if (c == '\n') crlf += '\r';
    crlf += c;
  }
  const auto log = parse_nccl_tests_log(crlf, kPkb);
  ASSERT_EQ(log.rows.size(), 11u);
  EXPECT_EQ(log.num_ranks, 2);
  EXPECT_DOUBLE_EQ(*log.rows.back().in_place.time_us, 1763386);
}

// --------------------------------------------------------------------------------------------
// Hand-written fixtures

TEST(NcclTestsFixtures, AllReduce8xH100StandardLayout) {
  const auto log = load_nccl_tests_file(kFixtures + "all_reduce_8xH100.txt");
  ASSERT_EQ(log.size(), 1u);
  const auto& l = log[0];
  EXPECT_EQ(l.collective, "allreduce");
  EXPECT_EQ(l.num_ranks, 8);
  EXPECT_EQ(l.nccl_tests_version, "2.18.3");
  EXPECT_EQ(l.nccl_version, "2.21.5");
  ASSERT_EQ(l.rows.size(), 14u);
  EXPECT_EQ(l.rows[0].size_bytes, 8u);
  EXPECT_EQ(l.rows[0].count, 2u);
  const auto* big = row_with_size(l, 536870912);
  ASSERT_NE(big, nullptr);
  EXPECT_DOUBLE_EQ(*big->out_of_place.busbw_gbps, 619.10);
  EXPECT_DOUBLE_EQ(*big->in_place.algbw_gbps, 341.65);
  EXPECT_DOUBLE_EQ(nccl_tests_busbw_factor(l.collective, *l.num_ranks), 1.75);
  expect_busbw_preserved_and_consistent(l);
  EXPECT_TRUE(l.warnings.empty()) << all_warnings(l);
}

TEST(NcclTestsFixtures, AllGather16RanksSrunPrefixedWithCutDeviceList) {
  const auto logs = load_nccl_tests_file(kFixtures + "all_gather_16rank_cut_srun.txt");
  ASSERT_EQ(logs.size(), 1u);
  const auto& l = logs[0];
  EXPECT_EQ(l.collective, "allgather");
  EXPECT_EQ(l.program, "all_gather_perf");
  ASSERT_EQ(l.rows.size(), 12u);
  EXPECT_EQ(l.devices.size(), 4u);
  EXPECT_FALSE(l.devices_complete);
  EXPECT_EQ(l.devices[3].host, "gb-a017");
  EXPECT_EQ(l.num_ranks, 16) << all_warnings(l);
  EXPECT_EQ(l.num_ranks_source, "busbw/algbw ratio");
  EXPECT_TRUE(any_warning_contains(l, "(n-1)/n")) << all_warnings(l);
  EXPECT_EQ(l.header.at("unalign"), "0");
  EXPECT_EQ(l.rows.back().size_bytes, 1073741824u);
  EXPECT_EQ(l.rows.back().redop, "none");
  EXPECT_DOUBLE_EQ(*l.rows.back().out_of_place.busbw_gbps, 165.75);
  expect_busbw_preserved_and_consistent(l);
  EXPECT_FALSE(any_warning_contains(l, "average bus bandwidth")) << all_warnings(l);
}

TEST(NcclTestsFixtures, ReduceScatterMpirunTaggedWithNcclInfoNoise) {
  const auto logs = load_nccl_tests_file(kFixtures + "reduce_scatter_16rank_mpirun_tagged.txt");
  ASSERT_EQ(logs.size(), 1u);
  const auto& l = logs[0];
  EXPECT_EQ(l.collective, "reducescatter");
  ASSERT_EQ(l.rows.size(), 12u);
  EXPECT_EQ(l.num_ranks, 16);
  EXPECT_EQ(l.num_ranks_source, "devices list");
  EXPECT_TRUE(l.devices_complete);
  EXPECT_EQ(l.devices[8].host, "node-b02");
  EXPECT_EQ(l.devices[8].device, 0);
  EXPECT_EQ(l.nccl_version, "2.26.2");  // nccl-library code wins over the INFO line
  EXPECT_TRUE(any_warning_contains(l, "not nccl-tests output")) << all_warnings(l);
  EXPECT_EQ(l.rows[6].size_bytes, 1048576u);  // the row after the INFO line
  expect_busbw_preserved_and_consistent(l);
}

TEST(NcclTestsFixtures, AlltoallRetypedByHand) {
  const auto logs = load_nccl_tests_file(kFixtures + "alltoall_4gpu_retyped.txt");
  ASSERT_EQ(logs.size(), 1u);
  const auto& l = logs[0];
  EXPECT_EQ(l.collective, "alltoall");
  EXPECT_EQ(l.collective_source, "file name");
  ASSERT_EQ(l.rows.size(), 8u);
  EXPECT_TRUE(l.devices.empty());
  EXPECT_EQ(l.num_ranks, 4) << all_warnings(l);  // ratio 3/4, and a multiple of nGpus = 4
  EXPECT_EQ(l.num_ranks_source, "busbw/algbw ratio");
  const auto* r = row_with_size(l, 524288);
  ASSERT_NE(r, nullptr);
  EXPECT_DOUBLE_EQ(*r->out_of_place.algbw_gbps, 49.4);
  EXPECT_DOUBLE_EQ(r->out_of_place.algbw_tolerance_gbps, 0.05);  // retyped with one decimal
  EXPECT_EQ(r->out_of_place.wrong, 0u);
  EXPECT_FALSE(r->in_place.wrong.has_value());  // alltoall in-place: N/A
  EXPECT_EQ(l.rows[1].line, 7);                 // the tab-separated row
  expect_busbw_preserved_and_consistent(l);
  EXPECT_FALSE(any_warning_contains(l, "average bus bandwidth")) << all_warnings(l);
}

TEST(NcclTestsFixtures, JsonVersion3Alltoall) {
  const auto logs = load_nccl_tests_file(kFixtures + "alltoall_8xH200_v3.json");
  ASSERT_EQ(logs.size(), 1u);
  const auto& l = logs[0];
  EXPECT_EQ(l.format, "json");
  EXPECT_EQ(l.json_version, 3);
  EXPECT_EQ(l.program, "alltoall_perf");
  EXPECT_EQ(l.collective, "alltoall");
  EXPECT_EQ(l.nccl_version, "2.27.3");
  // Two processes x 4 GPUs: config.devices lists the first rank of each process.
  EXPECT_EQ(l.devices.size(), 2u);
  EXPECT_EQ(l.num_ranks, 8) << all_warnings(l);
  EXPECT_EQ(l.header.at("nGpus"), "4");
  EXPECT_EQ(l.header.at("step"), "8(factor)");
  EXPECT_EQ(l.header.at("iters"), "20");
  EXPECT_EQ(l.env.count("NCCL_IB_HCA"), 1u);
  EXPECT_EQ(l.env.count("CUDA_VISIBLE_DEVICES"), 1u);
  EXPECT_EQ(l.env.count("HOME"), 0u);  // only NCCL_/CUDA_/UCX_/OMPI_/MPICH_ are kept
  EXPECT_EQ(l.env.count("USER"), 0u);
  ASSERT_EQ(l.rows.size(), 6u);
  EXPECT_EQ(l.rows[0].root, -1);
  EXPECT_EQ(l.rows[0].line, 0);
  EXPECT_EQ(l.rows[0].out_of_place.wrong, 0u);
  EXPECT_FALSE(l.rows[0].in_place.wrong.has_value());
  const auto& last = l.rows.back();
  ASSERT_TRUE(last.out_of_place.per_iteration.has_value());
  EXPECT_EQ(last.out_of_place.per_iteration->times_us.size(), 3u);
  EXPECT_EQ(last.out_of_place.per_iteration->per_process_max_times_us.size(), 2u);
  EXPECT_TRUE(last.out_of_place.per_iteration->p50_us.has_value());
  ASSERT_TRUE(l.avg_busbw.has_value());
  expect_busbw_preserved_and_consistent(l);
  EXPECT_TRUE(l.warnings.empty()) << all_warnings(l);
}

TEST(NcclTestsFixtures, JsonVersion1WithMisspelledAverage) {
  const auto l = parse_nccl_tests_json(read_file(kFixtures + "all_reduce_4gpu_v1.json"), "all_reduce_4gpu_v1.json");
  EXPECT_EQ(l.json_version, 1);
  EXPECT_EQ(l.collective, "allreduce");
  EXPECT_EQ(l.num_ranks, 4);
  ASSERT_TRUE(l.avg_busbw.has_value());  // "average_bus_bandwidith" / "bandwidith" in version 1
  EXPECT_GT(*l.avg_busbw, 0.0);
  expect_busbw_preserved_and_consistent(l);
  EXPECT_TRUE(l.warnings.empty()) << all_warnings(l);
}

// --------------------------------------------------------------------------------------------
// Other layouts

TEST(NcclTestsLayouts, Layout2019WithoutRootAndWithMaxErrorColumn) {
  const std::string text =
      "# nThread 1 nGpus 2 minBytes 1024 maxBytes 4096 step: 2(factor) warmup iters: 5 iters: 20 validation: 1 \n"
      "#\n"
      "# Using devices\n"
      "#   Rank  0 Pid  11 on    host-a device  0 [0x06] Tesla V100-SXM2-16GB\n"
      "#   Rank  1 Pid  11 on    host-a device  1 [0x07] Tesla V100-SXM2-16GB\n"
      "#\n"
      "#                                                 out-of-place                       in-place          \n"
      "#       size         count    type   redop     time   algbw   busbw  error     time   algbw   busbw  error\n"
      "#        (B)    (elements)                     (us)  (GB/s)  (GB/s)            (us)  (GB/s)  (GB/s)       \n"
      "        1024           256   float     sum    10.00    0.10    0.10  0e+00    10.00    0.10    0.10  0e+00\n"
      "        2048           512   float     sum    10.00    0.20    0.20  2e-07    10.00    0.20    0.20  0e+00\n"
      "        4096          1024   float     sum    10.00    0.41    0.41  0e+00    10.00    0.41    0.41  0e+00\n"
      "# Out of bounds values : 0 OK\n"
      "# Avg bus bandwidth    : 0.236667 \n";
  const auto l = parse_nccl_tests_log(text, "all_reduce_perf.log");
  ASSERT_EQ(l.rows.size(), 3u);
  EXPECT_EQ(l.num_ranks, 2);
  EXPECT_EQ(l.rows[0].root, -1);
  EXPECT_EQ(l.rows[0].redop, "sum");
  EXPECT_FALSE(l.rows[1].out_of_place.wrong.has_value());
  ASSERT_TRUE(l.rows[1].out_of_place.max_error.has_value());
  EXPECT_DOUBLE_EQ(*l.rows[1].out_of_place.max_error, 2e-7);
  expect_busbw_preserved_and_consistent(l);
}

TEST(NcclTestsLayouts, Layout2017TimesInMilliseconds) {
  const std::string text =
      "nThread 1 nGpus 4 minBytes 1048576 maxBytes 2097152 step: 2(factor) warmup iters: 5 iters: 20 validation: 1 \n"
      "# Using devices\n"
      "#   Rank  0 on  box device  0 [0x04] Tesla P100-SXM2-16GB\n"
      "#   Rank  1 on  box device  1 [0x05] Tesla P100-SXM2-16GB\n"
      "#   Rank  2 on  box device  2 [0x06] Tesla P100-SXM2-16GB\n"
      "#   Rank  3 on  box device  3 [0x07] Tesla P100-SXM2-16GB\n"
      "\n"
      "#                                 out-of-place                    in-place\n"
      "#      bytes             N    type      op     time  algbw  busbw      res     time  algbw  busbw      res\n"
      "     1048576        262144   float     sum    0.200   5.24   7.86    0e+00    0.200   5.24   7.86    0e+00\n"
      "     2097152        524288   float     sum    0.300   6.99  10.49    0e+00    0.300   6.99  10.49    0e+00\n"
      " Out of bounds values : 0 OK\n"
      " Avg bus bandwidth    : 9.175 \n";
  const auto l = parse_nccl_tests_log(text, "old.log");
  ASSERT_EQ(l.rows.size(), 2u);
  EXPECT_DOUBLE_EQ(*l.rows[0].out_of_place.time_us, 200.0);  // 0.200 ms
  EXPECT_DOUBLE_EQ(l.rows[0].out_of_place.time_tolerance_us, 0.5);
  EXPECT_TRUE(any_warning_contains(l, "ms")) << all_warnings(l);
  EXPECT_EQ(l.num_ranks, 4);
  EXPECT_FALSE(l.devices[0].pid.has_value());
  EXPECT_EQ(l.devices[0].host, "box");
  EXPECT_EQ(l.collective, "allreduce");  // busbw/algbw = 1.5 > 1: only all-reduce does that
  EXPECT_TRUE(any_warning_contains(l, "inferred from the busbw/algbw ratio above 1")) << all_warnings(l);
  ASSERT_TRUE(l.avg_busbw.has_value());
  expect_busbw_preserved_and_consistent(l);
}

TEST(NcclTestsLayouts, PerIterationColumnsAndTimestamps) {
  const std::string text =
      "# nccl-tests version 2.19.6 nccl-headers=22807 nccl-library=22807\n"
      "# Collective test starting: all_gather_perf\n"
      "# nThread 1 nGpus 2 minBytes 1048576 maxBytes 2097152 step: 2(factor) warmup iters: 1 iters: 10 agg iters: 1 "
      "validation: 1 graph: 0 unalign: 0\n"
      "# Per-Iteration Report: CUDA event timing; i_* uses max over process rows \n"
      "#\n"
      "# Using devices\n"
      "#  Rank  0 Group  0 Pid    501 on     node-1 device  0 [0000:19:00] NVIDIA B200\n"
      "#  Rank  1 Group  0 Pid    501 on     node-1 device  1 [0000:3b:00] NVIDIA B200\n"
      "#\n"
      "#                                              out-of-place (+ per-iteration)                                "
      "in-place (+ per-iteration)\n"
      "#       size         count      type   redop    root     time   algbw   busbw  #wrong    i_min    i_max    "
      "i_p99    i_cv%     time   algbw   busbw  #wrong    i_min    i_max    i_p99    i_cv%           timestamp\n"
      "#        (B)    (elements)                               (us)  (GB/s)  (GB/s)             (us)     (us)     "
      "(us)      (%)     (us)  (GB/s)  (GB/s)             (us)     (us)     (us)      (%) %Y-%m-%d %H:%M:%S\n"
      "     1048576        131072     float    none      -1    20.00   52.43   26.21       0    19.50    21.00    "
      "21.00     2.10    20.00   52.43   26.21       0    19.40    20.90    20.90     1.90 2026-07-01 10:00:00\n"
      "     2097152        262144     float    none      -1    30.00   69.91   34.95       0    29.50    31.00    "
      "31.00     1.20    30.00   69.91   34.95       0    29.40    30.90    30.90     1.10 2026-07-01 10:00:01\n"
      "# Out of bounds values : 0 OK\n"
      "# Avg bus bandwidth    : 30.58 \n"
      "#\n"
      "# Collective test concluded: all_gather_perf\n";
  const auto l = parse_nccl_tests_log(text, "x.log");
  ASSERT_EQ(l.rows.size(), 2u);
  EXPECT_EQ(l.num_ranks, 2);
  ASSERT_TRUE(l.rows[0].out_of_place.per_iteration.has_value());
  EXPECT_DOUBLE_EQ(*l.rows[0].out_of_place.per_iteration->min_us, 19.5);
  EXPECT_DOUBLE_EQ(*l.rows[0].in_place.per_iteration->cv_pct, 1.90);
  EXPECT_DOUBLE_EQ(*l.rows[1].in_place.per_iteration->p99_us, 30.90);
  EXPECT_DOUBLE_EQ(*l.rows[1].in_place.busbw_gbps, 34.95);
  expect_busbw_preserved_and_consistent(l);
}

TEST(NcclTestsLayouts, RowsWithoutTheirHeaderAreInferredWithAWarning) {
  const std::string text =
      "     1048576        262144     float     sum      -1    20.00   52.43   91.75       0    20.00   52.43   91.75  "
      "     0\n"
      "     2097152        524288     float     sum      -1    30.00   69.91  122.33       0    30.00   69.91  122.33  "
      "     0\n";
  const auto l = parse_nccl_tests_log(text, "all_reduce_perf_cut.txt");
  ASSERT_EQ(l.rows.size(), 2u);
  EXPECT_EQ(l.collective, "allreduce");
  EXPECT_TRUE(any_warning_contains(l, "columns inferred")) << all_warnings(l);
  EXPECT_TRUE(any_warning_contains(l, "footer")) << all_warnings(l);
  EXPECT_EQ(l.num_ranks, 8) << all_warnings(l);  // 2(n-1)/n = 1.75
  EXPECT_EQ(l.num_ranks_source, "busbw/algbw ratio");
}

TEST(NcclTestsLayouts, BroadcastRatioCarriesNoRankCount) {
  const std::string text =
      "#       size         count      type   redop    root     time   algbw   busbw  #wrong     time   algbw   busbw  "
      "#wrong\n"
      "     1048576        262144     float    none       0    20.00   52.43   52.43       0    20.00   52.43   52.43  "
      "     0\n"
      "# Avg bus bandwidth    : 52.43\n";
  const auto l = parse_nccl_tests_log(text, "broadcast_perf.out");
  EXPECT_EQ(l.collective, "broadcast");
  EXPECT_EQ(l.rows[0].root, 0);
  EXPECT_FALSE(l.num_ranks.has_value());
  EXPECT_TRUE(any_warning_contains(l, "carries no rank count")) << all_warnings(l);
}

TEST(NcclTestsLayouts, DeviceListDisagreeingWithTheRatioIsReported) {
  const std::string text = read_file(kFixtures + "all_reduce_8xH100.txt");
  // Drop ranks 4..7 without a "..." marker: the list looks complete with 4 ranks.
  std::string cut = text;
  const auto from = cut.find("#  Rank  4");
  const auto to = cut.find("#\n#    ", from);
  cut.erase(from, to - from);
  const auto l = parse_nccl_tests_log(cut, "all_reduce.txt");
  EXPECT_EQ(l.num_ranks, 4);
  EXPECT_TRUE(any_warning_contains(l, "ratio fits 8")) << all_warnings(l);
  EXPECT_TRUE(any_warning_contains(l, "not algbw x")) << all_warnings(l);
}

TEST(NcclTestsLayouts, SeveralRunsInOneLog) {
  const std::string a = read_file(kFixtures + "all_reduce_8xH100.txt");
  const std::string b = read_file(kFixtures + "all_gather_16rank_cut_srun.txt");
  const auto logs = parse_nccl_tests_logs(a + b, "both.log");
  ASSERT_EQ(logs.size(), 2u);
  EXPECT_EQ(logs[0].collective, "allreduce");
  EXPECT_EQ(logs[1].collective, "allgather");
  EXPECT_EQ(logs[1].num_ranks, 16);
  EXPECT_EQ(logs[0].rows.size(), 14u);
  EXPECT_EQ(logs[1].rows.size(), 12u);
  const int first_line_of_b = static_cast<int>(std::count(a.begin(), a.end(), '\n')) + 1;
  EXPECT_GE(logs[1].first_line, first_line_of_b);
  const std::string msg = input_error_message([&] { (void)parse_nccl_tests_log(a + b, "both.log"); });
  EXPECT_NE(msg.find("both.log:" + std::to_string(logs[1].first_line) + ":"), std::string::npos) << msg;
  EXPECT_NE(msg.find("second nccl-tests run"), std::string::npos) << msg;
}

TEST(NcclTestsLayouts, TruncatedLastLineIsSkippedWithAWarning) {
  std::string text = read_file(kFixtures + "all_reduce_8xH100.txt");
  text = text.substr(0, text.find("   536870912"));                               // cut inside the table
  text += "   536870912     134217728     float     sum      -1  1517.56  353.";  // no newline
  const auto l = parse_nccl_tests_log(text, "killed.log");
  EXPECT_EQ(l.rows.size(), 13u);
  EXPECT_TRUE(any_warning_contains(l, "cut short")) << all_warnings(l);
}
