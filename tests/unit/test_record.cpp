// Records: JSON round trip, case keys, JSONL writer rules and the tolerant reader, the run
// header's `communicators` (null until the run ends, then written into the file's first line by
// JsonlWriter::update_first_line), and the console/CSV renderers against golden text.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "collbench/core/error.hpp"
#include "collbench/record/jsonl.hpp"
#include "collbench/record/record.hpp"
#include "collbench/report/table.hpp"

using namespace collbench;
using namespace collbench::record;

namespace {

CaseRecord sample_case() {
  CaseRecord r;
  r.run_id = "r1";
  r.collective = "allreduce";
  r.redop = "sum";
  r.dtype = "float32";
  r.backend = "mpi";
  r.algo_requested = "auto";
  r.scope = "global";
  r.timing = "isolated";
  r.buffers = "host";
  r.bytes = 4096;
  r.count = 1024;
  r.bytes_per_rank_send = r.bytes_per_rank_recv = 4096;
  r.num_ranks = 2;
  r.domain_sizes = {2};
  r.num_domains = 1;
  r.iterations = 3;
  r.warmup = 5;
  r.samples_us = {10, 12, 11};
  r.time_us = TimeStats{11, 10.1, 11.9, 11.98, 10, 12, 11, 1, 1.0 / 11, 10, 12};
  r.per_rank = PerRank{{11, 11}, {12, 12}, {9, 10}};
  r.stop_reason = "max_iters";
  r.algbw_gbps = 4096.0 / 11e-6 / 1e9;
  r.busbw_gbps = r.algbw_gbps;
  r.checked = true;
  r.case_key = make_case_key(r);
  return r;
}

std::filesystem::path temp_file(const std::string& name) {
  auto p = std::filesystem::temp_directory_path() / ("collbench-test-" + std::to_string(::getpid()) + "-" + name);
  std::filesystem::remove(p);
  return p;
}

RunHeader sample_header() {
  RunHeader h;
  h.run_id = "r1";
  h.started_at = "2026-12-06T03:00:00Z";
  h.tool_version = "0.1.0";
  h.git_sha = "abc";
  h.launcher = "mpiexec";
  h.config = nlohmann::json::object();
  return h;
}

nlohmann::json sample_case_line(int i) {
  return {{"kind", "case"}, {"schema", "collbench.result/1"}, {"case_key", "k" + std::to_string(i)}};
}

std::string read_text(const std::filesystem::path& p) {
  std::ifstream in(p);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

}  // namespace

TEST(Record, CaseKeyFormat) {
  EXPECT_EQ(make_case_key(sample_case()), "allreduce|sum|float32|mpi|auto|global|outofplace|4096|2|2");
}

TEST(Record, EveryInterfaceKeyIsPresent) {
  const auto j = to_json(sample_case());
  for (const char* k : {"schema",
                        "run_id",
                        "case_key",
                        "collective",
                        "redop",
                        "dtype",
                        "backend",
                        "algo_requested",
                        "algo_used",
                        "scope",
                        "in_place",
                        "timing",
                        "buffers",
                        "graph",
                        "bytes",
                        "count",
                        "bytes_per_rank_send",
                        "bytes_per_rank_recv",
                        "bytes_max_rank",
                        "bytes_logical_total",
                        "num_ranks",
                        "domain_sizes",
                        "num_domains",
                        "iterations",
                        "warmup",
                        "time_us",
                        "samples_us",
                        "per_rank",
                        "stop_reason",
                        "algbw_gbps",
                        "busbw_gbps",
                        "checked",
                        "wrong",
                        "model",
                        "workload",
                        "overlap",
                        "status",
                        "reason",
                        "fault"}) {
    EXPECT_TRUE(j.contains(k)) << k;
  }
  EXPECT_TRUE(j["algo_used"].is_null());
  EXPECT_TRUE(j["model"].is_null());
  EXPECT_EQ(j["schema"], "collbench.result/1");
}

TEST(Record, RoundTrip) {
  auto r = sample_case();
  r.wrong_by_rank[1] = 3;
  r.wrong_total = 3;
  r.model = ModelFields{"gb300-nvl72", 1, 2, 3, 4, 5, 0.5, 8192};
  r.extra["progress"] = "spin";
  const auto back = case_from_json(to_json(r));
  EXPECT_EQ(to_json(back), to_json(r));
  EXPECT_EQ(back.wrong_by_rank.at(1), 3u);
  EXPECT_EQ(back.extra.at("progress"), "spin");
}

TEST(Record, MissingKeyIsNamed) {
  auto j = to_json(sample_case());
  j.erase("bytes");
  try {
    case_from_json(j);
    FAIL();
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("'bytes'"), std::string::npos);
  }
}

