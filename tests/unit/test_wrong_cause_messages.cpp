// Messages that named the wrong cause (issue 37 item 7), each now naming the file, line and key
// and the real reason. Exact messages.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <functional>
#include <string>
#include <vector>

#include "collbench/core/error.hpp"
#include "collbench/core/input_file.hpp"
#include "collbench/core/limits.hpp"
#include "collbench/model/system_profile.hpp"
#include "collbench/plan/sweep.hpp"
#include "collbench/record/jsonl.hpp"
#include "collbench/run/fault.hpp"
#include "collbench/yamlio/structure.hpp"

using namespace collbench;

namespace {

std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const InputError& e) {
    return e.what();
  }
  return "no error";
}

}  // namespace

TEST(WrongCause, ACountPastTheLimitIsNotCalledNotAnInteger) {
  int v = 0;
  EXPECT_EQ(count_problem("99999999999", kMaxRanks, v).value_or("ok"), "is larger than the limit of 1048576");
  EXPECT_EQ(count_problem("99999999999999999999999", kMaxRanks, v).value_or("ok"),
            "is larger than the limit of 1048576");
  EXPECT_EQ(count_problem("1048577", kMaxRanks, v).value_or("ok"), "is larger than the limit of 1048576");
  EXPECT_EQ(count_problem("0", kMaxRanks, v).value_or("ok"), "is not positive");
  EXPECT_EQ(count_problem("-3", kMaxRanks, v).value_or("ok"), "is not positive");
  EXPECT_EQ(count_problem("2x", kMaxRanks, v).value_or("ok"), "is not a whole number");
  EXPECT_EQ(count_problem("", kMaxRanks, v).value_or("ok"), "is not a whole number");
  EXPECT_EQ(count_problem("1048576", kMaxRanks, v).value_or("ok"), "ok");
  EXPECT_EQ(v, 1048576);
}

TEST(WrongCause, AJsonDocumentIsNotAResultsFileNotInvalidJson) {
  const std::string verdict = "{\n  \"counts\": {\"pass\": 1},\n  \"schema\": \"collbench.accept/1\"\n}\n";
  EXPECT_EQ(error_of([&] { (void)record::parse_results(verdict, "verdict.json"); }),
            "verdict.json:1: a JSON document (schema 'collbench.accept/1') written over several lines, not a results "
            "file: those hold one JSON record per line (JSONL, schema 'collbench.result/1'); give a results file, e.g. "
            "the records-*.jsonl beside a verdict.json");
  EXPECT_EQ(error_of([] { (void)record::parse_results("[\n1\n]\n", "a.json"); }),
            "a.json:1: a JSON document (no schema) written over several lines, not a results file: those hold one "
            "JSON record per line (JSONL, schema 'collbench.result/1'); give a results file, e.g. the records-*.jsonl "
            "beside a verdict.json");
}

TEST(WrongCause, ADirectoryAsSystemProfileOrResultsFileIsCalledADirectory) {
  const auto dir = std::filesystem::temp_directory_path() / "collbench-wrong-cause-dir";
  std::filesystem::create_directories(dir);
  EXPECT_EQ(error_of([&] { (void)model::load_system_profile(dir.string()); }),
            "system profile file '" + dir.string() + "' is a directory; give a YAML file (profiles/systems/*.yaml)");
  EXPECT_EQ(error_of([&] { record::JsonlWriter w(dir.string(), record::OpenMode::create); }),
            "output file '" + dir.string() + "' is a directory; give a file in it, e.g. '" + dir.string() +
                "/results.jsonl'");
  std::filesystem::remove(dir);
}

TEST(WrongCause, AnEndlessInputStopsAtItsLimitNamingTheFile) {
  EXPECT_EQ(error_of([] { (void)plan::load_sweep_file("/dev/zero"); }),
            "sweep file '/dev/zero' holds more than 67108864 bytes; give a YAML file");
  EXPECT_EQ(error_of([] { (void)read_input_file("/dev/zero", "results file", "a JSONL file", 100000); }),
            "results file '/dev/zero' holds more than 100000 bytes; give a JSONL file");
}

