// stream_input's reader on worker threads (record/line_batches.hpp) against the serial reader
// (parse_input over the whole text): the same cases, lines, header, warnings and first error, with
// one worker and with several, on files with a bad line in the middle, a torn last line, blank
// lines, CRLF line ends and a second run header; and the batch workers' order and errors.
#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "collbench/core/error.hpp"
#include "collbench/record/input_file.hpp"
#include "collbench/record/line_batches.hpp"
#include "collbench/record/record.hpp"
#include "record_fixtures.hpp"

using namespace collbench;
using nlohmann::json;

namespace {

std::string temp_file(const std::string& name, const std::string& text) {
  const auto path =
      std::filesystem::temp_directory_path() / ("collbench-parallel-" + std::to_string(::getpid()) + "-" + name);
  std::ofstream(path, std::ios::binary) << text;
  return path.string();
}

// A file's reading summed up: the error, or the header line, cases with lines, and warnings.
std::string outcome(const std::function<record::InputFile()>& read) {
  try {
    const record::InputFile f = read();
    std::string s = "header:" + std::to_string(f.header ? f.header_line : -1) + "\n";
    for (std::size_t i = 0; i < f.cases.size(); ++i) {
      s += std::to_string(f.case_lines.at(i)) + " " + record::to_json(f.cases[i]).dump() + " " +
           f.cases[i].extra.dump() + "\n";
    }
    for (const auto& w : f.warnings) s += "warning: " + w + "\n";
    return s;
  } catch (const InputError& e) {
    return std::string("error: ") + e.what();
  }
}

// stream_input with `workers` threads, batches of `batch` cases put back together.
record::InputFile streamed(const std::string& path, std::size_t batch, unsigned workers) {
  std::vector<record::CaseRecord> cases;
  std::vector<int> lines;
  record::InputFile f = record::stream_input(
      path, batch,
      [&](record::InputFile& part) {
        EXPECT_LE(part.cases.size(), batch);
        for (auto& r : part.cases) cases.push_back(std::move(r));
        lines.insert(lines.end(), part.case_lines.begin(), part.case_lines.end());
      },
      workers);
  f.cases = std::move(cases);
  f.case_lines = std::move(lines);
  return f;
}

// The serial reader's outcome and the threaded one's, for 1, 2, 3 and 8 workers.
void expect_same_as_serial(const std::string& name, const std::string& text) {
  const std::string path = temp_file(name, text);
  const std::string serial = outcome([&] { return record::parse_input(text, path); });
  for (const unsigned workers : {1U, 2U, 3U, 8U}) {
    for (const std::size_t batch : {std::size_t{5}, SIZE_MAX}) {
      EXPECT_EQ(outcome([&] { return streamed(path, batch, workers); }), serial)
          << name << " with " << workers << " workers, batches of " << batch;
    }
  }
  std::filesystem::remove(path);
}

std::string header_line() {
  record::RunHeader h;
  h.run_id = "run";
  h.config = json::object();
  return record::to_json(h).dump();
}

// `n` case lines of varied shapes (a model, per-rank times, an escaped reason the scanner leaves
// to the JSON tree), each followed by `end`.
std::string case_lines(int n, const std::string& end = "\n") {
  std::string text;
  for (int i = 0; i < n; ++i) {
    record::CaseRecord r = fixtures::allreduce_record(2, 8u << (i % 20), 1.0 + i);
    if (i % 7 == 0) fixtures::set_model(r, "cpu-local", 0.5, 0.75);
    if (i % 11 == 0) r.per_rank = record::PerRank{{1.0, 2.0}, {1.5, 2.5}, {0.0, 0.5}};
    if (i % 13 == 0) r.reason = "a \"quoted\" reason";
    text += record::to_json(r).dump() + end;
  }
  return text;
}

TEST(ParallelReader, ACleanFileWithBlankLinesReadsAsSerially) {
  expect_same_as_serial("clean", header_line() + "\n\n" + case_lines(300) + "  \n" + case_lines(400) + "\n");
}

TEST(ParallelReader, TheFirstBadLineInFileOrderIsTheError) {
  const std::string missing_key = R"({"schema": "collbench.result/1", "kind": "case", "run_id": "x"})";
  expect_same_as_serial("bad-middle", header_line() + "\n" + case_lines(500) + "{\"schema\": 1,,}\n" + case_lines(100) +
                                          missing_key + "\n" + case_lines(100));
  expect_same_as_serial("bad-case", header_line() + "\n" + case_lines(600) + missing_key + "\n" + case_lines(10));
  json negative = record::to_json(fixtures::allreduce_record(2, 8, 1.0));
  negative["busbw_gbps"] = -1.0;
  expect_same_as_serial("negative", case_lines(300) + negative.dump() + "\n[1, 2]\n" + case_lines(3));
  expect_same_as_serial("not-an-object", case_lines(300) + "[1, 2]\n" + case_lines(3));
  expect_same_as_serial("unknown-kind", case_lines(3) + R"({"schema": "collbench.result/1", "kind": "x"})"
                                                        "\n");
}

TEST(ParallelReader, TornAndUnterminatedLastLinesReadAsSerially) {
  expect_same_as_serial("torn", header_line() + "\n" + case_lines(520) + R"({"schema": "collbench.result/1", "ki)");
  const std::string last = case_lines(1);
  expect_same_as_serial("unterminated", case_lines(520) + last.substr(0, last.size() - 1));
  expect_same_as_serial("empty", "");
  expect_same_as_serial("blank-only", "\n \n\t\n");
}

TEST(ParallelReader, CrlfLinesAndASecondHeaderReadAsSerially) {
  expect_same_as_serial("crlf", header_line() + "\r\n" + case_lines(600, "\r\n"));
  expect_same_as_serial("second-header", header_line() + "\n" + case_lines(400) + header_line() + "\n" + case_lines(5));
  expect_same_as_serial("late-header", case_lines(300) + header_line() + "\n" + case_lines(5));
  // A first line of only "{": the message about a JSON document over several lines.
  expect_same_as_serial("document", "\n{\n  \"schema\": \"collbench.verdict/1\"\n}\n");
}

TEST(ParallelReader, AnErrorFromTheConsumerEndsTheReadAndJoinsTheWorkers) {
  const std::string path = temp_file("consumer", case_lines(2000));
  std::size_t handed = 0;
  EXPECT_THROW(record::stream_input(
                   path, 10,
                   [&](record::InputFile& f) {
                     handed += f.cases.size();
                     if (handed >= 50) throw std::runtime_error("stop");
                   },
                   4),
               std::runtime_error);
  EXPECT_EQ(handed, 50U);
  std::filesystem::remove(path);
}

TEST(ParallelReader, BatchWorkersKeepTheOrderAndRethrowInIt) {
  record::BatchWorkers pool(3, 4, [](record::LineBatch& b) {
    const int n = b.lines.at(0).number;
    std::this_thread::sleep_for(std::chrono::microseconds((7 * n) % 5 * 200));  // finish out of order
    if (n == 6) throw std::runtime_error("batch 6");
    b.text = std::to_string(n);
  });
  std::vector<std::string> taken;
  int next = 0;
  std::string error;
  while (next < 10 || !pool.empty()) {
    if (next < 10 && !pool.full()) {
      record::LineBatch b;
      b.lines.push_back({0, 0, next++, true});
      pool.submit(std::move(b));
      continue;
    }
    try {
      taken.push_back(pool.take().text);
    } catch (const std::runtime_error& e) {
      taken.push_back(e.what());
    }
  }
  EXPECT_EQ(taken, (std::vector<std::string>{"0", "1", "2", "3", "4", "5", "batch 6", "7", "8", "9"}));
  EXPECT_EQ(record::worker_count(0), std::max(1U, std::thread::hardware_concurrency()));
  EXPECT_EQ(record::worker_count(3), 3U);
}

}  // namespace
