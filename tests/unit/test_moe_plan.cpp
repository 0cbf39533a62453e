// MoE harness plumbing (coll/moe_plan.hpp): buffer layouts of the flat and hierarchical exchanges
// for a hand-built 4-rank counts matrix (2 domains of 2), checked against offsets computed by
// hand; a byte-level simulation of every stage on all ranks that must leave every row where the
// layout says, also inside EP groups; per-link-class traffic equal to the counts matrix. The
// parameters, waivers and names are in test_moe_params.cpp. Pure C++, no MPI.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "collbench/coll/moe_plan.hpp"
#include "collbench/core/error.hpp"
#include "collbench/core/placement.hpp"
#include "collbench/model/traffic.hpp"
#include "collbench/workload/counts.hpp"

using namespace collbench;
using namespace collbench::coll;
using workload::CountsMatrix;

namespace {

// Rows [src][dst]; ranks 0, 1 form domain 0 and ranks 2, 3 domain 1.
//          to: 0  1  2  3
const CountsMatrix kCounts{4,
                           {1, 2, 0, 3,    // from 0
                            4, 0, 1, 2,    // from 1
                            0, 3, 2, 1,    // from 2
                            2, 1, 4, 0}};  // from 3
constexpr std::int64_t kDispatchRow = 8;   // 2 units of 4 B
constexpr std::int64_t kCombineRow = 12;   // 3 units

Placement two_by_two() {
  return placement_from_sizes(4, {2, 2});
}

using Sizes = std::vector<std::size_t>;

void expect_stage(const ExchangeStage& s, ExchangeStage::Level level, bool from_recv, std::uint64_t send_region,
                  std::uint64_t recv_region, const Sizes& send_counts, const Sizes& send_displs,
                  const Sizes& recv_counts, const Sizes& recv_displs) {
  EXPECT_EQ(s.level, level);
  EXPECT_EQ(s.send_from_recv, from_recv);
  EXPECT_EQ(s.send_region, send_region);
  EXPECT_EQ(s.recv_region, recv_region);
  EXPECT_EQ(s.send_counts, send_counts);
  EXPECT_EQ(s.send_displs, send_displs);
  EXPECT_EQ(s.recv_counts, recv_counts);
  EXPECT_EQ(s.recv_displs, recv_displs);
}

struct BlockExpect {
  int src, dst;
  std::int64_t rows;
  std::uint64_t offset;
};
void expect_blocks(const std::vector<RowBlock>& got, bool combine, const std::vector<BlockExpect>& want) {
  ASSERT_EQ(got.size(), want.size());
  for (std::size_t i = 0; i < want.size(); ++i) {
    SCOPED_TRACE(i);
    EXPECT_EQ(got[i].combine, combine);
    EXPECT_EQ(got[i].src_rank_idx, want[i].src);
    EXPECT_EQ(got[i].dst_rank_idx, want[i].dst);
    EXPECT_EQ(got[i].rows, want[i].rows);
    EXPECT_EQ(got[i].offset, want[i].offset);
  }
}

// ---------------------------------------------------------------------------------------------
// Hand-computed layouts (offsets in bytes, counts and displacements in 4-byte units).

TEST(MoeLayout, FlatDispatchOfRank1) {
  const auto L = moe_layout(kCounts, kDispatchRow, kCombineRow, MoeOp::dispatch, MoeAlgo::flat, 1, two_by_two());
  EXPECT_TRUE(L.has_counts);
  EXPECT_EQ(L.counts_bytes, 32u);  // 4 x int64 at the start of both buffers
  // Send: rows for ranks 0..3 = 4, 0, 1, 2 rows of 8 B after the counts.
  expect_blocks(L.dispatch.send_blocks, false, {{1, 0, 4, 32}, {1, 1, 0, 64}, {1, 2, 1, 64}, {1, 3, 2, 72}});
  // Final: rows from ranks 0..3 = column 1 = 2, 0, 3, 1 rows, in source order.
  expect_blocks(L.dispatch.final_blocks, false, {{0, 1, 2, 32}, {1, 1, 0, 48}, {2, 1, 3, 48}, {3, 1, 1, 72}});
  EXPECT_TRUE(L.dispatch.staging_blocks.empty());
  ASSERT_EQ(L.dispatch.stages.size(), 1u);
  expect_stage(L.dispatch.stages[0], ExchangeStage::Level::comm, false, 32, 32, {8, 0, 2, 4}, {0, 8, 8, 10},
               {4, 0, 6, 2}, {0, 4, 4, 10});
  EXPECT_EQ(L.send_bytes, 88u);
  EXPECT_EQ(L.recv_bytes, 80u);
  EXPECT_TRUE(L.combine.stages.empty());
}

// EP groups of 2 ({0, 1} and {2, 3}): every row stays inside its group.
//                  to: 0  1  2  3
const CountsMatrix kGrouped{4,
                            {1, 2, 0, 0,    // from 0
                             4, 0, 0, 0,    // from 1
                             0, 0, 2, 1,    // from 2
                             0, 0, 4, 3}};  // from 3

TEST(MoeLayout, ConfinedGroupNeedsEveryRowInsideItsBlock) {
  EXPECT_EQ(confined_group(kGrouped, 2), 2);
  EXPECT_EQ(confined_group(kGrouped, 1), 0);  // 1 -> 0 and 2 -> 3 leave blocks of one
  EXPECT_EQ(confined_group(kGrouped, 4), 0);  // the whole communicator: nothing to confine
  EXPECT_EQ(confined_group(kGrouped, 3), 0);  // does not divide 4
  EXPECT_EQ(confined_group(kCounts, 2), 0);   // 0 -> 3 crosses the groups
}

TEST(MoeLayout, FlatLayoutInsideAnEpGroupKeepsItsOffsetsAndNamesTheGroup) {
  const auto whole = moe_layout(kGrouped, kDispatchRow, kCombineRow, MoeOp::roundtrip, MoeAlgo::flat, 3, two_by_two());
  const auto group =
      moe_layout(kGrouped, kDispatchRow, kCombineRow, MoeOp::roundtrip, MoeAlgo::flat, 3, two_by_two(), 2);
  EXPECT_EQ(whole.group_size, 0);
  EXPECT_EQ(group.group_size, 2);
  EXPECT_EQ(group.group_first, 2);  // rank 3 is in the block {2, 3}
  EXPECT_EQ(group.send_bytes, whole.send_bytes);
  EXPECT_EQ(group.recv_bytes, whole.recv_bytes);
  ASSERT_EQ(group.dispatch.stages.size(), 1u);
  ASSERT_EQ(group.combine.stages.size(), 1u);
  for (const auto* st : {&group.dispatch.stages[0], &group.combine.stages[0]}) {
    EXPECT_EQ(st->group_first, 2);
    EXPECT_EQ(st->group_size, 2);
  }
  // Rank 3 sends 4 rows to 2 and 3 rows to itself (8 B rows: 8 and 6 units), nothing outside.
  expect_stage(group.dispatch.stages[0], ExchangeStage::Level::comm, false, 32, 32, {0, 0, 8, 6}, {0, 0, 0, 8},
               {0, 0, 2, 6}, {0, 0, 0, 2});
  // The hierarchical layout: the group is domain 1, so one domain stage (to domain 1) and the
  // cross stage among the group's one domain (index 1 on the cross communicator).
  const auto hier =
      moe_layout(kGrouped, kDispatchRow, kCombineRow, MoeOp::dispatch, MoeAlgo::hierarchical, 3, two_by_two(), 2);
  EXPECT_EQ(hier.group_size, 2);
  EXPECT_EQ(hier.group_first, 2);
  ASSERT_EQ(hier.dispatch.stages.size(), 2u);
  EXPECT_EQ(hier.dispatch.stages[0].level, ExchangeStage::Level::domain);
  EXPECT_EQ(hier.dispatch.stages[0].group_size, 0);
  EXPECT_EQ(hier.dispatch.stages[1].level, ExchangeStage::Level::cross);
  EXPECT_EQ(hier.dispatch.stages[1].group_first, 1);
  EXPECT_EQ(hier.dispatch.stages[1].group_size, 1);
  // A group that is not whole domains (2 ranks in domains of 4) keeps the exchange over all.
  const auto split = moe_layout(kGrouped, kDispatchRow, kCombineRow, MoeOp::dispatch, MoeAlgo::hierarchical, 3,
                                placement_from_sizes(4, {4}), 2);
  EXPECT_EQ(split.group_size, 0);
  for (const auto& st : split.dispatch.stages) EXPECT_EQ(st.group_size, 0);
}

TEST(MoeLayout, FlatCombineOfRank1) {
  const auto L = moe_layout(kCounts, kDispatchRow, kCombineRow, MoeOp::combine, MoeAlgo::flat, 1, two_by_two());
  EXPECT_FALSE(L.has_counts);
  EXPECT_EQ(L.counts_bytes, 0u);
  // Send: rank 1's outputs for the tokens of ranks 0..3 (column 1: 2, 0, 3, 1 rows of 12 B).
  expect_blocks(L.combine.send_blocks, true, {{0, 1, 2, 0}, {1, 1, 0, 24}, {2, 1, 3, 24}, {3, 1, 1, 60}});
  // Final: outputs of expert ranks 0..3 for rank 1's tokens (row 1: 4, 0, 1, 2 rows).
  expect_blocks(L.combine.final_blocks, true, {{1, 0, 4, 0}, {1, 1, 0, 48}, {1, 2, 1, 48}, {1, 3, 2, 60}});
  ASSERT_EQ(L.combine.stages.size(), 1u);
  expect_stage(L.combine.stages[0], ExchangeStage::Level::comm, false, 0, 0, {6, 0, 9, 3}, {0, 6, 6, 15}, {12, 0, 3, 6},
               {0, 12, 12, 15});
  EXPECT_EQ(L.send_bytes, 72u);
  EXPECT_EQ(L.recv_bytes, 84u);
  EXPECT_TRUE(L.dispatch.stages.empty());
}

TEST(MoeLayout, FlatRoundtripPutsCombineAfterDispatch) {
  const auto L = moe_layout(kCounts, kDispatchRow, kCombineRow, MoeOp::roundtrip, MoeAlgo::flat, 1, two_by_two());
  EXPECT_TRUE(L.has_counts);
  ASSERT_EQ(L.dispatch.stages.size(), 1u);
  ASSERT_EQ(L.combine.stages.size(), 1u);
  // Combine regions start where the dispatch regions end (send 88, recv 80).
  EXPECT_EQ(L.combine.stages[0].send_region, 88u);
  EXPECT_EQ(L.combine.stages[0].recv_region, 80u);
  expect_blocks(L.combine.send_blocks, true, {{0, 1, 2, 88}, {1, 1, 0, 112}, {2, 1, 3, 112}, {3, 1, 1, 148}});
  expect_blocks(L.combine.final_blocks, true, {{1, 0, 4, 80}, {1, 1, 0, 128}, {1, 2, 1, 128}, {1, 3, 2, 140}});
  EXPECT_EQ(L.send_bytes, 160u);
  EXPECT_EQ(L.recv_bytes, 164u);
}

TEST(MoeLayout, HierarchicalDispatchOfRank1) {
  // Rank 1 = (domain 0, local 1). Stage 1 per destination domain inside domain 0; stage 2
  // across domains between ranks 1 and 3.
  const auto L =
      moe_layout(kCounts, kDispatchRow, kCombineRow, MoeOp::dispatch, MoeAlgo::hierarchical, 1, two_by_two());
  expect_blocks(L.dispatch.send_blocks, false, {{1, 0, 4, 32}, {1, 1, 0, 64}, {1, 2, 1, 64}, {1, 3, 2, 72}});
  expect_blocks(L.dispatch.final_blocks, false, {{0, 1, 2, 32}, {1, 1, 0, 48}, {2, 1, 3, 48}, {3, 1, 1, 72}});
  // Staging [dest domain][source local]: rows of ranks 0, 1 for rank 1 (domain 0, local 1),
  // then for rank 3 (domain 1, local 1).
  expect_blocks(L.dispatch.staging_blocks, false, {{0, 1, 2, 80}, {1, 1, 0, 96}, {0, 3, 3, 96}, {1, 3, 2, 120}});
  ASSERT_EQ(L.dispatch.stages.size(), 3u);
  using Lv = ExchangeStage::Level;
  // To domain 0: send c[1][0] = 4 rows to local 0, c[1][1] = 0 to myself; receive c[0][1] = 2
  // rows from local 0 (bound for rank 1) and c[1][1] = 0 from myself.
  expect_stage(L.dispatch.stages[0], Lv::domain, false, 32, 80, {8, 0}, {0, 8}, {4, 0}, {0, 4});
  // To domain 1: send c[1][2] = 1, c[1][3] = 2; receive the rows of ranks 0, 1 for rank 3.
  expect_stage(L.dispatch.stages[1], Lv::domain, false, 32, 80, {2, 4}, {8, 10}, {6, 4}, {4, 10});
  // Across: 16 B staged for domain 0 (a self copy), 40 B for domain 1; receive 16 B from
  // domain 0 (ranks 0, 1) and 32 B from domain 1 (ranks 2, 3).
  expect_stage(L.dispatch.stages[2], Lv::cross, true, 80, 32, {4, 10}, {0, 4}, {4, 8}, {0, 4});
  EXPECT_EQ(L.send_bytes, 88u);
  EXPECT_EQ(L.recv_bytes, 136u);
}

TEST(MoeLayout, HierarchicalCombineOfRank2) {
  // Rank 2 = (domain 1, local 0): returns outputs across domains to the forwarder with local
  // index 0 (ranks 0 and 2), which scatters them inside its domain.
  const auto L = moe_layout(kCounts, kDispatchRow, kCombineRow, MoeOp::combine, MoeAlgo::hierarchical, 2, two_by_two());
  EXPECT_FALSE(L.has_counts);
  // Send: my outputs for sources 0..3 (column 2: 0, 1, 2, 4 rows of 12 B).
  expect_blocks(L.combine.send_blocks, true, {{0, 2, 0, 0}, {1, 2, 1, 0}, {2, 2, 2, 12}, {3, 2, 4, 36}});
  // Final: outputs of expert ranks 0..3 for my tokens (row 2: 0, 3, 2, 1 rows).
  expect_blocks(L.combine.final_blocks, true, {{2, 0, 0, 0}, {2, 1, 3, 0}, {2, 2, 2, 36}, {2, 3, 1, 60}});
  // Staging [expert domain][source local]: outputs of rank 0 for ranks 2, 3, then of rank 2.
  expect_blocks(L.combine.staging_blocks, true, {{2, 0, 0, 72}, {3, 0, 2, 72}, {2, 2, 2, 96}, {3, 2, 4, 120}});
  ASSERT_EQ(L.combine.stages.size(), 3u);
  using Lv = ExchangeStage::Level;
  expect_stage(L.combine.stages[0], Lv::cross, false, 0, 72, {3, 18}, {0, 3}, {6, 18}, {0, 6});
  expect_stage(L.combine.stages[1], Lv::domain, true, 72, 0, {0, 6}, {0, 0}, {0, 9}, {0, 0});
  expect_stage(L.combine.stages[2], Lv::domain, true, 72, 0, {6, 12}, {6, 12}, {6, 3}, {9, 15});
  EXPECT_EQ(L.send_bytes, 84u);
  EXPECT_EQ(L.recv_bytes, 168u);
}

TEST(MoeLayout, HierarchicalNeedsEqualDomains) {
  try {
    (void)moe_layout(kCounts, kDispatchRow, kCombineRow, MoeOp::dispatch, MoeAlgo::hierarchical, 0,
                     placement_from_sizes(4, {3, 1}));
    ADD_FAILURE() << "uneven domains accepted";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("3,1"), std::string::npos) << e.what();
  }
  EXPECT_THROW((void)moe_layout(kCounts, 8, 12, MoeOp::dispatch, MoeAlgo::flat, 4, two_by_two()), InputError);
}

