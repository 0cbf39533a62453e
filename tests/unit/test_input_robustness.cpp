// Bad input that once escaped as something other than an InputError (a library exception, a
// float-to-int cast out of range, an endless loop, a stack-deep value), found by reading the
// parsers and by the fuzzers (tests/fuzz, docs/testing.md): each must now be refused with an
// InputError whose message names where. Pure C++.
#include <gtest/gtest.h>

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <limits>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "collbench/core/error.hpp"
#include "collbench/gate/gate.hpp"
#include "collbench/plan/case.hpp"
#include "collbench/plan/sweep.hpp"
#include "collbench/record/input_file.hpp"
#include "collbench/record/jsonl.hpp"
#include "collbench/run/fault.hpp"

using namespace collbench;
using nlohmann::json;

namespace {

// A real two-rank run: header and two cases (tests/data/bad-input/results-complete.jsonl).
std::vector<json> real_records() {
  std::ifstream in(std::string(COLLBENCH_SOURCE_DIR) + "/tests/data/bad-input/results-complete.jsonl");
  std::vector<json> out;
  for (std::string line; std::getline(in, line);) out.push_back(json::parse(line));
  return out;
}

std::string jsonl(const std::vector<json>& records) {
  std::string text;
  for (const auto& r : records) text += r.dump() + "\n";
  return text;
}

// The InputError message of f(), or "" when f() does not throw one.
template <class F>
std::string input_error(F&& f) {
  try {
    f();
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

bool has(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

}  // namespace

TEST(ResultsReader, RealFileReadsBack) {
  const auto f = record::parse_results(jsonl(real_records()), "r.jsonl");
  EXPECT_TRUE(f.header.has_value());
  EXPECT_EQ(f.cases.size(), 2u);
  EXPECT_TRUE(f.warnings.empty());
}

TEST(ResultsReader, FloatWhereAnIntegerBelongsIsRefusedNotCast) {
  auto records = real_records();
  records[1]["num_ranks"] = 1e300;  // static_cast<int>(1e300) would be undefined behaviour
  EXPECT_TRUE(has(input_error([&] { record::parse_results(jsonl(records), "r.jsonl"); }),
                  "r.jsonl:2: record key 'num_ranks' must be an integer, got 1e+300 (a number written with a "
                  "fraction or an exponent)"));
  records[1]["num_ranks"] = 10000000000LL;  // an integer, but not an int
  EXPECT_TRUE(has(input_error([&] { record::parse_results(jsonl(records), "r.jsonl"); }), "out of range"));
  records[1]["num_ranks"] = 2;
  records[1]["domain_sizes"] = json::array({2.5});
  EXPECT_TRUE(has(input_error([&] { record::parse_results(jsonl(records), "r.jsonl"); }), "'domain_sizes'"));
}

TEST(ResultsReader, MalformedWrongByRankIsAnInputError) {
  auto records = real_records();
  records[2]["wrong"]["by_rank"] = json::array({1, 2});  // it.key() on an array throws
  EXPECT_TRUE(has(input_error([&] { record::parse_results(jsonl(records), "r.jsonl"); }), "r.jsonl:3:"));
  records[2]["wrong"]["by_rank"] = json{{"one", 3}};  // std::stoi would throw invalid_argument
  EXPECT_TRUE(has(input_error([&] { record::parse_results(jsonl(records), "r.jsonl"); }), "'one'"));
  records[2]["wrong"]["by_rank"] = json{{"1", "three"}};
  EXPECT_NE(input_error([&] { record::parse_results(jsonl(records), "r.jsonl"); }), "");
}

TEST(ResultsReader, SchemaOfTheWrongTypeIsAnInputError) {
  auto records = real_records();
  records[1]["schema"] = 1;  // json::value("schema", "") threw type_error
  EXPECT_TRUE(has(input_error([&] { record::parse_results(jsonl(records), "r.jsonl"); }),
                  "r.jsonl:2: record has schema '(none)'"));
  records[1]["schema"] = record::kSchema;
  records[1]["graph"] = "yes";  // json::value("graph", 0) threw type_error
  EXPECT_TRUE(has(input_error([&] { record::parse_results(jsonl(records), "r.jsonl"); }), "'graph'"));
}

TEST(ResultsReader, DeepNestingIsRefusedBeforeItCanOverflowTheStack) {
  const std::string deep = std::string(100000, '[') + std::string(100000, ']');
  auto records = real_records();
  const std::string text = records[0].dump() + "\n{\"kind\": " + deep + "}\n";
  const std::string message = input_error([&] { record::parse_results(text, "d.jsonl"); });
  EXPECT_TRUE(has(message, "d.jsonl:2: JSON nested deeper than")) << message;
  EXPECT_TRUE(has(input_error([&] { record::parse_input(text, "d.jsonl"); }), "d.jsonl:2:"));
}

TEST(ResultsReader, NumberBeyondDoubleRangeIsAnInputError) {
  // Found by fuzz_results (tests/fuzz/corpus/results/regress-number-overflow.jsonl): nlohmann's
  // out_of_range escaped the reader.
  auto records = real_records();
  const std::string text = records[0].dump() + "\n{\"kind\": \"case\", \"bytes\": 1e315}\n";
  const std::string message = input_error([&] { record::parse_results(text, "n.jsonl"); });
  EXPECT_TRUE(has(message, "n.jsonl:2: invalid JSON: a number out of range")) << message;
  EXPECT_TRUE(has(input_error([&] { record::parse_input(text, "n.jsonl"); }), "n.jsonl:2:"));
}

TEST(ResultsReader, TruncatedLastLineIsAWarningBrokenMiddleLineAnError) {
  const std::string text = jsonl(real_records());
  const std::string cut = text.substr(0, text.size() - 50);
  const auto f = record::parse_results(cut, "c.jsonl");
  EXPECT_EQ(f.cases.size(), 1u);
  ASSERT_EQ(f.warnings.size(), 1u);
  EXPECT_TRUE(has(f.warnings[0], "c.jsonl:3: skipped a truncated last line")) << f.warnings[0];
  // The same cut with its newline is not a torn write: an error, with the column.
  const std::string message = input_error([&] { record::parse_results(cut + "\n", "c.jsonl"); });
  EXPECT_TRUE(has(message, "c.jsonl:3: invalid JSON at column")) << message;
}

TEST(ResultsReader, OneRunPerFile) {
  const auto records = real_records();
  const std::string text = jsonl(records) + records[0].dump() + "\n";
  EXPECT_TRUE(has(input_error([&] { record::parse_results(text, "two.jsonl"); }), "two.jsonl:4: a second run header"));
}

TEST(JsonlWriter, WritesToACharacterDeviceThatCannotSync) {
  // fsync(2) fails with EINVAL on /dev/null and pipes: --out /dev/stdout must still work.
  record::JsonlWriter w("/dev/null", record::OpenMode::create);
  EXPECT_NO_THROW(w.write(json{{"kind", "case"}}));
}

TEST(SizeSeries, LongOrEndlessSeriesAreRefusedQuickly) {
  const auto start = std::chrono::steady_clock::now();
  constexpr auto kMax = std::numeric_limits<std::uint64_t>::max();
  // A step past 2^64 used to wrap around (an endless loop).
  EXPECT_EQ(plan::size_series(0, kMax, 2, 1ULL << 62),
            (std::vector<std::uint64_t>{0, 1ULL << 62, 2ULL << 62, 3ULL << 62}));
  EXPECT_EQ(plan::size_series(kMax - 1, kMax, 2, 1ULL << 62).size(), 1u);
  // A factor barely above 1 used to spin through ~1e15 identical sizes.
  EXPECT_TRUE(has(input_error([] { plan::size_series(1, 1ULL << 40, 1.0 + 1e-15, 0); }), "more than 100000 sizes"));
  EXPECT_NE(input_error([] { plan::size_series(1, 1024, std::numeric_limits<double>::infinity(), 0); }), "");
  EXPECT_NE(input_error([] { plan::size_series(0, 1ULL << 40, 2, 1); }), "");
  // Sizes near 2^64 neither overflow nor pass the maximum.
  EXPECT_EQ(plan::size_series(1ULL << 62, kMax, 2, 0), (std::vector<std::uint64_t>{1ULL << 62, 1ULL << 63, kMax}));
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(5));
}

TEST(SweepFile, NonScalarKeysAndHugeCrossProductsAreInputErrors) {
  EXPECT_TRUE(has(input_error([] { plan::parse_sweep("name: x\n? [a, b]\n: 1\ncases: []\n", "s.yaml"); }),
                  "keys must be plain names"));
  EXPECT_TRUE(has(input_error([] {
                    plan::parse_sweep("name: x\ncases:\n  - collective: allreduce\n    ? {a: 1}\n    : 2\n", "s.yaml");
                  }),
                  "s.yaml:4"));
  // 10 x 10 x ... : more cases than any sweep can run, refused before expanding.
  std::string yaml = "name: x\ncases:\n  - collective: allreduce\n    bytes: {min: 1, max: 1M, step: 16}\n";
  yaml += "    dtype: [int32, int64, float32, float64, float16, bfloat16]\n";
  yaml += "    redop: [sum, prod, min, max]\n";
  EXPECT_TRUE(has(input_error([&] { plan::parse_sweep(yaml, "s.yaml"); }), "more than 1000000 cases"));
  EXPECT_TRUE(has(input_error([] {
                    plan::parse_sweep(
                        "name: x\ncases:\n  - collective: allreduce\n    bytes: {min: 1, max: 8, factor: nan}\n",
                        "s.yaml");
                  }),
                  "greater than 1"));
}

TEST(GatePolicy, NonScalarKeysAreInputErrors) {
  EXPECT_TRUE(has(input_error([] { gate::parse_gate_policy("? [alpha]\n: 0.1\n", "p.yaml"); }), "p.yaml:1"));
  EXPECT_TRUE(has(input_error([] { gate::parse_gate_policy("floors:\n  ? [x]\n  : 0.5\n", "p.yaml"); }),
                  "keys must be plain names"));
}

TEST(FaultSpec, NumbersThatAreNotWholeOrFiniteAreRefused) {
  EXPECT_TRUE(has(input_error([] { run::FaultPlan::parse("hang:rank=1e300"); }), "not a whole number"));
  EXPECT_TRUE(has(input_error([] { run::FaultPlan::parse("hang:rank=1,case=0.5"); }), "not a whole number"));
  EXPECT_TRUE(has(input_error([] { run::FaultPlan::parse("slow:factor=nan"); }), "not a non-negative number"));
  EXPECT_TRUE(has(input_error([] { run::FaultPlan::parse("delay:rank=0,us=inf"); }), "not a non-negative number"));
  EXPECT_EQ(run::FaultPlan::parse("hang:rank=1,case=2,iter=3").items().size(), 1u);
}
