// Which ranks the watchdog names, and its message.
#include <gtest/gtest.h>

#include <algorithm>
#include <vector>

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

// Who reports a passed deadline when rank 0 does not: one backup at a time, each 6 s after the one
// before, so that a lost node or a frozen rank 0 gives one report, not one per surviving rank.
TEST(Watchdog, DeadlineReportersOnOneHost) {
  EXPECT_EQ(deadline_reporters({}, 1), (std::vector<int>{0}));
  EXPECT_EQ(deadline_reporters({}, 4), (std::vector<int>{0, 1, 2, 3}));  // one host: rank order
  EXPECT_EQ(deadline_reporters({0, 0, 0, 0}, 4), (std::vector<int>{0, 1, 2, 3}));
  EXPECT_DOUBLE_EQ(deadline_report_delay_s(0, {}, 4, 6.0), 0.0);
  EXPECT_DOUBLE_EQ(deadline_report_delay_s(1, {}, 4, 6.0), 6.0);  // rank 0 frozen: rank 1, as before
  EXPECT_DOUBLE_EQ(deadline_report_delay_s(2, {}, 4, 6.0), 12.0);
  EXPECT_DOUBLE_EQ(deadline_report_delay_s(3, {}, 4, 6.0), 18.0);  // ranks 0-2 frozen: rank 3, alone
}

TEST(Watchdog, DeadlineReportersCoverALostNodeWithOneRankPerHost) {
  // Three hosts of four (an NVL72 tray or an HGX node per host): rank 0 frozen -> rank 1 at 6 s;
  // rank 0's host lost -> rank 4, the first of the next host, at 12 s; then rank 8 at 18 s; the
  // rest only after every host's first rank.
  const std::vector<int> hosts{0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2};
  EXPECT_EQ(deadline_reporters(hosts, 12), (std::vector<int>{0, 1, 4, 8, 2, 3, 5, 6, 7, 9, 10, 11}));
  EXPECT_DOUBLE_EQ(deadline_report_delay_s(4, hosts, 12, 6.0), 12.0);
  EXPECT_DOUBLE_EQ(deadline_report_delay_s(8, hosts, 12, 6.0), 18.0);
  EXPECT_DOUBLE_EQ(deadline_report_delay_s(5, hosts, 12, 6.0), 36.0);
  // Hosts interleaved (round-robin placement) and one rank per host.
  EXPECT_EQ(deadline_reporters({0, 1, 0, 1}, 4), (std::vector<int>{0, 2, 1, 3}));
  EXPECT_EQ(deadline_reporters({0, 1, 2}, 3), (std::vector<int>{0, 1, 2}));
  // Every rank has exactly one place.
  for (int n : {1, 2, 7, 72, 1024}) {
    std::vector<int> h(static_cast<std::size_t>(n));
    for (int r = 0; r < n; ++r) h[static_cast<std::size_t>(r)] = r / 4;
    auto order = deadline_reporters(h, n);
    std::sort(order.begin(), order.end());
    for (int r = 0; r < n; ++r) ASSERT_EQ(order[static_cast<std::size_t>(r)], r) << n;
  }
}

// A timeout during the run's start: the furthest step names it; a rank at an earlier step or in an
// injected hang did not arrive; the ranks at the furthest step are listed together as ranges (one
// held in that step's own work cannot be told from those waiting for it); ranks past the start
// are left out.
TEST(Watchdog, RunStartMessageNamesTheStepAndTheRanksBehindIt) {
  const auto start = [](int rank, RunStartStep step, Phase ph) {
    RankPosition p = at(rank, kRunStart, static_cast<int>(step), ph);
    p.stage = Stage::setup;
    return p;
  };
  std::vector<RankPosition> p{start(0, RunStartStep::backends, Phase::host),
                              start(1, RunStartStep::memory, Phase::host),
                              start(2, RunStartStep::backends, Phase::host),
                              start(3, RunStartStep::backends, Phase::host),
                              start(4, RunStartStep::backends, Phase::fault),
                              start(5, RunStartStep::backends, Phase::host),
                              at(6, 0, -1, Phase::host),
                              start(7, RunStartStep::backends, Phase::host)};
  p[7].answered = false;
  const std::vector<std::string> hosts{"h0", "h0", "h0", "h0", "h1", "h1", "h1", "h1"};
  EXPECT_EQ(watchdog_message(p, kRunStart, "starting the backends", 60.0, hosts),
            "watchdog: the run's start (starting the backends) exceeded the 60 s timeout; ranks that did not arrive: "
            "1 (host h0: host work, checking sizes against memory, 2.5 s); 4 (host h1: injected hang, "
            "starting the backends, 2.5 s); still starting: 0, 2-3, 5 (a rank held in a GPU, NVML or library call "
            "looks like those waiting for it); no answer from: 7 (host h1)");
  EXPECT_EQ(where_text(kRunStart, "opening the results file", Stage::setup, 2),
            "during the run's start (opening the results file)");
  EXPECT_EQ(run_start_step_text(0), "checking the options");
  EXPECT_EQ(run_start_step_text(4), "?");
}