// ---------------------------------------------------------------------------------------------
// A byte-level simulation of every stage on all ranks at once: each 4-byte unit of a send block
// carries a tag of (direction, src, dst, row, unit); after the stages, every final and staging
// block of every rank must hold exactly the tags of its rows.

std::uint32_t tag(bool combine, int src, int dst, std::int64_t row, std::int64_t unit) {
  return static_cast<std::uint32_t>((combine ? 1u << 31 : 0u) | (static_cast<std::uint32_t>(src) << 24) |
                                    (static_cast<std::uint32_t>(dst) << 16) | (static_cast<std::uint32_t>(row) << 4) |
                                    static_cast<std::uint32_t>(unit));
}

struct RankBuffers {
  std::vector<std::uint32_t> send, recv;
};

// Global rank of peer index `peer` of rank r on a stage's level.
int peer_rank(ExchangeStage::Level level, int r, int peer, const Placement& p) {
  switch (level) {
    case ExchangeStage::Level::comm:
      return peer;
    case ExchangeStage::Level::domain:
      return p.domain_offset(p.domain_of(r)) + peer;
    case ExchangeStage::Level::cross:
      return p.domain_offset(peer) + (r - p.domain_offset(p.domain_of(r)));
  }
  return -1;
}
int my_index(ExchangeStage::Level level, int r, const Placement& p) {
  switch (level) {
    case ExchangeStage::Level::comm:
      return r;
    case ExchangeStage::Level::domain:
      return r - p.domain_offset(p.domain_of(r));
    case ExchangeStage::Level::cross:
      return p.domain_of(r);
  }
  return -1;
}

