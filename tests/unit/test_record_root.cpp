// The root of a rooted collective in records (record/record.hpp): its case key (root 0 keeps the
// key it always had, another root is "bytes@root=R"), the JSON field written only when set and
// read back, and the nccl-tests layout printing each row's own root.
#include <gtest/gtest.h>

#include "collbench/record/record.hpp"
#include "collbench/report/console_writer.hpp"
#include "record_fixtures.hpp"

using namespace collbench;
using record::CaseRecord;

namespace {

CaseRecord broadcast(std::uint64_t bytes, std::optional<int> root) {
  return fixtures::timed_record("broadcast", bytes, 4, 2.0, root);
}

}  // namespace

TEST(RecordRoot, RootedCollectives) {
  EXPECT_TRUE(record::rooted_collective("broadcast"));
  EXPECT_TRUE(record::rooted_collective("reduce"));
  EXPECT_FALSE(record::rooted_collective("allreduce"));
  EXPECT_FALSE(record::rooted_collective("sendrecv"));
}

TEST(RecordRoot, CaseKeyKeepsRootZeroAndNamesOtherRoots) {
  EXPECT_EQ(broadcast(1024, std::nullopt).case_key, "broadcast|-|float32|mpi|auto|global|outofplace|1024|4|4");
  EXPECT_EQ(broadcast(1024, 0).case_key, "broadcast|-|float32|mpi|auto|global|outofplace|1024|4|4");
  EXPECT_EQ(broadcast(1024, 3).case_key, "broadcast|-|float32|mpi|auto|global|outofplace|1024@root=3|4|4");
  EXPECT_EQ(record::make_case_key(broadcast(1024, 3), "overlap=sleep:us=5"),
            "broadcast|-|float32|mpi|auto|global|outofplace|1024@root=3;overlap=sleep:us=5|4|4");
  EXPECT_EQ(record::make_case_key(broadcast(1024, 0), "overlap=sleep:us=5"),
            "broadcast|-|float32|mpi|auto|global|outofplace|1024@overlap=sleep:us=5|4|4");
}

TEST(RecordRoot, JsonWritesTheRootOnlyWhenSetAndReadsItBack) {
  const auto with = record::to_json(broadcast(4096, 2));
  EXPECT_EQ(with.at("root"), 2);
  const CaseRecord back = record::case_from_json(with);
  ASSERT_TRUE(back.root.has_value());
  EXPECT_EQ(*back.root, 2);
  EXPECT_FALSE(back.extra.contains("root"));
  EXPECT_EQ(record::to_json(back), with);

  const auto without = record::to_json(broadcast(4096, std::nullopt));
  EXPECT_FALSE(without.contains("root"));
  EXPECT_FALSE(record::case_from_json(without).root.has_value());
}

TEST(RecordRoot, NcclTestsLayoutPrintsEachRowsRoot) {
  auto writer = report::make_console_writer("table", {"nccl-tests", true, false});
  record::RunHeader h;
  h.tool_version = "9.9";
  h.config = {{"cases", nlohmann::json::array()}};
  for (const int root : {0, 3}) h.config["cases"].push_back({{"collective", "broadcast"}, {"root", root}});
  std::string out = writer->begin(h);
  for (const int root : {0, 3}) out += writer->add(broadcast(1024, root));
  out += writer->end({});
  EXPECT_NE(out.find("        1024           256     float    none       0     2.00"), std::string::npos) << out;
  EXPECT_NE(out.find("        1024           256     float    none       3     2.00"), std::string::npos) << out;
  EXPECT_EQ(out.find("      -1 "), std::string::npos) << out;
}
