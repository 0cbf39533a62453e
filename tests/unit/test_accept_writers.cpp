// Acceptance writers against golden output: JUnit XML (structure and counts), the Prometheus
// text format for node-exporter's textfile collector (HELP/TYPE once per family, label
// escaping), Markdown, the console table and the JSON keys. The report is built by hand: writers
// only render.

#include <gtest/gtest.h>

#include <string>

#include "collbench/accept/judge.hpp"
#include "collbench/accept/metric.hpp"
#include "collbench/accept/writers.hpp"

namespace {

using namespace collbench::accept;

AcceptReport sample_report() {
  AcceptReport r;
  r.profile = "demo";
  r.source = "profiles/acceptance/demo.yaml";
  r.system = "cpu-local";
  r.num_ranks = 4;
  r.started_at = "2026-01-02T03:04:05Z";
  r.finished_at = "2026-01-02T03:04:25Z";
  r.finished_unix = 1767323065.0;
  r.duration_s = 12.5;

  Row pass;
  pass.check = "allreduce-bw";
  pass.collective = "allreduce";
  pass.bytes = 1u << 20;
  pass.domain = -1;
  pass.first_rank = 0;
  pass.num_ranks = 4;
  pass.domain_label = "all (ranks 0-3)";
  pass.policy_text = "median of 3";
  pass.busbw = 3.5;
  pass.algbw = 2.0;
  pass.time = 524.288;
  pass.bound_busbw_gbps = 7.0;
  pass.expected_busbw_gbps = 5.0;
  pass.primary_metric = "busbw_gbps";
  pass.limits.push_back({"fraction_of_expected", 0.5, 2.5, "busbw_gbps", 3.5, true, true, ""});
  pass.limits.push_back({"min_busbw_gbps", 1.0, 1.0, "busbw_gbps", 3.5, true, true, ""});
  pass.verdict = Verdict::pass;
  pass.reason = "busbw 3.5 GB/s >= 2.5 GB/s (0.5 x expected 5 GB/s) (median of 3)";
  pass.timed_s = 0.75;

  Row fail;
  fail.check = "per-rank";
  fail.collective = "allreduce";
  fail.bytes = 4u << 20;
  fail.domain = 1;
  fail.first_rank = 2;
  fail.num_ranks = 2;
  fail.domain_label = "domain 1 (ranks 2-3)";
  fail.policy_text = "median of 3";
  fail.time = 21000.0;
  fail.algbw = 0.2;
  fail.busbw = 0.2;
  fail.primary_metric = "algbw_gbps";
  fail.limits.push_back({"min_algbw_gbps", 0.5, 0.5, "algbw_gbps", 0.2, true, false, ""});
  fail.verdict = Verdict::fail;
  fail.reason = "algbw 0.2 GB/s < 0.5 GB/s (floor); rank 2 \"slow\" <on its own> & late";

  Row waived;
  waived.check = "nvls";
  waived.collective = "allreduce";
  waived.bytes = 8;
  waived.domain = -1;
  waived.num_ranks = 4;
  waived.domain_label = "all (ranks 0-3)";
  waived.primary_metric = "busbw_gbps";
  waived.limits.push_back(
      {"fraction_of_bound", 0.8, std::nullopt, "busbw_gbps", std::nullopt, false, false, "no bound"});
  waived.verdict = Verdict::waived;
  waived.reason = "algorithm 'nvls' is not available on the mpi backend";

  r.rows = {pass, fail, waived};
  return r;
}

TEST(AcceptMetric, DirectionAndUnits) {
  using namespace collbench::accept;
  EXPECT_TRUE(lower_is_better("time_us"));
  EXPECT_TRUE(lower_is_better("interference"));
  EXPECT_FALSE(lower_is_better("busbw_gbps"));
  EXPECT_FALSE(lower_is_better("algbw_gbps"));
  EXPECT_EQ(format_metric("busbw_gbps", 812.345), "812.3 GB/s");
  EXPECT_EQ(format_metric("time_us", 41.25), "41.25 us");
  EXPECT_EQ(format_metric("time_us", 3125.0), "3.125 ms");
  EXPECT_EQ(format_metric("interference", 1.2345), "1.23");
  EXPECT_EQ(metric_word("algbw_gbps"), "algbw");
  EXPECT_EQ(metric_word("interference"), "interference");
  EXPECT_EQ(metric_word("time_us"), "time");
}

TEST(AcceptWriters, JunitGolden) {
  const std::string expected = R"xml(<?xml version="1.0" encoding="UTF-8"?>
<testsuites name="collbench accept demo" tests="3" failures="1" errors="0" time="12.500">
  <testsuite name="collbench.accept.demo" tests="3" failures="1" errors="0" skipped="1" time="12.500" timestamp="2026-01-02T03:04:05">
    <properties>
      <property name="profile" value="profiles/acceptance/demo.yaml"/>
      <property name="system" value="cpu-local"/>
      <property name="num_ranks" value="4"/>
    </properties>
    <testcase classname="collbench.accept.demo.allreduce-bw" name="1MiB all (ranks 0-3)" time="0.750">
      <system-out>PASS: measured busbw 3.5 GB/s; threshold &gt;= 0.5 x expected = 2.5 GB/s; &gt;= 1 GB/s busbw; busbw 3.5 GB/s &gt;= 2.5 GB/s (0.5 x expected 5 GB/s) (median of 3)</system-out>
    </testcase>
    <testcase classname="collbench.accept.demo.per-rank" name="4MiB domain 1 (ranks 2-3)" time="0.000">
      <failure type="FAIL" message="algbw 0.2 GB/s &lt; 0.5 GB/s (floor); rank 2 &quot;slow&quot; &lt;on its own&gt; &amp; late">measured algbw 0.2 GB/s; threshold &gt;= 0.5 GB/s algbw; algbw 0.2 GB/s &lt; 0.5 GB/s (floor); rank 2 &quot;slow&quot; &lt;on its own&gt; &amp; late</failure>
      <system-out>FAIL: measured algbw 0.2 GB/s; threshold &gt;= 0.5 GB/s algbw; algbw 0.2 GB/s &lt; 0.5 GB/s (floor); rank 2 &quot;slow&quot; &lt;on its own&gt; &amp; late</system-out>
    </testcase>
    <testcase classname="collbench.accept.demo.nvls" name="8B all (ranks 0-3)" time="0.000">
      <skipped message="algorithm &#39;nvls&#39; is not available on the mpi backend"/>
      <system-out>WAIVED: measured -; threshold &gt;= 0.8 x bound (no model); algorithm &#39;nvls&#39; is not available on the mpi backend</system-out>
    </testcase>
  </testsuite>
</testsuites>
)xml";
  EXPECT_EQ(render_accept_junit(sample_report()), expected);
}

