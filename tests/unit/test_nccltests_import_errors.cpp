// nccl-tests import: bad input (every message names the file, line and column or field) and the
// pure functions (busbw factors, collective names, version codes). The logs and layouts are
// test_nccltests_import.cpp.
#include <gtest/gtest.h>

#include <string>

#include "collbench/core/error.hpp"
#include "collbench/record/nccltests_import.hpp"
#include "nccltests_test_util.hpp"

using namespace collbench;
using namespace collbench::record;
using namespace nccltests_test;

// --------------------------------------------------------------------------------------------
// Bad input: InputError (exit code 2) naming the file and line

TEST(NcclTestsErrors, MissingColumnNamesFileAndLine) {
  const std::string text =
      replace_once(real_log(kPkb), "2097152        524288     float     sum      -1   4710.4    0.45",
                   "2097152        524288     float     sum      -1   4710.4");
  const std::string msg = input_error_message([&] { (void)parse_nccl_tests_log(text, "pkb.txt"); });
  EXPECT_NE(msg.find("pkb.txt:11:"), std::string::npos) << msg;
  EXPECT_NE(msg.find("a column is missing"), std::string::npos) << msg;
}

TEST(NcclTestsErrors, NonNumericFieldNamesTheColumn) {
  const std::string text =
      replace_once(real_log(kPkb), "4194304       1048576     float     sum      -1   8116.1    0.52",
                   "4194304       1048576     float     sum      -1   8116.1    O.52");
  const std::string msg = input_error_message([&] { (void)parse_nccl_tests_log(text, "pkb.txt"); });
  EXPECT_NE(msg.find("pkb.txt:12:"), std::string::npos) << msg;
  EXPECT_NE(msg.find("'algbw' (out-of-place)"), std::string::npos) << msg;
  EXPECT_NE(msg.find("'O.52' is not a number"), std::string::npos) << msg;
}

TEST(NcclTestsErrors, ExtraColumnAndBadSize) {
  const std::string header =
      "#       size         count      type   redop    root     time   algbw   busbw  #wrong     time   algbw   busbw  "
      "#wrong\n";
  std::string msg = input_error_message([&] {
    (void)parse_nccl_tests_log(header + "1024 256 float sum -1 10.00 0.10 0.18 0 10.00 0.10 0.18 0 7\n", "x.log");
  });
  EXPECT_NE(msg.find("x.log:2:"), std::string::npos) << msg;
  EXPECT_NE(msg.find("extra column"), std::string::npos) << msg;
  msg = input_error_message([&] {
    (void)parse_nccl_tests_log(header +
                                   "1024 256 float sum -1 10.00 0.10 0.18 0 10.00 0.10 0.18 0\n"
                                   "2048 512 float sum x1 10.00 0.20 0.36 0 10.00 0.20 0.36 0\n",
                               "x.log");
  });
  EXPECT_NE(msg.find("x.log:3:"), std::string::npos) << msg;
  EXPECT_NE(msg.find("'root'"), std::string::npos) << msg;
  msg = input_error_message([&] {
    (void)parse_nccl_tests_log(header + "1024 256 float sum -1 10.00 0.10 0.18 0.5 10.00 0.10 0.18 0\n", "x.log");
  });
  EXPECT_NE(msg.find("not a count of wrong elements"), std::string::npos) << msg;
}

TEST(NcclTestsErrors, NoTableAtAll) {
  const std::string text =
      "srun: error: gpu-17: task 3: Exited with exit code 1\n"
      "Failed: NCCL error common.cu:1004 'unhandled system error'\n";
  const std::string msg = input_error_message([&] { (void)parse_nccl_tests_log(text, "crash.log"); });
  EXPECT_NE(msg.find("crash.log"), std::string::npos) << msg;
  EXPECT_NE(msg.find("no nccl-tests result table"), std::string::npos) << msg;
  EXPECT_NE(input_error_message([&] { (void)parse_nccl_tests_log("", "empty.log"); }).find("empty.log"),
            std::string::npos);
}