TEST(Jsonl, WriterRefusesToOverwriteWithoutForce) {
  const auto path = temp_file("w.jsonl");
  {
    JsonlWriter w(path.string(), OpenMode::create);
    w.write(to_json(sample_case()));
  }
  EXPECT_THROW(JsonlWriter(path.string(), OpenMode::create), InputError);
  {
    JsonlWriter w(path.string(), OpenMode::resume);
    w.write(to_json(sample_case()));
  }
  EXPECT_EQ(read_results(path.string()).cases.size(), 2u);
  {
    JsonlWriter w(path.string(), OpenMode::force);
    w.write(to_json(sample_case()));
  }
  EXPECT_EQ(read_results(path.string()).cases.size(), 1u);
  std::filesystem::remove(path);
}

TEST(Jsonl, TruncatedLastLineIsSkippedWithAWarning) {
  const auto path = temp_file("t.jsonl");
  {
    std::ofstream out(path);
    out << to_json(sample_case()).dump() << "\n" << to_json(sample_case()).dump().substr(0, 40);
  }
  const auto f = read_results(path.string());
  EXPECT_EQ(f.cases.size(), 1u);
  ASSERT_EQ(f.warnings.size(), 1u);
  EXPECT_NE(f.warnings[0].find(":2:"), std::string::npos) << f.warnings[0];
  std::filesystem::remove(path);
}

TEST(Jsonl, BrokenMiddleLineAndWrongSchemaAreErrors) {
  const auto path = temp_file("b.jsonl");
  {
    std::ofstream out(path);
    out << "{not json\n" << to_json(sample_case()).dump() << "\n";
  }
  try {
    read_results(path.string());
    FAIL();
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find(":1:"), std::string::npos) << e.what();
  }
  {
    std::ofstream out(path);
    auto j = to_json(sample_case());
    j["schema"] = "collbench.result/2";
    out << j.dump() << "\n";
  }
  try {
    read_results(path.string());
    FAIL();
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("collbench.result/2"), std::string::npos);
  }
  std::filesystem::remove(path);
}

TEST(Table, GoldenRow) {
  const auto r = sample_case();
  EXPECT_EQ(
      report::table_row(r),
      "         4096        1024    float32   sum         auto global   out      11.00      11.98     0.37     0.37"
      "       0       3      -\n");
  auto w = r;
  w.status = "waived";
  w.time_us.reset();
  w.reason = "algorithm 'nvls' is not available";
  EXPECT_NE(report::table_row(w).find("waived: algorithm 'nvls' is not available"), std::string::npos);
  EXPECT_EQ(report::table_footer({r}), "# Out of bounds values : 0 OK\n# Avg bus bandwidth    : 0.372364\n");
}