PrometheusSource sample_source() {
  return {"gpu-1", "r2", "20260102T030405Z-0000abcd", "1.2.3"};
}

// Base units by hand: 3.5 GB/s = 3500000000 B/s, 524.288 us = 0.000524288 s, 21000 us = 0.021 s;
// thresholds of GB/s metrics in B/s (2.5 GB/s = 2500000000); no interference family (no value).
TEST(AcceptWriters, PrometheusGolden) {
  const std::string expected =
      R"prom(# HELP collbench_accept_check_status Verdict of one acceptance check (check x size x domain): 1 for the verdict it got, 0 for the others.
# TYPE collbench_accept_check_status gauge
collbench_accept_check_status{host="gpu-1",rack="r2",run="20260102T030405Z-0000abcd",profile="demo",check="allreduce-bw",size="1MiB",domain="all",ranks="0-3",verdict="PASS"} 1
collbench_accept_check_status{host="gpu-1",rack="r2",run="20260102T030405Z-0000abcd",profile="demo",check="allreduce-bw",size="1MiB",domain="all",ranks="0-3",verdict="FAIL"} 0
collbench_accept_check_status{host="gpu-1",rack="r2",run="20260102T030405Z-0000abcd",profile="demo",check="allreduce-bw",size="1MiB",domain="all",ranks="0-3",verdict="WAIVED"} 0
collbench_accept_check_status{host="gpu-1",rack="r2",run="20260102T030405Z-0000abcd",profile="demo",check="per-rank",size="4MiB",domain="1",ranks="2-3",verdict="PASS"} 0
collbench_accept_check_status{host="gpu-1",rack="r2",run="20260102T030405Z-0000abcd",profile="demo",check="per-rank",size="4MiB",domain="1",ranks="2-3",verdict="FAIL"} 1
collbench_accept_check_status{host="gpu-1",rack="r2",run="20260102T030405Z-0000abcd",profile="demo",check="per-rank",size="4MiB",domain="1",ranks="2-3",verdict="WAIVED"} 0
collbench_accept_check_status{host="gpu-1",rack="r2",run="20260102T030405Z-0000abcd",profile="demo",check="nvls",size="8B",domain="all",ranks="0-3",verdict="PASS"} 0
collbench_accept_check_status{host="gpu-1",rack="r2",run="20260102T030405Z-0000abcd",profile="demo",check="nvls",size="8B",domain="all",ranks="0-3",verdict="FAIL"} 0
collbench_accept_check_status{host="gpu-1",rack="r2",run="20260102T030405Z-0000abcd",profile="demo",check="nvls",size="8B",domain="all",ranks="0-3",verdict="WAIVED"} 1
# HELP collbench_accept_measured_bus_bandwidth_bytes_per_second Measured bus bandwidth after the repetition policy, bytes per second.
# TYPE collbench_accept_measured_bus_bandwidth_bytes_per_second gauge
collbench_accept_measured_bus_bandwidth_bytes_per_second{host="gpu-1",rack="r2",run="20260102T030405Z-0000abcd",profile="demo",check="allreduce-bw",size="1MiB",domain="all",ranks="0-3"} 3500000000
collbench_accept_measured_bus_bandwidth_bytes_per_second{host="gpu-1",rack="r2",run="20260102T030405Z-0000abcd",profile="demo",check="per-rank",size="4MiB",domain="1",ranks="2-3"} 200000000
# HELP collbench_accept_measured_algorithm_bandwidth_bytes_per_second Measured algorithm bandwidth after the repetition policy, bytes per second.
# TYPE collbench_accept_measured_algorithm_bandwidth_bytes_per_second gauge
collbench_accept_measured_algorithm_bandwidth_bytes_per_second{host="gpu-1",rack="r2",run="20260102T030405Z-0000abcd",profile="demo",check="allreduce-bw",size="1MiB",domain="all",ranks="0-3"} 2000000000
collbench_accept_measured_algorithm_bandwidth_bytes_per_second{host="gpu-1",rack="r2",run="20260102T030405Z-0000abcd",profile="demo",check="per-rank",size="4MiB",domain="1",ranks="2-3"} 200000000
# HELP collbench_accept_measured_time_seconds Measured p50 time after the repetition policy, seconds.
# TYPE collbench_accept_measured_time_seconds gauge
collbench_accept_measured_time_seconds{host="gpu-1",rack="r2",run="20260102T030405Z-0000abcd",profile="demo",check="allreduce-bw",size="1MiB",domain="all",ranks="0-3"} 0.000524288
collbench_accept_measured_time_seconds{host="gpu-1",rack="r2",run="20260102T030405Z-0000abcd",profile="demo",check="per-rank",size="4MiB",domain="1",ranks="2-3"} 0.021
# HELP collbench_accept_bound_bus_bandwidth_bytes_per_second The model's physical bound on bus bandwidth for the check, bytes per second.
# TYPE collbench_accept_bound_bus_bandwidth_bytes_per_second gauge
collbench_accept_bound_bus_bandwidth_bytes_per_second{host="gpu-1",rack="r2",run="20260102T030405Z-0000abcd",profile="demo",check="allreduce-bw",size="1MiB",domain="all",ranks="0-3"} 7000000000
# HELP collbench_accept_expected_bus_bandwidth_bytes_per_second The model's expected bus bandwidth for the check, bytes per second.
# TYPE collbench_accept_expected_bus_bandwidth_bytes_per_second gauge
collbench_accept_expected_bus_bandwidth_bytes_per_second{host="gpu-1",rack="r2",run="20260102T030405Z-0000abcd",profile="demo",check="allreduce-bw",size="1MiB",domain="all",ranks="0-3"} 5000000000
# HELP collbench_accept_threshold_bytes_per_second A check's limit in bytes_per_second (metric label: what it limits; kind: the threshold key).
# TYPE collbench_accept_threshold_bytes_per_second gauge
collbench_accept_threshold_bytes_per_second{host="gpu-1",rack="r2",run="20260102T030405Z-0000abcd",profile="demo",check="allreduce-bw",size="1MiB",domain="all",ranks="0-3",kind="fraction_of_expected",metric="busbw"} 2500000000
collbench_accept_threshold_bytes_per_second{host="gpu-1",rack="r2",run="20260102T030405Z-0000abcd",profile="demo",check="allreduce-bw",size="1MiB",domain="all",ranks="0-3",kind="min_busbw_gbps",metric="busbw"} 1000000000
collbench_accept_threshold_bytes_per_second{host="gpu-1",rack="r2",run="20260102T030405Z-0000abcd",profile="demo",check="per-rank",size="4MiB",domain="1",ranks="2-3",kind="min_algbw_gbps",metric="algbw"} 500000000
# HELP collbench_accept_run_info The last acceptance run: 1, with its system profile and collbench version.
# TYPE collbench_accept_run_info gauge
collbench_accept_run_info{host="gpu-1",rack="r2",run="20260102T030405Z-0000abcd",profile="demo",system="cpu-local",version="1.2.3"} 1
# HELP collbench_accept_checks Acceptance checks (check x size x domain) per verdict in the last run.
# TYPE collbench_accept_checks gauge
collbench_accept_checks{host="gpu-1",rack="r2",run="20260102T030405Z-0000abcd",profile="demo",verdict="PASS"} 1
collbench_accept_checks{host="gpu-1",rack="r2",run="20260102T030405Z-0000abcd",profile="demo",verdict="FAIL"} 1
collbench_accept_checks{host="gpu-1",rack="r2",run="20260102T030405Z-0000abcd",profile="demo",verdict="WAIVED"} 1
# HELP collbench_accept_success 1 when every acceptance check passed (exit code 0), else 0.
# TYPE collbench_accept_success gauge
collbench_accept_success{host="gpu-1",rack="r2",run="20260102T030405Z-0000abcd",profile="demo"} 0
# HELP collbench_accept_ranks Ranks in the last acceptance run.
# TYPE collbench_accept_ranks gauge
collbench_accept_ranks{host="gpu-1",rack="r2",run="20260102T030405Z-0000abcd",profile="demo"} 4
# HELP collbench_accept_last_run_timestamp_seconds Unix time at which the last acceptance run finished.
# TYPE collbench_accept_last_run_timestamp_seconds gauge
collbench_accept_last_run_timestamp_seconds{host="gpu-1",rack="r2",run="20260102T030405Z-0000abcd",profile="demo"} 1767323065
)prom";
  EXPECT_EQ(render_accept_prometheus(sample_report(), sample_source()), expected);
}

