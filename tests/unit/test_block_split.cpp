// Comm::block_level's shared logic (backend/block_split.hpp): the block, colour, key and members
// of an EP-group split and when there is none; and the communicator tally the run header's
// `communicators` comes from (backend/comm_tally.hpp). The cache (cached_block) is exercised
// through the MPI backend in tests/mpi (test_collectives_mpi, test_runner_mpi).
#include <gtest/gtest.h>

#include <utility>
#include <vector>

#include "collbench/backend/block_split.hpp"
#include "collbench/backend/comm_tally.hpp"

namespace {

using collbench::backend::block_members;
using collbench::backend::block_split;
using collbench::backend::BlockSplit;
using collbench::backend::CommCounts;
using collbench::backend::CommTally;
using collbench::backend::CommTicket;

}  // namespace

TEST(BlockSplit, ColourIsTheBlockAndKeyTheRank) {
  const BlockSplit s = block_split(8, 5, 4);
  EXPECT_EQ(s.kind, BlockSplit::Kind::split);
  EXPECT_EQ(s.color, 1);
  EXPECT_EQ(s.key, 5);
  EXPECT_EQ(s.first, 4);
  const BlockSplit t = block_split(72, 17, 8);  // EP groups of 8 on an NVL72 rack
  EXPECT_EQ(t.color, 2);
  EXPECT_EQ(t.first, 16);
  const BlockSplit one = block_split(4, 3, 1);
  EXPECT_EQ(one.kind, BlockSplit::Kind::split);
  EXPECT_EQ(one.color, 3);
}

TEST(BlockSplit, WholeCommunicatorIsItselfAndANonDivisorIsNone) {
  EXPECT_EQ(block_split(8, 5, 8).kind, BlockSplit::Kind::self);
  EXPECT_EQ(block_split(8, 5, 3).kind, BlockSplit::Kind::none);
  EXPECT_EQ(block_split(8, 5, 16).kind, BlockSplit::Kind::none);
  EXPECT_EQ(block_split(8, 5, 0).kind, BlockSplit::Kind::none);
  EXPECT_EQ(block_split(8, 5, -2).kind, BlockSplit::Kind::none);
}

TEST(BlockSplit, MembersAreTheBlocksWorldRanksInOrder) {
  // A domain communicator holding world ranks 10..17 (as NCCL's CommOwner records them).
  const std::vector<int> members{10, 11, 12, 13, 14, 15, 16, 17};
  EXPECT_EQ(block_members(members, block_split(8, 5, 4), 4), (std::vector<int>{14, 15, 16, 17}));
  EXPECT_EQ(block_members(members, block_split(8, 2, 2), 2), (std::vector<int>{12, 13}));
  EXPECT_EQ(block_members(members, block_split(8, 2, 8), 8), members);
}

TEST(CommTally, CountsCreatedAndTheMostAliveAtOnce) {
  auto tally = std::make_shared<CommTally>();
  {
    CommTicket world(tally);
    CommTicket domain(tally);
    CommTicket cross(tally);
    EXPECT_EQ(tally->live(), 3);
  }
  EXPECT_EQ(tally->live(), 0);
  {
    CommTicket a(tally);
    CommTicket moved(std::move(a));  // a move is the same communicator
    EXPECT_EQ(tally->live(), 1);
    CommTicket b(tally);
    b = std::move(moved);  // b's own communicator is released
    EXPECT_EQ(tally->live(), 1);
  }
  EXPECT_EQ(tally->counts(), (CommCounts{5, 3}));
  CommTicket uncounted;  // no tally
  EXPECT_EQ(tally->counts(), (CommCounts{5, 3}));
}