TEST(WrongCause, ASlowPairOfOneRankIsRefused) {
  EXPECT_EQ(error_of([] { (void)run::FaultPlan::parse("slow-pair:a=0,b=0,factor=2"); }),
            "COLLBENCH_FAULT item 'slow-pair:a=0,b=0,factor=2': a and b are both rank 0; a pair is two ranks");
}

TEST(WrongCause, AnUnknownCollectiveInASweepNamesItsFileLineAndKey) {
  const std::string yaml = "name: t\ncases:\n  - bytes: 8\n    collective: [allreduce, allredux]\n";
  EXPECT_EQ(error_of([&] { (void)plan::parse_sweep(yaml, "s.yaml"); }),
            "s.yaml:4: key 'collective': unknown collective 'allredux'; accepted: allreduce, reducescatter, allgather, "
            "alltoall, alltoallv, broadcast, sendrecv, moe-dispatch, moe-combine, moe-roundtrip, reduce, "
            "ep-dp-concurrent, gather, scatter (did you mean 'allreduce'?)");
}

TEST(WrongCause, BytesThatAreNotUtf8InASweepNameTheirFileLineAndKey) {
  EXPECT_EQ(error_of([] {
              (void)plan::parse_sweep("name: t\xff\ncases:\n  - {collective: allreduce, bytes: 8}\n", "s.yaml");
            }),
            "s.yaml:1: key 'name': byte 0xFF at offset 1 is not UTF-8 text; YAML files are UTF-8 (save the file as "
            "UTF-8)");
  EXPECT_EQ(error_of([] {
              (void)plan::parse_sweep(
                  "name: t\ncases:\n  - collective: allreduce\n    bytes: 8\n    workload: a\xc3(\n", "s.yaml");
            }),
            "s.yaml:5: key 'cases[0].workload': byte 0xC3 at offset 1 is not UTF-8 text; YAML files are UTF-8 (save "
            "the file as UTF-8)");
  EXPECT_EQ(error_of([] {
              (void)plan::parse_sweep("name: t\ncases:\n  - collective: allreduce\n    by\xe9tes: 8\n", "s.yaml");
            }),
            "s.yaml:4: a key in 'cases[0]': byte 0xE9 at offset 2 is not UTF-8 text; YAML files are UTF-8 (save the "
            "file as UTF-8)");
  // Well-formed multi-byte text passes.
  EXPECT_EQ(error_of([] {
              (void)plan::parse_sweep(
                  "name: t\ndescription: \"sm\xc3\xb8rrebr\xc3\xb8\xd0\x94 \xe2\x82\xac \xf0\x9f\x98\x80\"\n"
                  "cases:\n  - {collective: allreduce, bytes: 8}\n",
                  "s.yaml");
            }),
            "no error");
}

TEST(WrongCause, Utf8ValidationFollowsRfc3629) {
  using yamlio::first_invalid_utf8;
  EXPECT_EQ(first_invalid_utf8("plain ascii"), std::nullopt);
  EXPECT_EQ(first_invalid_utf8("\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80\xf4\x8f\xbf\xbf"), std::nullopt);
  EXPECT_EQ(first_invalid_utf8("ab\xc0\xaf"), 2u);        // overlong '/'
  EXPECT_EQ(first_invalid_utf8("\xe0\x80\xaf"), 0u);      // overlong, 3 bytes
  EXPECT_EQ(first_invalid_utf8("x\xed\xa0\x80"), 1u);     // a surrogate (U+D800)
  EXPECT_EQ(first_invalid_utf8("\xf4\x90\x80\x80"), 0u);  // past U+10FFFF
  EXPECT_EQ(first_invalid_utf8("abc\xe2\x82"), 3u);       // cut short at the end
  EXPECT_EQ(first_invalid_utf8("\x80"), 0u);              // a lone continuation byte
  EXPECT_EQ(first_invalid_utf8("\xc3\xa9\xc3 "), 2u);     // a lead byte without its continuation
}
