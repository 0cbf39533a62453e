// The device barrier's schedule (backend/nccl/nccl_host.hpp dissemination_rounds), which the NCCL
// backend enqueues as one-element sends and receives on the world communicator before every timed
// sample: checked on the CPU for every world size from 1 to 1,024 by running the rounds on sets of
// "ranks heard from".
#include <gtest/gtest.h>

#include <algorithm>
#include <bitset>
#include <cstdint>
#include <vector>

#include "collbench/backend/nccl/nccl_host.hpp"

namespace {

using collbench::backend::nccl::BarrierRound;
using collbench::backend::nccl::dissemination_rounds;

constexpr int kMaxRanks = 1024;
using Heard = std::bitset<kMaxRanks>;

int ceil_log2(int n) {
  int rounds = 0;
  while ((1 << rounds) < n) ++rounds;
  return rounds;
}

// Every rank's rounds, checked to pair up (r sends to s in round k exactly when s receives from r
// in round k), then run: in each round a rank adds what its sender had heard before the round.
// Returns what each rank has heard after `limit` rounds (all by default).
std::vector<Heard> run_barrier(int n, std::size_t limit = SIZE_MAX) {
  std::vector<std::vector<BarrierRound>> rounds(static_cast<std::size_t>(n));
  for (int r = 0; r < n; ++r) rounds[static_cast<std::size_t>(r)] = dissemination_rounds(r, n);
  std::vector<Heard> heard(static_cast<std::size_t>(n));
  for (int r = 0; r < n; ++r) heard[static_cast<std::size_t>(r)].set(static_cast<std::size_t>(r));
  const std::size_t count = std::min(rounds[0].size(), limit);
  for (std::size_t k = 0; k < count; ++k) {
    std::vector<Heard> next = heard;
    for (int r = 0; r < n; ++r) {
      const BarrierRound& mine = rounds[static_cast<std::size_t>(r)].at(k);
      EXPECT_EQ(rounds[static_cast<std::size_t>(mine.send_to)].at(k).recv_from, r) << "n " << n << " round " << k;
      next[static_cast<std::size_t>(r)] |= heard[static_cast<std::size_t>(mine.recv_from)];
    }
    heard = next;
  }
  return heard;
}

TEST(DeviceBarrierRounds, EveryRankHearsFromEveryRankInCeilLog2Rounds) {
  for (int n = 1; n <= kMaxRanks; n = n < 80 ? n + 1 : n + 37) {
    ASSERT_EQ(static_cast<int>(dissemination_rounds(0, n).size()), ceil_log2(n)) << n;
    const std::vector<Heard> heard = run_barrier(n);
    for (int r = 0; r < n; ++r)
      ASSERT_EQ(static_cast<int>(heard[static_cast<std::size_t>(r)].count()), n) << n << " " << r;
  }
  for (int n : {512, 1023, 1024}) {
    for (const Heard& h : run_barrier(n)) ASSERT_EQ(static_cast<int>(h.count()), n) << n;
  }
}

// One round fewer would not do: some rank would leave the barrier before hearing from every rank.
TEST(DeviceBarrierRounds, OneRoundLessLeavesARankUnheard) {
  for (int n : {2, 3, 8, 9, 72, 1024}) {
    const std::size_t rounds = dissemination_rounds(0, n).size();
    const std::vector<Heard> heard = run_barrier(n, rounds - 1);
    EXPECT_TRUE(std::any_of(heard.begin(), heard.end(), [n](const Heard& h) {
      return static_cast<int>(h.count()) < n;
    })) << n;
  }
}

TEST(DeviceBarrierRounds, PeersByHand) {
  const std::vector<BarrierRound> r = dissemination_rounds(1, 8);
  ASSERT_EQ(r.size(), 3U);
  EXPECT_EQ(r[0].send_to, 2);
  EXPECT_EQ(r[0].recv_from, 0);
  EXPECT_EQ(r[1].send_to, 3);
  EXPECT_EQ(r[1].recv_from, 7);
  EXPECT_EQ(r[2].send_to, 5);
  EXPECT_EQ(r[2].recv_from, 5);
  EXPECT_TRUE(dissemination_rounds(0, 1).empty());  // one rank: nothing to wait for
  const std::vector<BarrierRound> two = dissemination_rounds(0, 2);
  ASSERT_EQ(two.size(), 1U);
  EXPECT_EQ(two[0].send_to, 1);
  EXPECT_EQ(two[0].recv_from, 1);
}

}  // namespace
