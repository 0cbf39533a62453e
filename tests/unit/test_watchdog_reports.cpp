// The watchdog's reports (issue 20 items 4 and 8): where a rank is (setup, verification, warm-up,
// timed iterations), a rank delayed before the collective, a stop signal, a rank that died.
#include <gtest/gtest.h>

#include <csignal>

#include "collbench/core/error.hpp"
#include "collbench/run/fault.hpp"
#include "collbench/run/signals.hpp"
#include "collbench/run/watchdog.hpp"

using namespace collbench::run;

namespace {
RankPosition pos(int rank, int c, Stage stage, int it, Phase ph) {
  RankPosition p;
  p.rank = rank;
  p.case_index = c;
  p.stage = stage;
  p.iteration = it;
  p.phase = ph;
  p.answered = true;
  p.seconds_in_phase = 4.0;
  return p;
}
}  // namespace

TEST(WatchdogReports, StageTexts) {
  EXPECT_EQ(stage_text(Stage::setup, -1), "setup");
  EXPECT_EQ(stage_text(Stage::verification, -1), "verification");
  EXPECT_EQ(stage_text(Stage::warmup, 2), "warm-up iteration 2");
  EXPECT_EQ(stage_text(Stage::timed, 7), "iteration 7");
  EXPECT_EQ(stage_text(Stage::timed, -1), "setup");  // the runner's at(case, -1, host)
  EXPECT_EQ(where_text(3, "allreduce 8 B float32", Stage::warmup, 0),
            "during case 3 (allreduce 8 B float32) warm-up iteration 0");
  EXPECT_EQ(where_text(-1, "", Stage::setup, -1), "between cases");
}

TEST(WatchdogReports, RankDelayedBeforeTheCollectiveIsNamed) {
  // Rank 1 passed the iteration's barrier but sleeps (an injected delay) before entering.
  const std::vector<RankPosition> p{pos(0, 1, Stage::timed, 2, Phase::waiting),
                                    pos(1, 1, Stage::timed, 2, Phase::delay)};
  EXPECT_EQ(ranks_not_arrived(p), (std::vector<int>{1}));
  EXPECT_EQ(
      watchdog_message(p, 1, "allreduce 64 B float32", 2, {"h0", "h1"}),
      "watchdog: case 1 (allreduce 64 B float32) iteration 2 exceeded the 2 s timeout; ranks that did not arrive: "
      "1 (host h1: injected delay before entering the collective, case 1 iteration 2, 4.0 s); no answer from: "
      "none");
}

TEST(WatchdogReports, StopInWarmUpIsNotIterationMinusOne) {
  // Rank 0 waits in warm-up iteration 1; rank 1 is still in the verification's host work.
  const std::vector<RankPosition> p{pos(0, 4, Stage::warmup, 1, Phase::waiting),
                                    pos(1, 4, Stage::verification, -1, Phase::host)};
  EXPECT_EQ(ranks_not_arrived(p), (std::vector<int>{1}));
  EXPECT_EQ(watchdog_message(p, 4, "alltoall 1024 B float32", 5, {"h0", "h1"}),
            "watchdog: case 4 (alltoall 1024 B float32) warm-up iteration 1 exceeded the 5 s timeout; ranks that did "
            "not arrive: 1 (host h1: host work of the case, case 4 verification, 4.0 s); no answer from: none");
}

TEST(WatchdogReports, TimedIterationIsAheadOfWarmUp) {
  // A warm-up iteration number larger than the timed one is still behind it.
  const std::vector<RankPosition> p{pos(0, 2, Stage::timed, 0, Phase::waiting),
                                    pos(1, 2, Stage::warmup, 9, Phase::waiting)};
  EXPECT_EQ(ranks_not_arrived(p), (std::vector<int>{1}));
}

TEST(WatchdogReports, SignalMessageNamesSignalRankAndCase) {
  EXPECT_EQ(signal_name(SIGINT), "SIGINT");
  EXPECT_EQ(signal_name(SIGTERM), "SIGTERM");
  EXPECT_EQ(signal_name(SIGHUP), "signal 1");
  EXPECT_EQ(
      signal_stop_message(SIGTERM, 1, "h1", 4242, "during case 3 (allreduce 8 B float32) iteration 12"),
      "rank 1 (host h1, pid 4242) received SIGTERM during case 3 (allreduce 8 B float32) iteration 12; stopping "
      "the run (exit 3): every case finished before it stays in the results file, and --resume measures the rest");
  EXPECT_EQ(signal_stop_message(SIGINT, 0, "", 7, ""),
            "rank 0 (pid 7) received SIGINT; stopping the run (exit 3): every case finished before it stays in the "
            "results file, and --resume measures the rest");
}

TEST(WatchdogReports, DeadRankMessage) {
  EXPECT_EQ(
      dead_rank_message(2, "h0", 99, "during case 0 (allreduce 8 B float32) iteration 5"),
      "rank 2 (host h0, pid 99) died (its process is gone) during case 0 (allreduce 8 B float32) iteration 5; the "
      "run cannot go on without it (exit 3): every case finished before it stays in the results file, and "
      "--resume measures the rest");
}

// A subcommand without --resume says what it leaves instead (cli/subcommand.hpp stop_outcome).
TEST(WatchdogReports, StopMessagesSayWhatTheSubcommandLeaves) {
  set_stop_outcome("no report is written");
  EXPECT_EQ(signal_stop_message(SIGTERM, 1, "", 7, "between cases"),
            "rank 1 (pid 7) received SIGTERM between cases; stopping the run (exit 3): no report is written");
  EXPECT_EQ(dead_rank_message(2, "h0", 99, "between cases"),
            "rank 2 (host h0, pid 99) died (its process is gone) between cases; the run cannot go on without it "
            "(exit 3): no report is written");
  set_stop_outcome(kRunStopOutcome);
  EXPECT_EQ(stop_outcome(), "every case finished before it stays in the results file, and --resume measures the rest");
}

TEST(WatchdogReports, HangInWarmUpIsItsOwnFault) {
  const auto f = FaultPlan::parse("hang:rank=1,case=2,warmup=0");
  EXPECT_TRUE(f.hang_in_warmup(1, 2, 0));
  EXPECT_FALSE(f.hang_in_warmup(1, 2, 1));
  EXPECT_FALSE(f.hang_in_warmup(0, 2, 0));
  EXPECT_FALSE(f.hang(1, 2, 0));  // not in the timed iterations
  try {
    FaultPlan::parse("hang:rank=1,iter=3,warmup=1");
    FAIL();
  } catch (const collbench::InputError& e) {
    EXPECT_STREQ(e.what(),
                 "COLLBENCH_FAULT item 'hang:rank=1,iter=3,warmup=1': iter=I (timed iteration I) and warmup=W (warm-up "
                 "iteration W) exclude each other");
  }
}