// A stage confined to a block of its communicator moves nothing outside the block, so running it
// on the block's communicator with the block's entries is the same exchange.
void expect_confined(const ExchangeStage& st) {
  if (st.group_size == 0) return;
  for (std::size_t i = 0; i < st.send_counts.size(); ++i) {
    const bool inside = static_cast<int>(i) >= st.group_first && static_cast<int>(i) < st.group_first + st.group_size;
    if (inside) continue;
    EXPECT_EQ(st.send_counts[i], 0u) << "entry " << i;
    EXPECT_EQ(st.recv_counts[i], 0u) << "entry " << i;
  }
}

void simulate_and_check(const CountsMatrix& counts, MoeOp op, MoeAlgo algo, const Placement& p, int group_size = 0) {
  const int n = counts.num_ranks;
  std::vector<MoeLayout> layouts;
  std::vector<RankBuffers> bufs(static_cast<std::size_t>(n));
  for (int r = 0; r < n; ++r) {
    layouts.push_back(moe_layout(counts, kDispatchRow, kCombineRow, op, algo, r, p, group_size));
    for (const auto* plan : {&layouts.back().dispatch, &layouts.back().combine}) {
      for (const auto& st : plan->stages) expect_confined(st);
    }
  }
  const auto unit_of = [](std::uint64_t offset) { return static_cast<std::size_t>(offset / 4); };
  for (int r = 0; r < n; ++r) {
    auto& b = bufs[static_cast<std::size_t>(r)];
    const auto& L = layouts[static_cast<std::size_t>(r)];
    b.send.assign(L.send_bytes / 4, 0xFFFFFFFFu);
    b.recv.assign(L.recv_bytes / 4, 0xEEEEEEEEu);
    for (const auto* plan : {&L.dispatch, &L.combine}) {
      for (const auto& blk : plan->send_blocks) {
        const std::int64_t units = (blk.combine ? kCombineRow : kDispatchRow) / 4;
        for (std::int64_t j = 0; j < blk.rows; ++j) {
          for (std::int64_t u = 0; u < units; ++u) {
            b.send[unit_of(blk.offset) + static_cast<std::size_t>(j * units + u)] =
                tag(blk.combine, blk.src_rank_idx, blk.dst_rank_idx, j, u);
          }
        }
      }
    }
  }
  // Run the stages in order: dispatch, then combine; stage k of every rank together.
  for (const bool combine : {false, true}) {
    const auto& first = combine ? layouts[0].combine : layouts[0].dispatch;
    for (std::size_t k = 0; k < first.stages.size(); ++k) {
      std::vector<RankBuffers> before = bufs;  // all sends read the state before the stage
      for (int r = 0; r < n; ++r) {
        const auto& st =
            (combine ? layouts[static_cast<std::size_t>(r)].combine : layouts[static_cast<std::size_t>(r)].dispatch)
                .stages[k];
        const auto& src_buf =
            st.send_from_recv ? before[static_cast<std::size_t>(r)].recv : before[static_cast<std::size_t>(r)].send;
        for (std::size_t peer = 0; peer < st.send_counts.size(); ++peer) {
          const int to = peer_rank(st.level, r, static_cast<int>(peer), p);
          const auto& to_stage =
              (combine ? layouts[static_cast<std::size_t>(to)].combine : layouts[static_cast<std::size_t>(to)].dispatch)
                  .stages[k];
          ASSERT_EQ(to_stage.level, st.level);
          const auto me = static_cast<std::size_t>(my_index(st.level, r, p));
          // Both sides agree on how much travels.
          ASSERT_EQ(st.send_counts[peer], to_stage.recv_counts[me]) << "stage " << k << " " << r << "->" << to;
          for (std::size_t u = 0; u < st.send_counts[peer]; ++u) {
            bufs[static_cast<std::size_t>(to)].recv.at(unit_of(to_stage.recv_region) + to_stage.recv_displs[me] + u) =
                src_buf.at(unit_of(st.send_region) + st.send_displs[peer] + u);
          }
        }
      }
    }
  }
  std::int64_t rows_checked = 0;
  for (int r = 0; r < n; ++r) {
    const auto& L = layouts[static_cast<std::size_t>(r)];
    const auto& recv = bufs[static_cast<std::size_t>(r)].recv;
    for (const auto* plan : {&L.dispatch, &L.combine}) {
      for (const auto* blocks : {&plan->final_blocks, &plan->staging_blocks}) {
        for (const auto& blk : *blocks) {
          const std::int64_t units = (blk.combine ? kCombineRow : kDispatchRow) / 4;
          for (std::int64_t j = 0; j < blk.rows; ++j) {
            for (std::int64_t u = 0; u < units; ++u) {
              ASSERT_EQ(recv.at(unit_of(blk.offset) + static_cast<std::size_t>(j * units + u)),
                        tag(blk.combine, blk.src_rank_idx, blk.dst_rank_idx, j, u))
                  << "rank " << r << " block " << blk.src_rank_idx << "->" << blk.dst_rank_idx << " row " << j;
            }
          }
          rows_checked += blk.rows;
        }
      }
    }
  }
  // Every pair's rows arrive at its final place once per direction.
  const std::int64_t total = counts.total_rows();
  const std::int64_t finals = (op != MoeOp::combine ? total : 0) + (op != MoeOp::dispatch ? total : 0);
  EXPECT_GE(rows_checked, finals);
}

