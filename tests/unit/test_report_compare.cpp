// Report inputs and comparisons: line-accurate errors for bad files, and ratios / % change of
// runs, backends and algorithms matched on everything but the varied dimension. Pure C++.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "collbench/core/error.hpp"
#include "collbench/record/record.hpp"
#include "collbench/report/compare_render.hpp"
#include "collbench/report/markdown.hpp"

using namespace collbench;
using namespace collbench::report;
using record::CaseRecord;

namespace {

CaseRecord make_case(std::uint64_t bytes, double p50_us, const std::string& backend = "mpi",
                     const std::string& algo = "auto", int n = 4) {
  CaseRecord r;
  r.run_id = "run";
  r.collective = "allreduce";
  r.redop = "sum";
  r.dtype = "float32";
  r.backend = backend;
  r.algo_requested = algo;
  r.scope = "global";
  r.timing = "isolated";
  r.buffers = "host";
  r.bytes = bytes;
  r.count = bytes / 4;
  r.num_ranks = n;
  r.domain_sizes = {n};
  r.num_domains = 1;
  r.iterations = 3;
  r.samples_us = {p50_us, p50_us, p50_us};
  record::TimeStats t;
  t.p50 = t.p5 = t.p95 = t.p99 = t.min = t.max = t.mean = t.ci95_low = t.ci95_high = p50_us;
  r.time_us = t;
  r.stop_reason = "max_iters";
  r.algbw_gbps = static_cast<double>(bytes) / (p50_us * 1e-6) / 1e9;
  r.busbw_gbps = r.algbw_gbps * 2.0 * (n - 1) / n;
  r.checked = true;
  r.case_key = record::make_case_key(r);
  return r;
}

std::string header_line() {
  record::RunHeader h;
  h.run_id = "run";
  h.started_at = "2026-01-01T00:00:00Z";
  h.tool_version = "0.1.0";
  h.git_sha = "abc";
  h.backends_built = {"mpi"};
  h.config = nlohmann::json::object();
  h.launcher = "mpiexec";
  h.hosts.push_back({0, "node-a", 1, {}, {}, {}, {}});
  return record::to_json(h).dump() + "\n";
}

record::InputFile file_of(const std::string& path, const std::vector<CaseRecord>& cases) {
  std::string text = header_line();
  for (const auto& c : cases) text += record::to_json(c).dump() + "\n";
  return record::parse_input(text, path);
}

}  // namespace

TEST(ReportInput, ReadsHeaderAndCasesWithTheirLines) {
  std::string text = header_line() + "\n" + record::to_json(make_case(1024, 10)).dump() + "\n";
  const auto f = record::parse_input(text, "a.jsonl");
  ASSERT_TRUE(f.header);
  EXPECT_EQ(f.header_line, 1);
  ASSERT_EQ(f.cases.size(), 1u);
  EXPECT_EQ(f.case_lines[0], 3);  // the blank line counts
}

