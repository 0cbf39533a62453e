// `report` in one pass (issue 37 item 8): the streamed tables (report/tables_stream.hpp) against
// hand-computed totals and against the whole-file renderers they replace, the batched reader
// (record/input_file.hpp, record/jsonl_stream.hpp) against load_input, and the import writer's
// unsynced lines (record/jsonl.hpp) against synced ones.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "collbench/core/error.hpp"
#include "collbench/record/input_file.hpp"
#include "collbench/record/jsonl.hpp"
#include "collbench/record/jsonl_stream.hpp"
#include "collbench/report/markdown.hpp"
#include "collbench/report/table.hpp"
#include "collbench/report/tables_stream.hpp"
#include "record_fixtures.hpp"

using namespace collbench;
using record::CaseRecord;

namespace {

CaseRecord row(const std::string& collective, std::uint64_t bytes, double busbw, std::optional<int> root = {}) {
  CaseRecord r = fixtures::timed_record(collective, bytes, 2, 4.0, root);
  if (collective == "allreduce") r.redop = "sum";
  r.busbw_gbps = busbw;
  r.iterations = 10;
  r.status = "ok";
  return r;
}

CaseRecord waived(std::uint64_t bytes) {
  CaseRecord r = fixtures::float32_case("run", "allreduce", "auto", bytes, 2, {2});
  r.redop = "sum";
  r.status = "waived";
  r.reason = "too large";
  r.case_key = record::make_case_key(r);
  return r;
}

// Mixed blocks (a new header at each collective change), a waived case, wrong elements, a model.
std::vector<CaseRecord> mixed_records() {
  std::vector<CaseRecord> v{row("allreduce", 1024, 1.0), row("allreduce", 2048, 2.0), waived(4096),
                            row("broadcast", 1024, 4.5, 0), row("allreduce", 8192, 0.5)};
  v[1].wrong_total = 3;
  fixtures::set_model(v[4], "cpu-local", 2.0, 3.0);
  return v;
}

std::string streamed(report::TableFormat format, const std::vector<record::InputFile>& files) {
  report::StreamedTables tables(format);
  for (const auto& f : files) {
    tables.begin_file(f.path);
    for (auto r : f.cases) tables.add(std::move(r));
    tables.end_file(f);
  }
  return tables.text().str();
}

record::InputFile file_of(const std::string& path, std::vector<CaseRecord> cases) {
  record::InputFile f;
  f.path = path;
  f.cases = std::move(cases);
  f.warnings = {path + ":9: skipped a truncated last line (the run was probably interrupted)"};
  return f;
}

std::filesystem::path temp_path(const std::string& name) {
  return std::filesystem::temp_directory_path() / ("collbench-stream-" + std::to_string(::getpid()) + "-" + name);
}

std::string slurp(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

}  // namespace

TEST(TablesStream, TotalsAreTheSumsOfTheRecords) {
  report::TableTotals t;
  for (const auto& r : mixed_records()) t.add(r);
  EXPECT_EQ(t.wrong, 3U);
  EXPECT_EQ(t.measured, 4U);  // the waived case has no times
  EXPECT_EQ(t.waived, 1U);
  EXPECT_DOUBLE_EQ(t.busbw_sum, 8.0);  // 1 + 2 + 4.5 + 0.5
  EXPECT_EQ(report::table_footer(t),
            "# Out of bounds values : 3 FAILED\n# Avg bus bandwidth    : 2\n# Waived cases         : 1\n");
}

TEST(TablesStream, ConsoleTableIsTheWholeFileTable) {
  const std::vector<record::InputFile> files{file_of("a.jsonl", mixed_records()), file_of("b.jsonl", {})};
  const std::string text = streamed(report::TableFormat::table, files);
  EXPECT_EQ(text, "# file: a.jsonl\n" + report::render_table(files[0].cases) + "# file: b.jsonl\n# (no cases)\n");
  EXPECT_NE(text.find("# Avg bus bandwidth    : 2\n# Waived cases         : 1\n# file: b.jsonl"), std::string::npos);
  EXPECT_EQ(text.find(" root "), std::string::npos);  // every root 0: no root column
}

TEST(TablesStream, ARootMetLateAddsTheColumnToEarlierRows) {
  auto cases = mixed_records();
  cases.push_back(row("broadcast", 2048, 1.0, 1));  // the last record needs the column
  const std::vector<record::InputFile> files{file_of("a.jsonl", cases)};
  ASSERT_TRUE(report::needs_root_column(cases));
  const std::string text = streamed(report::TableFormat::table, files);
  EXPECT_EQ(text, "# file: a.jsonl\n" + report::render_table(cases));
  // The first row, read before the root was met, has the column's "-" after redop.
  EXPECT_NE(text.find("         1024         256    float32   sum    -         auto"), std::string::npos) << text;
  EXPECT_EQ(streamed(report::TableFormat::markdown, files),
            "# collbench report\n\n" + report::render_cases_markdown(files));
}

TEST(TablesStream, MarkdownAndCsvAreTheWholeFileOutputs) {
  auto overlap = row("allreduce", 65536, 3.0);
  overlap.overlap = {{"t_comm_us", 10.0}, {"t_compute_us", 20.0}, {"t_both_us", 25.0}};
  auto cases = mixed_records();
  cases.push_back(overlap);
  const std::vector<record::InputFile> files{
      file_of("a.jsonl", cases), file_of("x,\"y\".jsonl", {row("alltoall", 8, 1)}), file_of("empty.jsonl", {})};
  const std::string md = streamed(report::TableFormat::markdown, files);
  EXPECT_EQ(md, "# collbench report\n\n" + report::render_cases_markdown(files));
  EXPECT_NE(md.find("\nOverlap (collective beside a compute load"), std::string::npos);
  EXPECT_NE(md.find("> warning: a.jsonl:9: skipped a truncated last line"), std::string::npos);
  std::string csv = "file," + report::csv_header();
  for (const auto& r : cases) csv += "a.jsonl," + report::csv_row(r);
  csv += "\"x,\"y\".jsonl\"," + report::csv_row(files[1].cases[0]);  // quoted as `report` always did
  EXPECT_EQ(streamed(report::TableFormat::csv, files), csv);
}

TEST(TablesStream, ChunkedTextKeepsOrderAcrossPieces) {
  report::ChunkedText a;
  std::string expect;
  for (int i = 0; i < 30000; ++i) {
    const std::string line = std::to_string(i) + std::string(60, 'x') + "\n";
    a.append(line);
    expect += line;
  }
  report::ChunkedText b;
  b.append("head\n");
  b.append(std::move(a));
  b.append("tail\n");
  EXPECT_GT(expect.size(), std::size_t{1} << 20);  // more than one piece
  EXPECT_EQ(b.str(), "head\n" + expect + "tail\n");
  EXPECT_EQ(b.size(), expect.size() + 10);
}

TEST(TablesStream, BatchedReadingGivesTheCasesOfLoadInput) {
  const auto path = temp_path("batches.jsonl");
  {
    std::ofstream out(path, std::ios::binary);
    for (int i = 0; i < 7; ++i) {
      auto r = fixtures::allreduce_record(2, 1024u << i, 3.0 + i);
      out << record::to_json(r).dump() << "\n" << (i == 3 ? "\n  \n" : "");  // blank lines are skipped
    }
    out << "{\"schema\": \"collbench.result/1\", \"kind\": \"ca";  // a torn last line
  }
  const record::InputFile whole = record::load_input(path.string());
  std::vector<std::size_t> batch_sizes;
  std::vector<CaseRecord> cases;
  std::vector<int> lines;
  const record::InputFile rest = record::stream_input(path.string(), 3, [&](record::InputFile& f) {
    batch_sizes.push_back(f.cases.size());
    for (auto& r : f.cases) cases.push_back(std::move(r));
    lines.insert(lines.end(), f.case_lines.begin(), f.case_lines.end());
  });
  EXPECT_EQ(batch_sizes, (std::vector<std::size_t>{3, 3, 1}));
  EXPECT_TRUE(rest.cases.empty());
  EXPECT_EQ(lines, (std::vector<int>{1, 2, 3, 4, 7, 8, 9}));
  EXPECT_EQ(whole.case_lines, lines);
  ASSERT_EQ(cases.size(), whole.cases.size());
  for (std::size_t i = 0; i < cases.size(); ++i) EXPECT_EQ(record::to_json(cases[i]), record::to_json(whole.cases[i]));
  ASSERT_EQ(rest.warnings.size(), 1U);
  EXPECT_EQ(rest.warnings, whole.warnings);
  EXPECT_NE(rest.warnings[0].find(":10: skipped a truncated last line"), std::string::npos) << rest.warnings[0];
  std::filesystem::remove(path);
}

TEST(TablesStream, ABadLineIsNamedWithItsLineAndEndsTheRead) {
  const auto path = temp_path("bad.jsonl");
  {
    std::ofstream out(path, std::ios::binary);
    out << record::to_json(fixtures::allreduce_record(2, 8, 1.0)).dump() << "\n{\"schema\": 1,,}\n";
    for (int i = 0; i < 3; ++i) out << record::to_json(fixtures::allreduce_record(2, 16, 1.0)).dump() << "\n";
  }
  std::size_t handed = 0;
  try {
    record::stream_input(path.string(), 1, [&](record::InputFile& f) { handed += f.cases.size(); });
    ADD_FAILURE() << "no error";
  } catch (const InputError& e) {
    EXPECT_EQ(std::string(e.what()).rfind(path.string() + ":2: invalid JSON at column", 0), 0U) << e.what();
  }
  EXPECT_EQ(handed, 1U);  // the case before the bad line, none after it
  std::vector<std::string> warnings;
  EXPECT_THROW(record::for_each_jsonl_line(std::filesystem::temp_directory_path().string(), "results file",
                                           "a JSONL file", warnings, [](record::JsonlLine&&) {}),
               InputError);
  std::filesystem::remove(path);
}

TEST(TablesStream, UnsyncedLinesAreTheLinesWriteWrites) {
  const auto synced = temp_path("synced.jsonl");
  const auto unsynced = temp_path("unsynced.jsonl");
  const std::vector<CaseRecord> records{fixtures::allreduce_record(2, 8, 1.0), fixtures::allreduce_record(2, 16, 2.0)};
  {
    record::JsonlWriter a(synced.string(), record::OpenMode::create);
    record::JsonlWriter b(unsynced.string(), record::OpenMode::create);
    for (const auto& r : records) {
      a.write(record::to_json(r));
      b.write_unsynced(record::to_json(r));
    }
    b.sync();
  }
  const std::string text = slurp(unsynced);
  EXPECT_EQ(text, slurp(synced));
  EXPECT_EQ(std::count(text.begin(), text.end(), '\n'), 2);
  std::filesystem::remove(synced);
  std::filesystem::remove(unsynced);
}