TEST(MoeLayout, SimulatedExchangesDeliverEveryRow) {
  for (const MoeOp op : {MoeOp::dispatch, MoeOp::combine, MoeOp::roundtrip}) {
    for (const MoeAlgo algo : {MoeAlgo::flat, MoeAlgo::hierarchical}) {
      SCOPED_TRACE(std::string(to_string(op)) + (algo == MoeAlgo::flat ? " flat" : " hierarchical"));
      simulate_and_check(kCounts, op, algo, two_by_two());
      simulate_and_check(kCounts, op, algo, placement_from_sizes(4, {4}));           // one domain
      simulate_and_check(kCounts, op, algo, placement_from_sizes(4, {1, 1, 1, 1}));  // one rank per domain
    }
  }
  // 6 ranks in 3 domains of 2, a denser matrix with empty pairs.
  CountsMatrix six{6, {}};
  for (int s = 0; s < 6; ++s) {
    for (int d = 0; d < 6; ++d) six.rows.push_back((s * 7 + d * 3) % 5);
  }
  simulate_and_check(six, MoeOp::roundtrip, MoeAlgo::hierarchical, placement_from_sizes(6, {2, 2, 2}));
  simulate_and_check(six, MoeOp::roundtrip, MoeAlgo::flat, placement_from_sizes(6, {2, 2, 2}));
}