TEST(ReportInput, BadLinesAreNamedWithFileAndLine) {
  const std::string good = record::to_json(make_case(1024, 10)).dump();
  const auto message = [](const std::string& text) {
    try {
      record::parse_input(text, "bad.jsonl");
    } catch (const InputError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_NE(message(header_line() + good + "\n{not json\n" + good + "\n").find("bad.jsonl:3:"), std::string::npos);
  auto other = record::to_json(make_case(1024, 10));
  other["schema"] = "collbench.result/2";
  EXPECT_NE(message(header_line() + other.dump() + "\n").find("bad.jsonl:2: record has schema 'collbench.result/2'"),
            std::string::npos);
  auto missing = record::to_json(make_case(1024, 10));
  missing.erase("busbw_gbps");
  const std::string m = message(header_line() + good + "\n" + missing.dump() + "\n");
  EXPECT_NE(m.find("bad.jsonl:3:"), std::string::npos) << m;
  EXPECT_NE(m.find("busbw_gbps"), std::string::npos) << m;
  // A truncated last line (no newline) is a warning, not an error.
  const auto f = record::parse_input(header_line() + good + "\n" + good.substr(0, 40), "cut.jsonl");
  EXPECT_EQ(f.cases.size(), 1u);
  ASSERT_EQ(f.warnings.size(), 1u);
  EXPECT_NE(f.warnings[0].find("cut.jsonl:3"), std::string::npos);
  EXPECT_THROW(record::load_input("/nonexistent/results.jsonl"), InputError);
}

TEST(ReportCompare, RunsMatchPerSizeWithRatioAndPercentChange) {
  std::vector<record::InputFile> files{
      file_of("a.jsonl", {make_case(1024, 10), make_case(8192, 20), make_case(65536, 40)}),
      file_of("b.jsonl", {make_case(1024, 8), make_case(8192, 25), make_case(1 << 20, 90)})};
  const auto c = compare::compare_files(files, compare::CompareBy::run);
  EXPECT_EQ(c.baseline, "a.jsonl");
  ASSERT_EQ(c.others, std::vector<std::string>{"b.jsonl"});
  ASSERT_EQ(c.rows.size(), 2u);
  EXPECT_EQ(c.rows[0].bytes, 1024u);
  EXPECT_NEAR(c.rows[0].time_ratio, 0.8, 1e-12);
  EXPECT_NEAR(c.rows[0].time_change_pct, -20.0, 1e-9);
  EXPECT_NEAR(*c.rows[0].busbw_ratio, 1.25, 1e-12);
  EXPECT_NEAR(*c.rows[0].busbw_change_pct, 25.0, 1e-9);
  EXPECT_NEAR(c.rows[1].time_ratio, 1.25, 1e-12);
  EXPECT_NEAR(*c.rows[1].busbw_change_pct, -20.0, 1e-9);
  EXPECT_EQ(c.unmatched, 2u);  // 64 KiB only in a, 1 MiB only in b

  // Renderers print the computed numbers.
  const std::string table = render_comparison_table(c);
  EXPECT_NE(table.find("0.800"), std::string::npos) << table;
  EXPECT_NE(table.find("+25.0"), std::string::npos) << table;
  const std::string csv = render_comparison_csv(c);
  EXPECT_NE(csv.find("run,a.jsonl,b.jsonl,allreduce,sum,float32,mpi,auto,global,false,isolated,1024,4,4,10,8,0.8,-20,"),
            std::string::npos)
      << csv;
  const std::string md = render_comparison_markdown(c);
  EXPECT_NE(md.find("### b.jsonl vs a.jsonl"), std::string::npos);
  EXPECT_NE(md.find("| 0.800 | -20.0 |"), std::string::npos) << md;

  // An explicit baseline flips the ratios.
  const auto flipped = compare::compare_files(files, compare::CompareBy::run, std::string("b.jsonl"));
  EXPECT_NEAR(flipped.rows[0].time_ratio, 1.25, 1e-12);
  EXPECT_THROW(compare::compare_files(files, compare::CompareBy::run, std::string("c.jsonl")), InputError);
}

TEST(ReportCompare, BackendsAndAlgorithmsMatchOnEverythingElse) {
  std::vector<record::InputFile> files{
      file_of("all.jsonl", {make_case(1024, 10, "mpi", "ring"), make_case(1024, 5, "nccl", "ring"),
                            make_case(1024, 4, "nccl", "tree"), make_case(2048, 6, "nccl", "tree")})};
  const auto by_backend = compare::compare_files(files, compare::CompareBy::backend);
  EXPECT_EQ(by_backend.baseline, "mpi");
  ASSERT_EQ(by_backend.rows.size(), 1u);  // only ring exists for both backends
  EXPECT_EQ(by_backend.rows[0].other, "nccl");
  EXPECT_NEAR(by_backend.rows[0].time_ratio, 0.5, 1e-12);
  EXPECT_NEAR(*by_backend.rows[0].busbw_ratio, 2.0, 1e-12);

  const auto by_algo = compare::compare_files(files, compare::CompareBy::algo, std::string("ring"));
  ASSERT_EQ(by_algo.rows.size(), 1u);  // nccl ring vs nccl tree at 1 KiB
  EXPECT_EQ(by_algo.rows[0].other, "tree");
  EXPECT_EQ(by_algo.rows[0].backend, "nccl");
  EXPECT_NEAR(by_algo.rows[0].time_ratio, 0.8, 1e-12);
}

TEST(ReportCompare, NeedsTwoValuesAndSkipsUnmeasuredCases) {
  std::vector<record::InputFile> one{file_of("a.jsonl", {make_case(1024, 10)})};
  EXPECT_THROW(compare::compare_files(one, compare::CompareBy::run), InputError);
  EXPECT_THROW(compare::compare_files(one, compare::CompareBy::backend), InputError);
  auto waived = make_case(1024, 10);
  waived.status = "waived";
  waived.time_us.reset();
  std::vector<record::InputFile> files{file_of("a.jsonl", {waived}), file_of("b.jsonl", {make_case(1024, 8)})};
  const auto c = compare::compare_files(files, compare::CompareBy::run);
  EXPECT_TRUE(c.rows.empty());
  ASSERT_FALSE(c.notes.empty());
  EXPECT_NE(c.notes[0].find("not compared"), std::string::npos);
  // Different rank counts never match; the note points at weak scaling.
  std::vector<record::InputFile> scales{file_of("n2.jsonl", {make_case(1024, 10, "mpi", "auto", 2)}),
                                        file_of("n4.jsonl", {make_case(1024, 10, "mpi", "auto", 4)})};
  const auto s = compare::compare_files(scales, compare::CompareBy::run);
  EXPECT_TRUE(s.rows.empty());
  bool pointed = false;
  for (const auto& n : s.notes) pointed |= n.find("weak-scaling") != std::string::npos;
  EXPECT_TRUE(pointed);
  EXPECT_THROW(compare::parse_compare_by("size"), InputError);
}

TEST(ReportMarkdown, CaseTablesRenderRecordFields) {
  auto r = make_case(1024, 12.5);
  const auto md = markdown_case_table({r});
  EXPECT_NE(md.find("| allreduce | 1024 | 256 | float32 | sum | auto | global | out | 4 | 4 | 12.50 |"),
            std::string::npos)
      << md;
  std::vector<record::InputFile> files{file_of("a.jsonl", {r})};
  const auto all = render_cases_markdown(files);
  EXPECT_NE(all.find("## a.jsonl"), std::string::npos);
  EXPECT_NE(all.find("launcher mpiexec"), std::string::npos);
}
