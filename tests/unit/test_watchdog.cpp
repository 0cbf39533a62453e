// Which ranks the watchdog names, and its message.
#include <gtest/gtest.h>

#include "collbench/run/watchdog.hpp"

using namespace collbench::run;

namespace {
RankPosition at(int rank, int c, int it, Phase ph, bool answered = true) {
  RankPosition p;
  p.rank = rank;
  p.case_index = c;
  p.iteration = it;
  p.phase = ph;
  p.answered = answered;
  p.seconds_in_phase = 2.5;
  return p;
}
}  // namespace

TEST(Watchdog, RankBehindTheFrontDidNotArrive) {
  // Ranks 0, 2, 3 wait in iteration 3's barrier; rank 1 is still in iteration 2's host work.
  const std::vector<RankPosition> p{at(0, 2, 3, Phase::waiting), at(1, 2, 2, Phase::host), at(2, 2, 3, Phase::waiting),
                                    at(3, 2, 3, Phase::waiting)};
  EXPECT_EQ(ranks_not_arrived(p), (std::vector<int>{1}));
}

TEST(Watchdog, RankAtTheFrontButNotWaitingDidNotArrive) {
  const std::vector<RankPosition> p{at(0, 2, 3, Phase::waiting), at(1, 2, 3, Phase::fault),
                                    at(2, 2, 3, Phase::waiting)};
  EXPECT_EQ(ranks_not_arrived(p), (std::vector<int>{1}));
}

TEST(Watchdog, AllWaitingNamesNobodyAndSilentRanksAreReportedSeparately) {
  const std::vector<RankPosition> p{at(0, 5, 9, Phase::waiting), at(1, 5, 9, Phase::waiting),
                                    at(2, -1, -1, Phase::idle, false)};
  EXPECT_TRUE(ranks_not_arrived(p).empty());
  const auto msg = watchdog_message(p, 5, "alltoall 4096 B float32", 30, {"h0", "h1", "h2"});
  EXPECT_NE(msg.find("case 5 (alltoall 4096 B float32) iteration 9"), std::string::npos) << msg;
  EXPECT_NE(msg.find("30 s timeout"), std::string::npos) << msg;
  EXPECT_NE(msg.find("did not arrive: none"), std::string::npos) << msg;
  EXPECT_NE(msg.find("no answer from: 2 (host h2)"), std::string::npos) << msg;
}

TEST(Watchdog, MessageNamesHostAndPhase) {
  const std::vector<RankPosition> p{at(0, 2, 3, Phase::waiting), at(1, 2, 3, Phase::fault)};
  const auto msg = watchdog_message(p, 2, "allreduce 8 B float32", 3, {"a", "b"});
  EXPECT_NE(msg.find("1 (host b: injected hang, case 2 iteration 3"), std::string::npos) << msg;
}

TEST(Watchdog, DefaultTimeoutGrowsWithBytes) {
  EXPECT_DOUBLE_EQ(default_timeout_s(0), 300.0);
  EXPECT_DOUBLE_EQ(default_timeout_s(8000000000ULL), 380.0);
}