// 8 ranks in 4 domains of 2, EP groups of 4 (domains {0, 1} and {2, 3}): every row stays inside
// its group.
CountsMatrix grouped_eight() {
  CountsMatrix c{8, {}};
  for (int s = 0; s < 8; ++s) {
    for (int d = 0; d < 8; ++d) c.rows.push_back(s / 4 == d / 4 ? (s * 5 + d * 3) % 4 + (s == d ? 0 : 1) : 0);
  }
  return c;
}

TEST(MoeLayout, HierarchicalInsideAnEpGroupSkipsTheOtherDomains) {
  const CountsMatrix c = grouped_eight();
  ASSERT_EQ(confined_group(c, 4), 4);
  const Placement p = placement_from_sizes(8, {2, 2, 2, 2});
  // Rank 5 = (domain 2, local 1): its group is ranks 4-7, domains 2 and 3.
  const auto L = moe_layout(c, kDispatchRow, kCombineRow, MoeOp::roundtrip, MoeAlgo::hierarchical, 5, p, 4);
  EXPECT_EQ(L.group_first, 4);
  EXPECT_EQ(L.group_size, 4);
  using Lv = ExchangeStage::Level;
  // Dispatch: to domain 2, to domain 3, across; combine: across, from domain 2, from domain 3.
  ASSERT_EQ(L.dispatch.stages.size(), 3u);
  ASSERT_EQ(L.combine.stages.size(), 3u);
  const auto whole = moe_layout(c, kDispatchRow, kCombineRow, MoeOp::roundtrip, MoeAlgo::hierarchical, 5, p);
  ASSERT_EQ(whole.dispatch.stages.size(), 5u);  // one stage per domain, then across
  EXPECT_EQ(L.send_bytes, whole.send_bytes);
  EXPECT_EQ(L.recv_bytes, whole.recv_bytes);
  for (int k = 0; k < 2; ++k) {
    // The group's domain stages are the whole layout's stages 2 and 3, unchanged.
    const auto& st = L.dispatch.stages[static_cast<std::size_t>(k)];
    const auto& ref = whole.dispatch.stages[static_cast<std::size_t>(k + 2)];
    EXPECT_EQ(st.level, Lv::domain);
    EXPECT_EQ(st.send_counts, ref.send_counts);
    EXPECT_EQ(st.recv_displs, ref.recv_displs);
  }
  for (const auto* st : {&L.dispatch.stages[2], &L.combine.stages[0]}) {
    EXPECT_EQ(st->level, Lv::cross);
    EXPECT_EQ(st->group_first, 2);  // cross-communicator indices are domains
    EXPECT_EQ(st->group_size, 2);
  }
  for (const MoeOp op : {MoeOp::dispatch, MoeOp::combine, MoeOp::roundtrip}) {
    SCOPED_TRACE(std::string(to_string(op)));
    simulate_and_check(c, op, MoeAlgo::hierarchical, p, 4);
    simulate_and_check(c, op, MoeAlgo::flat, p, 4);
    simulate_and_check(c, op, MoeAlgo::hierarchical, placement_from_sizes(8, {4, 4}), 4);  // one domain each
  }
}

