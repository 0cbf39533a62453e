// The case reader without a JSON tree (record/case_scan.hpp) against the general reader
// (parse_jsonl's line rules and value checks, then case_from_json): every line it reads must be
// one the general reader reads without an error, to the same record; every other line it leaves.
#include <gtest/gtest.h>

#include <algorithm>
#include <optional>
#include <string>
#include <vector>

#include "collbench/core/error.hpp"
#include "collbench/record/case_scan.hpp"
#include "collbench/record/jsonl.hpp"
#include "collbench/record/record.hpp"
#include "record_fixtures.hpp"

using namespace collbench;
using nlohmann::json;
using record::CaseRecord;

namespace {

// What the general reader makes of one line; nullopt where it refuses it or warns.
std::optional<CaseRecord> general(const std::string& line) {
  try {
    std::vector<std::string> warnings;
    const auto lines = record::parse_jsonl(line + "\n", "r.jsonl", warnings);
    if (lines.size() != 1 || !warnings.empty()) return std::nullopt;
    const json& j = lines[0].object;
    if (j.value("schema", json()) != record::kSchema || j.value("kind", json()) != "case") return std::nullopt;
    return record::case_from_json(j);
  } catch (const InputError&) {
    return std::nullopt;
  }
}

// Every field, `extra` and the two fields that may stand in it.
std::string everything(const CaseRecord& r) {
  return record::to_json(r).dump() + " extra=" + r.extra.dump() +
         " comm_ranks=" + std::to_string(r.comm_ranks.value_or(-7)) + " root=" + std::to_string(r.root.value_or(-7));
}

// The scanner's record, when it reads the line, is the general reader's.
void expect_agrees(const std::string& line) {
  const auto fast = record::scan_case_line(line);
  if (!fast) return;
  const auto slow = general(line);
  ASSERT_TRUE(slow.has_value()) << "the scanner read a line the general reader refuses: " << line;
  EXPECT_EQ(everything(*fast), everything(*slow)) << line;
}

// Records of the shapes a run writes: plain, waived, with a model, per-rank times, wrong
// elements, a root, comm_ranks, a workload and keys of later revisions.
std::vector<json> sample_records() {
  CaseRecord plain = fixtures::allreduce_record(4, 1 << 20, 12.5);
  CaseRecord modelled = fixtures::allreduce_record(2, 4096, 3.25);
  fixtures::set_model(modelled, "cpu-local", 2.0, 3.0);
  modelled.per_rank = record::PerRank{{1.0, 2.5}, {1.5, 3.0}, {0.0, 0.25}};
  modelled.wrong_total = 7;
  modelled.wrong_by_rank = {{0, 3}, {10, 4}};
  modelled.comm_ranks = 2;
  modelled.root = 1;
  modelled.algo_used = "ring";
  modelled.workload = json{{"name", "moe"}, {"tokens", 256}, {"skew", 1.5}, {"experts", {1, 2, 3}}};
  modelled.simulated = true;
  modelled.extra = json{{"source", "nccl-tests"}, {"progress", "spin"}, {"later", {{"a", nullptr}, {"b", false}}}};
  CaseRecord waived = fixtures::float32_case("run", "allreduce", "auto", 8, 2, {2});
  waived.status = "waived";
  waived.reason = "too large";
  waived.stop_reason = "waived";
  return {record::to_json(plain), record::to_json(modelled), record::to_json(waived)};
}

TEST(CaseScan, ReadsTheRecordsARunWritesAsCaseFromJsonDoes) {
  for (const auto& j : sample_records()) {
    const std::string line = j.dump();
    const auto fast = record::scan_case_line(line);
    ASSERT_TRUE(fast.has_value()) << line;
    const auto slow = general(line);
    ASSERT_TRUE(slow.has_value());
    EXPECT_EQ(everything(*fast), everything(*slow));
    expect_agrees(" \t" + line + " \r");  // whitespace around, a CRLF line
    std::string spaced = j.dump(2);       // whitespace inside (a JSONL line holds no '\n')
    std::replace(spaced.begin(), spaced.end(), '\n', ' ');
    ASSERT_TRUE(record::scan_case_line(spaced).has_value());
    expect_agrees(spaced);
  }
}

// Lines that are valid but that the scanner leaves to the general reader, and lines that one
// refuses; either way never a record the general reader would not give.
TEST(CaseScan, LeavesEveryLineItCannotReadExactly) {
  const json base = sample_records()[1];
  const auto with = [&](const std::string& key, const json& value) {
    json j = base;
    j[key] = value;
    return j.dump();
  };
  const std::vector<std::string> left = {
      with("reason", "a \"quoted\" reason"),  // an escape
      with("reason", "caf\u00e9"),            // a byte outside ASCII
      with("algbw_gbps", -1.0),               // refused by the value checks
      with("progress", -3),                   // valid, but negative: left
      with("samples_us", json::array({1.0, true})),
      with("graph", 1.5),
      with("iterations", 3000000000ULL),
      with("in_place", 1),
      with("kind", "run_header"),
      with("schema", "collbench.result/2"),
      with("repeats", json::object()),
      with("time_us", json::array()),
      with("wrong", json{{"total", 0}, {"by_rank", {{"01", 2}}}}),
      with("status", nullptr),
      base.dump() + "x",
      "\xEF\xBB\xBF" + base.dump(),  // a byte-order mark
      R"({"kind":"case","kind":"case"})",
      "[1,2]",
      "",
  };
  for (const auto& line : left) {
    EXPECT_FALSE(record::scan_case_line(line).has_value()) << line;
    expect_agrees(line);
  }
  std::string deep = "1";
  for (int i = 0; i < 40; ++i) deep = "[" + deep + "]";
  EXPECT_FALSE(record::scan_case_line(with("later", json::parse(deep))).has_value());
}

// comm_ranks and root that are not integers stay in `extra`, as case_from_json keeps them.
TEST(CaseScan, KeepsNonIntegerCommRanksAndRootInExtra) {
  json j = sample_records()[0];
  j["comm_ranks"] = "four";
  j["root"] = 2.0;
  const auto fast = record::scan_case_line(j.dump());
  ASSERT_TRUE(fast.has_value());
  EXPECT_FALSE(fast->comm_ranks.has_value());
  EXPECT_EQ(fast->extra.at("root"), json(2.0));
  EXPECT_EQ(everything(*fast), everything(*general(j.dump())));
}

// Every line one edit away from a record (a character removed, replaced or inserted): whatever
// the scanner reads, the general reader reads to the same record.
TEST(CaseScan, AgreesWithTheGeneralReaderOnEveryOneCharacterEdit) {
  const std::string edits = std::string("\"-+1,}] x\\0.eE{[:ntu\t\r\x01") + '\x80';
  int read = 0;
  for (const auto& j : {sample_records()[1], sample_records()[2]}) {
    const std::string line = j.dump();
    for (std::size_t i = 0; i < line.size(); ++i) {
      std::string removed = line;
      removed.erase(i, 1);
      expect_agrees(removed);
      read += record::scan_case_line(removed).has_value() ? 1 : 0;
      for (const char c : edits) {
        std::string replaced = line;
        replaced[i] = c;
        expect_agrees(replaced);
        std::string inserted = line;
        inserted.insert(i, 1, c);
        expect_agrees(inserted);
      }
    }
  }
  EXPECT_GT(read, 0);  // some edits keep a readable record (a digit removed from a number)
}

}  // namespace