TEST(AcceptWriters, PrometheusEscapesLabelValuesAndNamesAnUnsetRack) {
  AcceptReport r = sample_report();
  r.profile = "we\"ird\\name\nx";
  PrometheusSource src = sample_source();
  src.rack.clear();
  const std::string out = render_accept_prometheus(r, src);
  EXPECT_NE(out.find(R"(rack="none",run="20260102T030405Z-0000abcd",profile="we\"ird\\name\nx")"), std::string::npos)
      << out;
  // Every family has one HELP and one TYPE line.
  std::size_t help = 0, type = 0;
  std::size_t pos = 0;
  while ((pos = out.find("# HELP ", pos)) != std::string::npos) ++help, ++pos;
  pos = 0;
  while ((pos = out.find("# TYPE ", pos)) != std::string::npos) ++type, ++pos;
  EXPECT_EQ(help, 12u);
  EXPECT_EQ(type, 12u);
}

TEST(AcceptWriters, PrometheusThresholdsOneFamilyPerUnit) {
  AcceptReport r = sample_report();
  r.rows[1].limits.push_back({"max_time_us", 30000.0, 30000.0, "time_us", 21000.0, true, true, ""});
  r.rows[1].limits.push_back({"max_interference", 1.25, 1.25, "interference", std::nullopt, false, false, ""});
  r.rows[1].interference = 1.5;
  const std::string out = render_accept_prometheus(r, sample_source());
  const std::string labels = R"(check="per-rank",size="4MiB",domain="1",ranks="2-3")";
  EXPECT_NE(out.find("collbench_accept_threshold_seconds{host=\"gpu-1\",rack=\"r2\",run=\"20260102T030405Z-0000abcd\","
                     "profile=\"demo\"," +
                     labels + ",kind=\"max_time_us\",metric=\"time\"} 0.03\n"),
            std::string::npos)
      << out;
  EXPECT_NE(out.find(labels + ",kind=\"max_interference\",metric=\"interference\"} 1.25\n"), std::string::npos);
  EXPECT_NE(out.find("# TYPE collbench_accept_threshold_ratio gauge\n"), std::string::npos);
  EXPECT_NE(out.find("collbench_accept_measured_interference_ratio{"), std::string::npos);
  EXPECT_EQ(out.find("collbench_accept_threshold{"), std::string::npos);  // no family mixing units
}

TEST(AcceptWriters, MarkdownTableAndJson) {
  const AcceptReport r = sample_report();
  const std::string md = render_accept_markdown(r);
  EXPECT_EQ(md.rfind("# Acceptance `demo`: FAIL: 3 check(s): 1 PASS, 1 FAIL, 1 WAIVED\n", 0), 0u) << md;
  EXPECT_NE(md.find("| check | size | domain / ranks | measured | threshold | verdict | reason |\n"),
            std::string::npos);
  EXPECT_NE(md.find("| per-rank | 4MiB | domain 1 (ranks 2-3) | algbw 0.2 GB/s | >= 0.5 GB/s algbw | **FAIL** | "),
            std::string::npos)
      << md;

  const auto j = accept_to_json(r);
  EXPECT_EQ(j["schema"], "collbench.accept/1");
  EXPECT_EQ(j["verdict"], "FAIL");
  EXPECT_EQ(j["exit_code"], 1);
  EXPECT_EQ(j["counts"]["total"], 3);
  EXPECT_EQ(j["counts"]["waived"], 1);
  ASSERT_EQ(j["rows"].size(), 3u);
  EXPECT_EQ(j["rows"][1]["domain"], 1);
  EXPECT_TRUE(j["rows"][0]["domain"].is_null());
  EXPECT_EQ(j["rows"][0]["limits"][0]["kind"], "fraction_of_expected");
  EXPECT_DOUBLE_EQ(j["rows"][0]["limits"][0]["limit"].get<double>(), 2.5);
  EXPECT_TRUE(j["rows"][2]["limits"][0]["limit"].is_null());
  EXPECT_EQ(j["rows"][2]["limits"][0]["note"], "no bound");

  const std::string table = render_accept_table(r);
  EXPECT_NE(table.find("# FAIL: 3 check(s): 1 PASS, 1 FAIL, 1 WAIVED -> exit 1"), std::string::npos) << table;
  EXPECT_EQ(measured_text(r.rows[0]), "busbw 3.5 GB/s");
  EXPECT_EQ(measured_text(r.rows[2]), "-");
  EXPECT_EQ(threshold_text(r.rows[0]), ">= 0.5 x expected = 2.5 GB/s; >= 1 GB/s busbw");
}

}  // namespace