// ---------------------------------------------------------------------------------------------
// Traffic per link class.

TEST(MoeTraffic, PerClassBytesEqualTheCountsMatrix) {
  const Placement p = two_by_two();
  // Dispatch: bytes[s][d] = rows x 8 B. Rank 0 sends c[0][1] = 2 rows in its domain and
  // c[0][2] + c[0][3] = 3 rows off it; it receives c[1][0] = 4 in, c[2][0] + c[3][0] = 2 off.
  const auto d = model::summarize_traffic(moe_traffic(kCounts, kDispatchRow, kCombineRow, MoeOp::dispatch), p);
  EXPECT_EQ(d.per_rank[0].send_in_domain, 16u);
  EXPECT_EQ(d.per_rank[0].send_off_domain, 24u);
  EXPECT_EQ(d.per_rank[0].recv_in_domain, 32u);
  EXPECT_EQ(d.per_rank[0].recv_off_domain, 16u);
  EXPECT_EQ(d.per_rank[0].send_total, 48u);  // 6 rows, 1 of them to itself
  // In-domain pairs (0,1) (1,0) (2,3) (3,2): 2 + 4 + 1 + 4 = 11 rows; off-domain: 0+3+1+2+0+3+2+1 = 12.
  EXPECT_EQ(d.bytes_in_domain, 11u * 8);
  EXPECT_EQ(d.bytes_off_domain, 12u * 8);
  EXPECT_EQ(d.bytes_logical_total, 26u * 8);  // 23 + 3 self rows (c[0][0] = 1, c[2][2] = 2)
  // Max over ranks of send or receive: rank 3 sends 7 rows, rank 2 receives 7 -> 56 B.
  EXPECT_EQ(d.bytes_max_rank, 56u);

  // Combine travels the transpose at 12 B per row: rank 0 receives what it sent as dispatch.
  const auto c = model::summarize_traffic(moe_traffic(kCounts, kDispatchRow, kCombineRow, MoeOp::combine), p);
  EXPECT_EQ(c.per_rank[0].recv_in_domain, 2u * 12);
  EXPECT_EQ(c.per_rank[0].recv_off_domain, 3u * 12);
  EXPECT_EQ(c.per_rank[0].send_in_domain, 4u * 12);
  EXPECT_EQ(c.bytes_off_domain, 12u * 12);

  // Roundtrip = both; and for every rank and class, the matrix rows times the row size.
  const auto rt = model::summarize_traffic(moe_traffic(kCounts, kDispatchRow, kCombineRow, MoeOp::roundtrip), p);
  const auto rows = workload::link_class_rows(kCounts, p);
  for (std::size_t r = 0; r < 4; ++r) {
    SCOPED_TRACE(r);
    const auto u = [](std::int64_t v) { return static_cast<std::uint64_t>(v); };
    EXPECT_EQ(d.per_rank[r].send_in_domain, u(rows.send_in_domain[r] * kDispatchRow));
    EXPECT_EQ(d.per_rank[r].recv_off_domain, u(rows.recv_off_domain[r] * kDispatchRow));
    EXPECT_EQ(c.per_rank[r].recv_in_domain, u(rows.send_in_domain[r] * kCombineRow));
    EXPECT_EQ(c.per_rank[r].send_off_domain, u(rows.recv_off_domain[r] * kCombineRow));
    EXPECT_EQ(rt.per_rank[r].send_off_domain,
              u(rows.send_off_domain[r] * kDispatchRow + rows.recv_off_domain[r] * kCombineRow));
  }
}