TEST(NcclTestsErrors, HeaderWithoutRowsAndUnknownColumns) {
  std::string msg = input_error_message([&] {
    (void)parse_nccl_tests_log(
        "#       size         count      type   redop    root     time   algbw   busbw  #wrong\n"
        "# Out of bounds values : 0 OK\n",
        "h.log");
  });
  EXPECT_NE(msg.find("h.log:1:"), std::string::npos) << msg;
  EXPECT_NE(msg.find("no data rows"), std::string::npos) << msg;
  msg = input_error_message([&] {
    (void)parse_nccl_tests_log("#  size  count  type  time  algbw  busbw  latency\n1024 256 float 1 1 1 1\n", "h.log");
  });
  EXPECT_NE(msg.find("h.log:1:"), std::string::npos) << msg;
  EXPECT_NE(msg.find("unknown column 'latency'"), std::string::npos) << msg;
}

TEST(NcclTestsErrors, DataRowAfterTheFooter) {
  const std::string text = read_file(kFixtures + "all_reduce_8xH100.txt") +
                           "        1024           256     float     sum      -1    14.57    0.07    0.12       0    "
                           "14.64    0.07    0.12       0\n";
  const std::string msg = input_error_message([&] { (void)parse_nccl_tests_log(text, "a.log"); });
  EXPECT_NE(msg.find("after the table's footer"), std::string::npos) << msg;
}

TEST(NcclTestsErrors, JsonErrorsNameTheField) {
  const std::string good = read_file(kFixtures + "alltoall_8xH200_v3.json");
  // Killed before nccl-tests closed the file.
  std::string msg =
      input_error_message([&] { (void)parse_nccl_tests_json(good.substr(0, good.size() / 2), "k.json"); });
  EXPECT_NE(msg.find("k.json:1:"), std::string::npos) << msg;
  EXPECT_NE(msg.find("ends early"), std::string::npos) << msg;
  // A wrong type in one result.
  const auto pos = good.find("\"alg_bw\":", good.find("\"size\":8192"));
  std::string bad = good;
  bad.insert(pos + 9, "\"fast\",\"x\":");
  msg = input_error_message([&] { (void)parse_nccl_tests_json(bad, "b.json"); });
  EXPECT_NE(msg.find("results[1].out_of_place.alg_bw"), std::string::npos) << msg;
  // No results at all.
  msg = input_error_message([&] { (void)parse_nccl_tests_json(R"({"version":3,"results":[]})", "e.json"); });
  EXPECT_NE(msg.find("e.json: results"), std::string::npos) << msg;
  msg = input_error_message([&] { (void)parse_nccl_tests_json(R"({"version":3})", "e.json"); });
  EXPECT_NE(msg.find("missing"), std::string::npos) << msg;
  // Multi-line JSON: line and column of the error.
  msg =
      input_error_message([&] { (void)parse_nccl_tests_json("{\n  \"version\": 3,\n  \"results\": [ }\n", "m.json"); });
  EXPECT_NE(msg.find("m.json:3:"), std::string::npos) << msg;
}

TEST(NcclTestsErrors, FormatsAreToldApart) {
  const std::string json = read_file(kFixtures + "all_reduce_4gpu_v1.json");
  const std::string msg = input_error_message([&] { (void)parse_nccl_tests_log(json, "j.json"); });
  EXPECT_NE(msg.find("JSON"), std::string::npos) << msg;
  const auto logs = parse_nccl_tests_output(json, "j.json");
  ASSERT_EQ(logs.size(), 1u);
  EXPECT_EQ(logs[0].format, "json");
  EXPECT_NE(
      input_error_message([&] { (void)load_nccl_tests_file(kFixtures + "no-such-file.txt"); }).find("cannot open"),
      std::string::npos);
}

TEST(NcclTestsErrors, JsonNanIsLeftEmptyWithAWarning) {
  const std::string text =
      R"({"version":2,"args":["./sendrecv_perf"],"config":{"nthreads":1,"ngpus":2,"devices":[{"rank":0}]},)"
      R"("results":[{"size":1024,"count":256,"type":"float","redop":"sum","root":"    -1",)"
      R"("out_of_place":{"time":"nan","alg_bw":0.1,"bus_bw":0.1,"nwrong":0.0},"in_place":null}]})";
  const auto l = parse_nccl_tests_json(text, "n.json");
  EXPECT_EQ(l.collective, "sendrecv");
  EXPECT_EQ(l.num_ranks, 2);
  EXPECT_FALSE(l.rows[0].out_of_place.time_us.has_value());
  EXPECT_FALSE(l.rows[0].in_place.present());
  EXPECT_TRUE(any_warning_contains(l, "'nan'")) << all_warnings(l);
}

