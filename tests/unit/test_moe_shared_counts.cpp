// MoE counts shared over the processes (coll/moe_plan.hpp share_moe_counts, run/control_row_gather.hpp):
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
#include <tuple>
#include <vector>

#include "collbench/coll/collective.hpp"
#include "collbench/coll/moe_plan.hpp"
#include "collbench/model/traffic.hpp"
#include "collbench/run/control_row_gather.hpp"
#include "collbench/workload/routing.hpp"

using namespace collbench;
using namespace collbench::coll;

namespace {

// Hands back only what it was given: too few rows for any real matrix.
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
  KnownRowsGather gather(5, std::vector<std::int64_t>(static_cast<std::size_t>(n * n), 0));
  share_moe_counts(parse_moe_params(p), n, gather);
  // EP groups of 8: only row 5's block (ranks 0-7) is routed here and travels.
  const std::vector<std::int64_t> row5(expected.rows.begin() + 5 * n, expected.rows.begin() + 5 * n + 8);
  EXPECT_EQ(gather.mine(), row5);
  const auto w = moe_workload(parse_moe_params(p), n);
  EXPECT_TRUE(w->counts_shared);
  EXPECT_EQ(w->matrix().block_size, 8);
  EXPECT_EQ(w->matrix().rows.size(), 16u * 8u);
  EXPECT_EQ(w->exchange_group, 8);
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
  const workload::CountsMatrix expected = offline(p, n);
  for (int s = 0; s < n; ++s) {
    for (int d = 0; d < n; ++d) EXPECT_EQ(w->matrix().at(s, d), expected.at(s, d)) << s << "->" << d;
  }
  EXPECT_EQ(w->matrix().send_rows(), expected.send_rows());
  EXPECT_EQ(w->matrix().receive_rows(), expected.receive_rows());
  EXPECT_EQ(w->matrix().total_rows(), expected.total_rows());
  // One EP group over all ranks: dense, as routed.
  const auto whole = params("706");
  std::map<std::string, std::string> whole_p = whole;
  whole_p["ep_size"] = "16";
  ctx.params = &whole_p;
  coll.share_inputs(0, ctx, gather);
  const auto w16 = moe_workload(parse_moe_params(whole_p), n);
  EXPECT_TRUE(w16->counts_shared);
  EXPECT_EQ(w16->matrix().block_size, 0);
  EXPECT_EQ(w16->matrix().rows, offline(whole_p, n).rows);
  // Parameters never shared are routed here.
  EXPECT_FALSE(moe_workload(parse_moe_params(params("703")), n)->counts_shared);
}

// Block-diagonal storage reads as the dense matrix it stands for, and the traffic summary from it
// equals the one from the n x n traffic matrix, for every operation and two placements.
TEST(MoeSharedCounts, BlockStorageAndItsTrafficSummaryMatchTheDenseOnes) {
  // 6 ranks in blocks of 3; dense equivalent below.
  const workload::CountsMatrix block{6,
                                     {1, 2, 0, 3, 0, 4, 5, 6, 7,  //
                                      0, 1, 1, 2, 0, 9, 8, 3, 2},
                                     3};
  workload::CountsMatrix dense{6, std::vector<std::int64_t>(36, 0)};
  for (int s = 0; s < 6; ++s) {
    for (int j = 0; j < 3; ++j) {
      dense.rows[static_cast<std::size_t>(s * 6 + (s / 3) * 3 + j)] = block.rows[static_cast<std::size_t>(s * 3 + j)];
    }
  }
  EXPECT_EQ(block.at(0, 1), 2);
  EXPECT_EQ(block.at(0, 3), 0);  // outside the block
  EXPECT_EQ(block.at(4, 5), 9);  // row 4 holds ranks 3, 4, 5: {2, 0, 9}
  for (int s = 0; s < 6; ++s) {
    for (int d = 0; d < 6; ++d) EXPECT_EQ(block.at(s, d), dense.at(s, d)) << s << "->" << d;
  }
  EXPECT_EQ(block.send_rows(), (std::vector<std::int64_t>{3, 7, 18, 2, 11, 13}));
  EXPECT_EQ(block.receive_rows(), dense.receive_rows());
  EXPECT_EQ(block.total_rows(), dense.total_rows());
  EXPECT_EQ(confined_group(block, 3), 3);
  EXPECT_EQ(confined_group(dense, 3), 3);
  for (const auto& placement : {placement_from_sizes(6, {3, 3}), placement_from_sizes(6, {2, 2, 2})}) {
    for (const MoeOp op : {MoeOp::dispatch, MoeOp::combine, MoeOp::roundtrip}) {
      const auto want = model::summarize_traffic(moe_traffic(dense, 8, 12, op), placement);
      const auto got = moe_traffic_summary(block, 8, 12, op, placement);
      EXPECT_EQ(got.bytes_in_domain, want.bytes_in_domain);
      EXPECT_EQ(got.bytes_off_domain, want.bytes_off_domain);
      EXPECT_EQ(got.bytes_max_rank, want.bytes_max_rank);
      EXPECT_EQ(got.bytes_logical_total, want.bytes_logical_total);
      ASSERT_EQ(got.per_rank.size(), 6u);
      for (std::size_t r = 0; r < 6; ++r) {
        const auto& a = got.per_rank[r];
        const auto& b = want.per_rank[r];
        EXPECT_EQ(std::tie(a.send_in_domain, a.recv_in_domain, a.send_off_domain, a.recv_off_domain, a.send_total,
                           a.recv_total, a.send_peers, a.recv_peers),
                  std::tie(b.send_in_domain, b.recv_in_domain, b.send_off_domain, b.recv_off_domain, b.send_total,
                           b.recv_total, b.send_peers, b.recv_peers))
            << "rank " << r;
      }
    }
  }
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
