// MoE counts shared over the processes (coll/moe_plan.hpp share_moe_counts, run/row_gather.hpp):
// the matrix a process assembles from its own routed rows and the others' gathered rows is the
// matrix the offline generator routes, the workload built from it says so, a gather that returns
// the wrong amount is refused, and the rows spread over the processes in contiguous blocks.
// Pure C++: the gathers here are in-process stand-ins; tests/mpi covers MPI_Allgatherv.
#include <gtest/gtest.h>

#include <cstdint>
#include <map>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

#include "collbench/coll/collective.hpp"
#include "collbench/coll/moe_plan.hpp"
#include "collbench/run/row_gather.hpp"
#include "collbench/workload/routing.hpp"

using namespace collbench;
using namespace collbench::coll;

namespace {

// Plays process `row` of a run: routes its row, takes the others from `others`.
class OneRowGather final : public RowGather {
 public:
  OneRowGather(int row, std::vector<std::int64_t> others) : row_(row), others_(std::move(others)) {}
  [[nodiscard]] std::vector<int> my_rows(int /*num_rows*/) const override { return {row_}; }
  [[nodiscard]] std::vector<std::int64_t> gather(std::span<const std::int64_t> mine, int /*num_rows*/,
                                                 std::size_t row_len) override {
    mine_.assign(mine.begin(), mine.end());
    std::vector<std::int64_t> all = others_;
    std::copy(mine.begin(), mine.end(), all.begin() + static_cast<std::ptrdiff_t>(row_ * row_len));
    return all;
  }
  std::vector<std::int64_t> mine_;  // what this process routed

 private:
  int row_;
  std::vector<std::int64_t> others_;
};

class ShortGather final : public RowGather {
 public:
  [[nodiscard]] std::vector<int> my_rows(int /*num_rows*/) const override { return {0}; }
  [[nodiscard]] std::vector<std::int64_t> gather(std::span<const std::int64_t> mine, int /*num_rows*/,
                                                 std::size_t /*row_len*/) override {
    return {mine.begin(), mine.end()};
  }
};

std::map<std::string, std::string> params(const std::string& seed) {
  return {{"workload", "deepseek-v3-latency"}, {"tokens", "16"}, {"ep_size", "8"}, {"seed", seed}};
}

workload::CountsMatrix offline(const std::map<std::string, std::string>& p, int n) {
  const MoeConfig c = moe_config(parse_moe_params(p), n);
  return workload::RoutingGenerator(c.routing).counts_matrices().rows(c.profile.rows);
}

TEST(MoeSharedCounts, OwnRowRoutedHereTheOthersGatheredMakeTheOfflineMatrix) {
  const int n = 16;
  const auto p = params("701");
  const workload::CountsMatrix expected = offline(p, n);
  // The others' rows all zero: only this process's row 5 can come out of the routing here.
  OneRowGather gather(5, std::vector<std::int64_t>(static_cast<std::size_t>(n * n), 0));
  share_moe_counts(parse_moe_params(p), n, gather);
  const std::vector<std::int64_t> row5(expected.rows.begin() + 5 * n, expected.rows.begin() + 6 * n);
  EXPECT_EQ(gather.mine_, row5);
  const auto w = moe_workload(parse_moe_params(p), n);
  EXPECT_TRUE(w->counts_shared);
  for (int s = 0; s < n; ++s) {
    for (int d = 0; d < n; ++d) EXPECT_EQ(w->matrix().at(s, d), s == 5 ? expected.at(s, d) : 0) << s << "->" << d;
  }
}

TEST(MoeSharedCounts, EveryRowHereGivesTheOfflineMatrixThroughTheFamilysHook) {
  const int n = 16;
  const auto p = params("702");
  LocalRowGather gather;
  CaseContext ctx;
  ctx.num_ranks = n;
  ctx.rank = 3;
  ctx.params = &p;
  ctx.placement = placement_from_ranks_per_domain(n, 4);
  ctx.algo = "hierarchical";
  const Collective& coll = find_collective("moe-dispatch");
  coll.share_inputs(0, ctx, gather);
  const auto w = moe_workload(parse_moe_params(p), n);
  EXPECT_TRUE(w->counts_shared);
  EXPECT_EQ(w->matrix().rows, offline(p, n).rows);
  // Parameters never shared are routed here.
  EXPECT_FALSE(moe_workload(parse_moe_params(params("703")), n)->counts_shared);
}

TEST(MoeSharedCounts, AWaivedCaseSharesNothing) {
  // ep_size 8 does not divide 12 ranks: the case is waived, so no rows are routed or gathered.
  const auto p = params("704");
  CaseContext ctx;
  ctx.num_ranks = 12;
  ctx.params = &p;
  ctx.placement = placement_from_sizes(12, {12});
  ASSERT_TRUE(find_collective("moe-dispatch").waiver(ctx));
  ShortGather gather;
  EXPECT_NO_THROW(find_collective("moe-dispatch").share_inputs(0, ctx, gather));
}

TEST(MoeSharedCounts, AGatherOfTheWrongSizeIsRefused) {
  ShortGather gather;
  try {
    share_moe_counts(parse_moe_params(params("705")), 8, gather);
    FAIL() << "no error";
  } catch (const std::logic_error& e) {
    EXPECT_STREQ(e.what(), "moe counts: gathered 8 values for 8 ranks");
  }
}

TEST(MoeSharedCounts, FamiliesWithoutSharedInputsDoNothing) {
  ShortGather gather;  // would be refused if anything were gathered
  CaseContext ctx;
  ctx.num_ranks = 4;
  EXPECT_NO_THROW(find_collective("allreduce").share_inputs(1024, ctx, gather));
}

TEST(RowBlocks, RowsSpreadOverProcessesInContiguousBlocks) {
  // More processes than rows: rows floor(p * 2 / 4) .. floor((p + 1) * 2 / 4), so 1 and 3 get one.
  EXPECT_EQ(run::row_block(0, 4, 2).first, 0);
  EXPECT_EQ(run::row_block(0, 4, 2).count, 0);
  EXPECT_EQ(run::row_block(1, 4, 2).first, 0);
  EXPECT_EQ(run::row_block(1, 4, 2).count, 1);
  EXPECT_EQ(run::row_block(3, 4, 2).first, 1);
  EXPECT_EQ(run::row_block(3, 4, 2).count, 1);
  // As many: one each.
  for (int p = 0; p < 4; ++p) {
    EXPECT_EQ(run::row_block(p, 4, 4).first, p);
    EXPECT_EQ(run::row_block(p, 4, 4).count, 1);
  }
  // Fewer: 10 rows over 4 processes are 2, 3, 2, 3 (floor(p * 10 / 4)).
  const int counts[] = {2, 3, 2, 3};
  const int firsts[] = {0, 2, 5, 7};
  for (int p = 0; p < 4; ++p) {
    EXPECT_EQ(run::row_block(p, 4, 10).first, firsts[p]);
    EXPECT_EQ(run::row_block(p, 4, 10).count, counts[p]);
  }
}

}  // namespace