// --------------------------------------------------------------------------------------------
// Small functions

TEST(NcclTestsFunctions, BusbwFactors) {
  EXPECT_DOUBLE_EQ(nccl_tests_busbw_factor("allreduce", 8), 1.75);
  EXPECT_DOUBLE_EQ(nccl_tests_busbw_factor("allreduce", 1), 0.0);
  EXPECT_DOUBLE_EQ(nccl_tests_busbw_factor("allgather", 8), 0.875);
  EXPECT_DOUBLE_EQ(nccl_tests_busbw_factor("reducescatter", 4), 0.75);
  EXPECT_DOUBLE_EQ(nccl_tests_busbw_factor("alltoall", 16), 0.9375);
  EXPECT_DOUBLE_EQ(nccl_tests_busbw_factor("alltoallv", 2), 0.5);
  EXPECT_DOUBLE_EQ(nccl_tests_busbw_factor("broadcast", 1024), 1.0);
  EXPECT_DOUBLE_EQ(nccl_tests_busbw_factor("reduce", 1024), 1.0);
  EXPECT_DOUBLE_EQ(nccl_tests_busbw_factor("sendrecv", 2), 1.0);
  EXPECT_THROW((void)nccl_tests_busbw_factor("allreduse", 8), InputError);
  EXPECT_THROW((void)nccl_tests_busbw_factor("allreduce", 0), InputError);
  const std::string msg = input_error_message([] { (void)nccl_tests_busbw_factor("allreduse", 8); });
  EXPECT_NE(msg.find("did you mean 'allreduce'"), std::string::npos) << msg;
}

TEST(NcclTestsFunctions, CollectiveNames) {
  EXPECT_EQ(nccl_tests_collective_name("all_reduce_perf"), "allreduce");
  EXPECT_EQ(nccl_tests_collective_name("./build/all_reduce_perf_mpi"), "allreduce");
  EXPECT_EQ(nccl_tests_collective_name("/opt/nccl-tests/build/reduce_scatter_perf"), "reducescatter");
  EXPECT_EQ(nccl_tests_collective_name("alltoall_perf"), "alltoall");
  EXPECT_EQ(nccl_tests_collective_name("alltoallv_perf"), "alltoallv");
  EXPECT_EQ(nccl_tests_collective_name("all-gather"), "allgather");
  EXPECT_EQ(nccl_tests_collective_name("sendrecv_perf"), "sendrecv");
  EXPECT_EQ(nccl_tests_collective_name("hypercube_perf"), "hypercube");
  EXPECT_EQ(nccl_tests_collective_name("ib_write_bw"), "");
}

TEST(NcclTestsFunctions, NcclVersionCodes) {
  EXPECT_EQ(nccl_version_string(22602), "2.26.2");
  EXPECT_EQ(nccl_version_string(21903), "2.19.3");
  EXPECT_EQ(nccl_version_string(2708), "2.7.8");
  EXPECT_EQ(nccl_version_string(0), "");
}

TEST(NcclTestsFunctions, BusbwConsistencyUsesPrintedRounding) {
  NcclTestsHalf h;
  h.algbw_gbps = 101.49;
  h.busbw_gbps = 88.80;  // 101.49 x 7/8 = 88.80375
  h.algbw_tolerance_gbps = h.busbw_tolerance_gbps = 0.005;
  EXPECT_TRUE(nccl_tests_busbw_consistent(h, 0.875));
  EXPECT_FALSE(nccl_tests_busbw_consistent(h, 15.0 / 16.0));
  h.busbw_gbps = 88.90;
  EXPECT_FALSE(nccl_tests_busbw_consistent(h, 0.875));
  NcclTestsHalf empty;
  EXPECT_TRUE(nccl_tests_busbw_consistent(empty, 0.875));
}