TEST(Table, ConcurrentRowShowsSideTimingsAndInterference) {
  auto r = sample_case();
  r.collective = "ep-dp-concurrent";
  r.extra["concurrent"] = {{"ep_bytes", 1048576}, {"ep_ranks", 2},         {"ep_alone_us", 385.9},
                           {"dp_bytes", 4194304}, {"dp_ranks", 2},         {"dp_alone_us", 3996.2},
                           {"both_us", 5835.3},   {"interference", 1.4602}};
  const std::string row = report::table_row(r);
  EXPECT_NE(row.find("\n#   concurrent: EP all-to-all 1048576 B x 2 ranks alone 385.9 us, DP all-reduce 4194304 B x 2 "
                     "ranks alone 3996.2 us, both 5835.3 us -> interference 1.460 (both / slower alone)\n"),
            std::string::npos)
      << row;
}

TEST(Csv, HeaderAndRowHaveTheSameColumns) {
  const auto header = report::csv_header();
  const auto row = report::csv_row(sample_case());
  const auto commas = [](const std::string& s) { return std::count(s.begin(), s.end(), ','); };
  EXPECT_EQ(commas(header), commas(row) - 0);  // domain_sizes "2" has no comma here
  EXPECT_EQ(row.rfind("allreduce,mpi,auto,,global,false,isolated,float32,sum,4096,1024,2,2,3,11,", 0), 0u) << row;
}

TEST(RunHeaderCommunicators, NullUntilKnownAndRoundTrips) {
  RunHeader h = sample_header();
  EXPECT_TRUE(to_json(h).at("communicators").is_null());
  EXPECT_FALSE(header_from_json(to_json(h)).communicators.has_value());
  h.communicators = CommunicatorCounts{18, 3};
  const auto j = to_json(h);
  EXPECT_EQ(j.at("communicators"), (nlohmann::json{{"created", 18}, {"max_live", 3}}));
  EXPECT_EQ(header_from_json(j).communicators, (CommunicatorCounts{18, 3}));
  auto older = j;
  older.erase("communicators");  // a file from before the field
  EXPECT_FALSE(header_from_json(older).communicators.has_value());
}

TEST(RunHeaderCommunicators, UpdateFirstLineRewritesTheHeaderAndKeepsTheCases) {
  const auto path = temp_file("hdr.jsonl");
  {
    JsonlWriter w(path.string(), OpenMode::create);
    w.write(to_json(sample_header()));
    w.write(sample_case_line(0));
    w.write(sample_case_line(1));
    w.update_first_line([](nlohmann::json& h) { h["communicators"] = to_json(CommunicatorCounts{6, 3}); });
    w.write(sample_case_line(2));  // appends to the rewritten file
  }
  std::vector<std::string> warnings;
  const auto lines = read_jsonl_objects(path.string(), warnings);
  ASSERT_EQ(lines.size(), 4u);
  EXPECT_TRUE(warnings.empty());
  EXPECT_EQ(header_from_json(lines[0]).communicators, (CommunicatorCounts{6, 3}));
  EXPECT_EQ(lines[0].at("run_id"), "r1");
  for (int i = 0; i < 3; ++i) EXPECT_EQ(lines[static_cast<std::size_t>(i) + 1].at("case_key"), "k" + std::to_string(i));
  EXPECT_FALSE(std::filesystem::exists(path.string() + ".collbench-tmp"));
  std::filesystem::remove(path);
}

TEST(RunHeaderCommunicators, UpdateFirstLineLeavesALinkAlone) {
  const auto target = temp_file("target.jsonl");
  const auto link = temp_file("link.jsonl");
  {
    std::ofstream out(target);
    out << to_json(sample_header()).dump() << "\n";
  }
  std::filesystem::create_symlink(target, link);
  const std::string before = read_text(target);
  {
    JsonlWriter w(link.string(), OpenMode::resume);
    w.update_first_line([](nlohmann::json& h) { h["communicators"] = to_json(CommunicatorCounts{1, 1}); });
  }
  EXPECT_TRUE(std::filesystem::is_symlink(link));  // not replaced by a regular file
  EXPECT_EQ(read_text(target), before);
  std::filesystem::remove(link);
  std::filesystem::remove(target);
}
