// Issue 20 item 6 for imports: a log (or several) with repeated rows never gives a results file
// that `gate` refuses. The repeated case keys are dropped, the first row is kept, and each drop
// is a warning naming both places and the key.
#include <gtest/gtest.h>

#include <set>

#include "collbench/record/nccltests_convert.hpp"
#include "nccltests_test_util.hpp"

using namespace nccltests_test;

namespace {

NcclTestsConvertOptions convert_options() {
  NcclTestsConvertOptions o;
  o.run_id = "repeats-test";
  o.started_at = "2026-01-01T00:00:00Z";
  return o;
}

// The 8xH100 log with its 8 MiB row printed a second time, right after the 32 MiB row.
std::string log_with_a_repeated_row() {
  const std::string text = read_file(kFixtures + "all_reduce_8xH100.txt");
  const std::string row =
      "     8388608       2097152     float     sum      -1    38.88  215.78  377.61       0    37.94  221.08  386.89"
      "       0\n";
  const std::string repeated =
      "     8388608       2097152     float     sum      -1    40.00  209.72  367.00       0    39.00  215.09  376.41"
      "       0\n";
  const std::string after =
      "    33554432       8388608     float     sum      -1   111.68  300.45  525.78       0   108.78  308.48  539.83"
      "       0\n";
  return replace_once(text, after, after + repeated);
}

}  // namespace

TEST(NcclTestsImportRepeats, RepeatedRowIsDroppedAndTheFirstKept) {
  const auto logs = parse_nccl_tests_logs(log_with_a_repeated_row(), "ar.txt");
  ASSERT_EQ(logs.size(), 1u);
  ASSERT_EQ(logs[0].rows.size(), 15u);  // the parser keeps what the log printed
  const auto imp = import_nccl_tests(logs, convert_options());
  EXPECT_EQ(imp.cases.size(), 28u);  // 14 sizes x (out-of-place, in-place)
  EXPECT_EQ(imp.duplicates_dropped, 2);
  std::set<std::string> keys;
  for (const auto& c : imp.cases) EXPECT_TRUE(keys.insert(c.case_key).second) << c.case_key;
  for (const auto& c : imp.cases) {
    if (c.bytes != 8388608) continue;
    EXPECT_DOUBLE_EQ(c.time_us->p50, c.in_place ? 37.94 : 38.88);  // line 28's values, not line 30's
    EXPECT_EQ(c.extra["source_line"], 28);
  }
  std::vector<std::string> drops;
  for (const auto& w : imp.warnings)
    if (w.find("dropped") != std::string::npos) drops.push_back(w);
  ASSERT_EQ(drops.size(), 2u);
  EXPECT_EQ(drops[0],
            "ar.txt:30: dropped: the same case as ar.txt:28 "
            "(allreduce|sum|float32|nccl|auto|global|outofplace|8388608|8|8); a results file holds one record per case "
            "key, the first is kept");
  EXPECT_NE(drops[1].find("ar.txt:30: dropped: the same case as ar.txt:28 (allreduce|sum|float32|nccl|auto|global|"
                          "inplace|8388608|8|8)"),
            std::string::npos)
      << drops[1];
}

TEST(NcclTestsImportRepeats, TheSameLogTwiceGivesEachCaseOnce) {
  const auto logs = load_nccl_tests_file(kFixtures + "all_reduce_8xH100.txt");
  auto twice = logs;
  twice.push_back(logs.front());
  const auto once = import_nccl_tests(logs, convert_options());
  const auto imp = import_nccl_tests(twice, convert_options());
  EXPECT_EQ(once.duplicates_dropped, 0);
  EXPECT_EQ(imp.cases.size(), once.cases.size());
  EXPECT_EQ(imp.duplicates_dropped, static_cast<int>(once.cases.size()));
  EXPECT_EQ(imp.header.config["logs"].size(), 2u);  // both logs are still listed as sources
}
