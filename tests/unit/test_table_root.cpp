// The root column of the report table, the Markdown table and the CSV (report/table.hpp): tables
// whose records all have root 0 (or no root) print as before; a broadcast record with another root
// adds a root column after redop to the tables ("-" for families without a root); the CSV's last
// column `root` is the record's root, empty for families without one. Golden text.
#include <gtest/gtest.h>

#include "collbench/report/markdown.hpp"
#include "collbench/report/table.hpp"
#include "record_fixtures.hpp"

using namespace collbench;
using record::CaseRecord;

namespace {

CaseRecord timed_case(const std::string& collective, std::uint64_t bytes, std::optional<int> root) {
  CaseRecord r = fixtures::timed_record(collective, bytes, 2, 4.0, root);
  if (collective == "allreduce") r.redop = "sum";
  r.time_us->p99 = 5.0;
  r.iterations = 10;
  r.status = "ok";
  r.case_key = record::make_case_key(r);
  return r;
}

const std::string kHeader =
    "# broadcast  backend mpi  ranks 2  domains [2]  timing isolated\n"
    "#        size       count       type redop         algo  scope place       time        p99    algbw    busbw  "
    "#wrong samples %bound\n"
    "#         (B)  (elements)                                                  (us)       (us)   (GB/s)   (GB/s)    "
    "                   \n";

}  // namespace

TEST(TableRoot, RootZeroAndNoRootKeepTheTableWithoutARootColumn) {
  const std::vector<CaseRecord> records{timed_case("broadcast", 4096, 0), timed_case("broadcast", 8192, std::nullopt)};
  EXPECT_FALSE(report::needs_root_column(records));
  EXPECT_EQ(
      report::render_table(records),
      kHeader +
          "         4096        1024    float32     -         auto global   out       4.00       5.00     1.02     "
          "1.02       0      10      -\n"
          "         8192        2048    float32     -         auto global   out       4.00       5.00     2.05     "
          "2.05       0      10      -\n"
          "# Out of bounds values : 0 OK\n# Avg bus bandwidth    : 1.536\n");
  EXPECT_EQ(
      report::markdown_case_table({records[0]}),
      "| collective | size (B) | count | type | redop | algo | scope | place | ranks | domains | time p50 (us) | "
      "p99 (us) | algbw (GB/s) | busbw (GB/s) | #wrong | samples | % bound | status |\n"
      "|---|---:|---:|---|---|---|---|---|---:|---|---:|---:|---:|---:|---:|---:|---:|---|\n"
      "| broadcast | 4096 | 1024 | float32 | – | auto | global | out | 2 | 2 | 4.00 | 5.00 | 1.02 | 1.02 | 0 | 10 "
      "| – | ok |\n");
}

TEST(TableRoot, ANonZeroRootAddsTheColumnToEveryBlock) {
  const std::vector<CaseRecord> records{timed_case("broadcast", 4096, 0), timed_case("broadcast", 4096, 1),
                                        timed_case("allreduce", 4096, std::nullopt)};
  EXPECT_TRUE(report::needs_root_column(records));
  EXPECT_EQ(report::render_table(records),
            "# broadcast  backend mpi  ranks 2  domains [2]  timing isolated\n"
            "#        size       count       type redop root         algo  scope place       time        p99    algbw  "
            "  busbw  #wrong samples %bound\n"
            "#         (B)  (elements)                                                       (us)       (us)   (GB/s)  "
            " (GB/s)                       \n"
            "         4096        1024    float32     -    0         auto global   out       4.00       5.00     1.02  "
            "   1.02       0      10      -\n"
            "         4096        1024    float32     -    1         auto global   out       4.00       5.00     1.02  "
            "   1.02       0      10      -\n"
            "# allreduce  backend mpi  ranks 2  domains [2]  timing isolated\n"
            "#        size       count       type redop root         algo  scope place       time        p99    algbw  "
            "  busbw  #wrong samples %bound\n"
            "#         (B)  (elements)                                                       (us)       (us)   (GB/s)  "
            " (GB/s)                       \n"
            "         4096        1024    float32   sum    -         auto global   out       4.00       5.00     1.02  "
            "   1.02       0      10      -\n"
            "# Out of bounds values : 0 OK\n# Avg bus bandwidth    : 1.024\n");
  EXPECT_EQ(report::markdown_case_table({records[1], records[2]}),
            "| collective | size (B) | count | type | redop | root | algo | scope | place | ranks | domains | time p50 "
            "(us) | p99 (us) | algbw (GB/s) | busbw (GB/s) | #wrong | samples | % bound | status |\n"
            "|---|---:|---:|---|---|---:|---|---|---|---:|---|---:|---:|---:|---:|---:|---:|---:|---|\n"
            "| broadcast | 4096 | 1024 | float32 | – | 1 | auto | global | out | 2 | 2 | 4.00 | 5.00 | 1.02 | 1.02 | 0 "
            "| 10 | – | ok |\n"
            "| allreduce | 4096 | 1024 | float32 | sum | – | auto | global | out | 2 | 2 | 4.00 | 5.00 | 1.02 | 1.02 | "
            "0 | 10 | – | ok |\n");
}

TEST(TableRoot, CsvRootIsTheLastColumnEmptyWithoutARoot) {
  const std::string header = report::csv_header();
  const std::string tail = "t_both_us,exposed_us,overlap_efficiency,root\n";
  EXPECT_EQ(header.substr(header.size() - tail.size()), tail);
  const auto last = [](const std::string& row) { return row.substr(row.rfind(',') + 1); };
  EXPECT_EQ(last(report::csv_row(timed_case("broadcast", 4096, 1))), "1\n");
  EXPECT_EQ(last(report::csv_row(timed_case("broadcast", 4096, 0))), "0\n");
  EXPECT_EQ(last(report::csv_row(timed_case("broadcast", 4096, std::nullopt))), "\n");  // written before roots
  EXPECT_EQ(last(report::csv_row(timed_case("allreduce", 4096, std::nullopt))), "\n");
  EXPECT_EQ(report::render_csv({timed_case("broadcast", 4096, 1)}),
            header +
                "broadcast,mpi,auto,,global,false,isolated,float32,,4096,1024,2,2,10,4,0,0,5,0,0,0,0,1.024,1.024,0,ok,,"
                ",,,broadcast|-|float32|mpi|auto|global|outofplace|4096@root=1|2|2,,,,,,1\n");
}