// What the hierarchical stages put on each link class: the cross-domain stage carries exactly
// the off-domain rows of the matrix (self copies excluded), and the domain stages carry the rows
// whose source and destination local indices differ.
TEST(MoeTraffic, HierarchicalStagesMoveTheMatrixOffDomainBytesOnce) {
  const Placement p = two_by_two();
  std::uint64_t cross = 0, domain = 0;
  for (int r = 0; r < 4; ++r) {
    const auto L = moe_layout(kCounts, kDispatchRow, kCombineRow, MoeOp::dispatch, MoeAlgo::hierarchical, r, p);
    for (const auto& st : L.dispatch.stages) {
      for (std::size_t peer = 0; peer < st.send_counts.size(); ++peer) {
        const bool self = static_cast<int>(peer) == my_index(st.level, r, p);
        if (self) continue;
        (st.level == ExchangeStage::Level::cross ? cross : domain) += st.send_counts[peer] * 4;
      }
    }
  }
  const auto d = model::summarize_traffic(moe_traffic(kCounts, kDispatchRow, kCombineRow, MoeOp::dispatch), p);
  EXPECT_EQ(cross, d.bytes_off_domain);
  // Rows with local(src) != local(dst): pairs (0,1) 2, (0,3) 3, (1,0) 4, (1,2) 1, (2,1) 3,
  // (2,3) 1, (3,0) 2, (3,2) 4 = 20 rows.
  EXPECT_EQ(domain, 20u * 8);
}

}  // namespace
