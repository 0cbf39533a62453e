// Locate analysis on synthetic data: the circle-method pairing, per-rank skew (a straggler waits
// least; a system-wide spike leaves the waits even), the pairwise matrix (a slow link, a slow
// rank common to its links, no false alarm on noise), the bisection's half comparison and
// driver (at most ceil(log2 n) runs), and the merged suspects. Pure C++.

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <set>
#include <string>
#include <vector>

#include "collbench/core/error.hpp"
#include "collbench/core/pairing.hpp"
#include "collbench/core/units.hpp"
#include "collbench/locate/locate.hpp"
#include "collbench/report/locate_render.hpp"

namespace {

using collbench::record::CaseRecord;
using namespace collbench::locate;
using namespace collbench::report;

// ---- pairing ----

TEST(LocatePairing, EveryPairMeetsExactlyOnceInDisjointRounds) {
  for (int n = 2; n <= 13; ++n) {
    SCOPED_TRACE(n);
    std::set<std::pair<int, int>> met;
    const int rounds = collbench::round_robin_rounds(n);
    EXPECT_EQ(rounds, n % 2 == 0 ? n - 1 : n);
    for (int r = 0; r < rounds; ++r) {
      std::set<int> busy;
      for (int a = 0; a < n; ++a) {
        const int b = collbench::round_robin_partner(a, r, n);
        ASSERT_GE(b, 0);
        ASSERT_LT(b, n);
        EXPECT_EQ(collbench::round_robin_partner(b, r, n), a) << "pairing must be symmetric";
        if (b == a) continue;  // a bye (odd n only)
        EXPECT_TRUE(busy.insert(a).second);
        if (a < b) {
          EXPECT_TRUE(met.insert({a, b}).second) << a << "-" << b << " met twice";
        }
      }
      EXPECT_EQ(static_cast<int>(collbench::round_robin_pairs(r, n).size()), n / 2);
    }
    EXPECT_EQ(static_cast<int>(met.size()), n * (n - 1) / 2);
  }
  EXPECT_EQ(collbench::round_robin_partner(0, 5, 4), 0);  // no such round: idle
  EXPECT_EQ(collbench::round_robin_rounds(1), 0);
}

// ---- skew ----

CaseRecord skew_record(const std::string& key, double p50, std::vector<double> waits, double p99 = -1) {
  CaseRecord r;
  r.case_key = key;
  r.collective = "allreduce";
  r.dtype = "float32";
  r.bytes = 1u << 20;
  r.scope = "global";
  r.num_ranks = static_cast<int>(waits.size());
  collbench::record::TimeStats t;
  t.p50 = t.mean = p50;
  t.p99 = p99 < 0 ? p50 * 1.1 : p99;
  r.time_us = t;
  r.per_rank = collbench::record::PerRank{std::vector<double>(waits.size(), p50),
                                          std::vector<double>(waits.size(), p50), std::move(waits)};
  return r;
}

TEST(LocateSkew, StragglerWaitsLeastInEveryCase) {
  // Rank 2 arrives ~20 ms late: it waits ~0.3 ms inside, the others ~20 ms.
  const std::vector<CaseRecord> records{skew_record("a", 20600, {20300, 20250, 300, 20400}),
                                        skew_record("b", 32000, {31000, 30900, 11000, 31200})};
  const auto rep = analyse_skew(records);
  ASSERT_EQ(rep.cases.size(), 2u);
  EXPECT_EQ(rep.cases[0].leading, (std::vector<int>{2}));
  EXPECT_NEAR(rep.cases[0].lead_us[2], 20300 - 300, 1e-9);  // median(20300, 20250, 20400) - 300
  ASSERT_EQ(rep.stragglers.size(), 1u);
  EXPECT_EQ(rep.stragglers[0].rank, 2);
  EXPECT_EQ(rep.stragglers[0].cases_leading, 2);
  EXPECT_NE(rep.stragglers[0].evidence.find("slow on its own"), std::string::npos);
}

TEST(LocateSkew, NoiseAndSpikesAreNotStragglers) {
  // Leads below 0.2 of the mean time are noise; one case with a lead of 0.36 is not a pattern;
  // a spike (p99 = 10 x p50) with even waits is an observation about the whole system.
  const std::vector<CaseRecord> records{
      skew_record("quiet", 1000, {900, 950, 930, 850}),
      skew_record("one-off", 1000, {800, 820, 450, 810}),  // rank 2 leads by 0.35 once
      skew_record("spike", 1000, {700, 710, 705, 690}, 10000),
  };
  const auto rep = analyse_skew(records);
  EXPECT_TRUE(rep.stragglers.empty());
  EXPECT_EQ(rep.cases[1].leading, (std::vector<int>{2}));
  // A lead of half the case time does not stand out when the others disagree by as much.
  const auto spread = analyse_skew({skew_record("spread", 1000, {1000, 700, 1100, 500})});
  EXPECT_NEAR(spread.cases[0].lead_us[3], 500, 1e-9);
  EXPECT_TRUE(spread.cases[0].leading.empty());
  EXPECT_TRUE(spread.stragglers.empty());
  EXPECT_TRUE(rep.cases[2].spike);
  EXPECT_FALSE(rep.cases[0].spike);
  bool spike_note = false;
  for (const auto& o : rep.observations) spike_note = spike_note || o.find("system-wide spike in") != std::string::npos;
  EXPECT_TRUE(spike_note);
}

TEST(LocateSkew, DomainScopeComparesRanksWithinTheirDomain) {
  // Two domains at once: domain 1's waits are all longer (its collective is slower), which is no
  // straggler; inside domain 0, rank 1 is late.
  CaseRecord r = skew_record("d", 5000, {4000, 100, 4100, 4000, 9000, 9100, 9050, 9000});
  r.scope = "domain";
  r.domain_sizes = {4, 4};
  r.extra["per_domain"] = nlohmann::json::array(
      {{{"time_us", {{"p50", 4200.0}, {"mean", 4200.0}}}}, {{"time_us", {{"p50", 9200.0}, {"mean", 9200.0}}}}});
  const auto rep = analyse_skew({r});
  ASSERT_EQ(rep.cases.size(), 2u);
  EXPECT_EQ(rep.cases[0].leading, (std::vector<int>{1}));
  EXPECT_TRUE(rep.cases[1].leading.empty());
  EXPECT_EQ(rep.cases[1].first_rank, 4);
  ASSERT_EQ(rep.stragglers.size(), 1u);
  EXPECT_EQ(rep.stragglers[0].rank, 1);
}

TEST(LocateSkew, SkipsRecordsWithoutPerRankData) {
  CaseRecord waived = skew_record("w", 10, {1, 1});
  waived.status = "waived";
  CaseRecord single = skew_record("s", 10, {1});
  const auto rep = analyse_skew({waived, single});
  EXPECT_EQ(rep.cases_skipped, 2);
  EXPECT_TRUE(rep.cases.empty());
}

// ---- pairwise ----

// The rounds of a round-robin sweep in which pair (a,b) takes `slow[a][b]` times as long.
std::vector<PairwiseRound> rounds_with(int n, double base_us, const std::function<double(int, int)>& factor) {
  std::vector<PairwiseRound> out;
  for (int round = 0; round < collbench::round_robin_rounds(n); ++round) {
    CaseRecord r;
    r.collective = "sendrecv";
    r.case_key = "sendrecv|-|float32|mpi|auto|global|outofplace|4194304@round-robin-round" + std::to_string(round) +
                 "|" + std::to_string(n) + "|" + std::to_string(n);
    r.bytes = 4u << 20;
    r.num_ranks = n;
    r.per_rank = collbench::record::PerRank{};
    std::vector<double> p50(static_cast<std::size_t>(n), base_us);
    for (const auto& [a, b] : collbench::round_robin_pairs(round, n)) {
      // A little deterministic noise (+-10%) on every pair.
      const double t = base_us * factor(a, b) * (1.0 + 0.1 * std::sin(a * 7.0 + b * 3.0));
      p50[static_cast<std::size_t>(a)] = p50[static_cast<std::size_t>(b)] = t;
    }
    r.per_rank->mean_us = p50;
    r.extra["per_rank_p50_us"] = p50;
    out.push_back({round, r});
  }
  return out;
}

TEST(LocatePairwise, RoundOfIsReadFromTheCaseKey) {
  const auto rounds = rounds_with(4, 1000, [](int, int) { return 1.0; });
  EXPECT_EQ(pairwise_round_of(rounds[2].record), 2);
  CaseRecord other;
  other.collective = "sendrecv";
  other.case_key = "sendrecv|-|float32|mpi|auto|global|outofplace|4194304|4|4";
  EXPECT_FALSE(pairwise_round_of(other));
}

TEST(LocatePairwise, SlowLinkIsNamedAndItsRanksAreFineElsewhere) {
  const auto m = build_pairwise_matrix(
      rounds_with(4, 5000, [](int a, int b) { return (a == 1 && b == 3) || (a == 3 && b == 1) ? 5.0 : 1.0; }));
  EXPECT_EQ(m.num_ranks, 4);
  EXPECT_TRUE(std::isnan(m.at_gbps(2, 2)));
  EXPECT_NEAR(m.at_gbps(0, 1), m.at_gbps(1, 0), 1e-12);
  const auto rep = analyse_pairwise(m);
  EXPECT_EQ(rep.links_measured, 6);
  ASSERT_EQ(rep.slow_links.size(), 1u);
  EXPECT_EQ(rep.slow_links[0].a, 1);
  EXPECT_EQ(rep.slow_links[0].b, 3);
  EXPECT_TRUE(rep.suspect_ranks.empty());
  ASSERT_EQ(rep.suspect_links.size(), 1u);
  EXPECT_EQ(rep.suspect_links[0].a, 1);
}

TEST(LocatePairwise, RankCommonToItsSlowLinksIsNamedInstead) {
  const auto rep = analyse_pairwise(
      build_pairwise_matrix(rounds_with(6, 5000, [](int a, int b) { return a == 2 || b == 2 ? 4.0 : 1.0; })));
  EXPECT_EQ(rep.slow_links.size(), 5u);
  ASSERT_EQ(rep.suspect_ranks.size(), 1u);
  EXPECT_EQ(rep.suspect_ranks[0].rank, 2);
  EXPECT_EQ(rep.suspect_ranks[0].slow_links, 5);
  EXPECT_EQ(rep.suspect_ranks[0].links, 5);
  EXPECT_TRUE(rep.suspect_links.empty());
}

TEST(LocatePairwise, NoiseAloneFlagsNothingAndTwoRanksCannotCompare) {
  const auto rep = analyse_pairwise(build_pairwise_matrix(rounds_with(8, 5000, [](int, int) { return 1.0; })));
  EXPECT_TRUE(rep.slow_links.empty());
  EXPECT_EQ(rep.links_measured, 28);
  const auto two = analyse_pairwise(build_pairwise_matrix(rounds_with(2, 5000, [](int, int) { return 1.0; })));
  EXPECT_TRUE(two.slow_links.empty());
  ASSERT_FALSE(two.observations.empty());
  EXPECT_NE(two.observations.back().find("3 or more ranks"), std::string::npos);
}

TEST(LocatePairwise, CsvOfTheMatrix) {
  const auto m = build_pairwise_matrix(rounds_with(2, 4194.304, [](int, int) { return 1.0; }));
  // 4 MiB in 4194.304 us x (1 + 0.1 sin 3) = 1 GB/s / 1.01411...
  const double g = 1.0 / (1.0 + 0.1 * std::sin(3.0));
  EXPECT_EQ(pairwise_matrix_csv(m), fmt::format("rank,0,1\n0,,{:.6g}\n1,{:.6g},\n", g, g));
}

TEST(LocatePairwise, MismatchedRoundsAreAnInputError) {
  auto rounds = rounds_with(4, 1000, [](int, int) { return 1.0; });
  rounds[1].record.bytes = 8;
  EXPECT_THROW(build_pairwise_matrix(rounds), collbench::InputError);
}

// ---- bisection ----

HalfTiming half(int first, int count, double p50, double spread = 0.05) {
  HalfTiming h;
  h.first_rank = first;
  h.num_ranks = count;
  h.p50_us = p50;
  h.ci_low_us = p50 * (1 - spread);
  h.ci_high_us = p50 * (1 + spread);
  h.busbw_factor = count >= 2 ? 2.0 * (count - 1) / count : 0.0;
  return h;
}

TEST(LocateBisect, CompareHalvesNeedsRatioAndSeparatedIntervals) {
  EXPECT_EQ(compare_halves(half(0, 2, 1000), half(2, 2, 2000)).order, HalfOrder::second_slower);
  EXPECT_EQ(compare_halves(half(0, 2, 3000), half(2, 2, 1000)).order, HalfOrder::first_slower);
  EXPECT_EQ(compare_halves(half(0, 2, 1000), half(2, 2, 1400)).order, HalfOrder::neither);  // ratio 1.4
  // Ratio 2 but the intervals overlap: too noisy to tell.
  EXPECT_EQ(compare_halves(half(0, 2, 1000, 0.5), half(2, 2, 2000, 0.5)).order, HalfOrder::neither);
  // One rank against several is not comparable.
  const auto mixed = compare_halves(half(0, 1, 10), half(1, 2, 1000));
  EXPECT_EQ(mixed.order, HalfOrder::neither);
  EXPECT_NE(mixed.evidence.find("not comparable"), std::string::npos);
  // Halves of 2 and 3 ranks compare time / busbw factor (1 and 4/3): 1000/1 vs 1300/(4/3) = 975.
  EXPECT_EQ(compare_halves(half(0, 2, 1000), half(2, 3, 1300)).order, HalfOrder::neither);
  const auto step = compare_halves(half(0, 2, 1000), half(2, 3, 4000));
  EXPECT_EQ(step.order, HalfOrder::second_slower);
  EXPECT_NEAR(step.ratio, 3.0, 1e-9);
}

// A measurer over a synthetic cluster: every rank takes `base` us, `slow` ranks take `extra` more;
// `repetitions` identical measurements per split.
HalvesMeasurer synthetic(std::set<int> slow, double base, double extra, int& calls, int repetitions = 1) {
  return [slow, base, extra, &calls, repetitions](int lo, int mid, int hi) {
    ++calls;
    const auto time_of = [&](int a, int b) {
      double t = base;
      for (int r = a; r < b; ++r) {
        if (slow.count(r) > 0) t = base + extra;
      }
      return t;
    };
    return std::vector<std::pair<HalfTiming, HalfTiming>>(
        static_cast<std::size_t>(repetitions),
        std::make_pair(half(lo, mid - lo, time_of(lo, mid)), half(mid, hi - mid, time_of(mid, hi))));
  };
}

TEST(LocateBisect, AStepNeedsTheSameHalfSlowerInEveryRepetition) {
  // Noise on a shared host: one repetition in three makes a random half look 3x slower.
  const auto step = decide_step({{half(0, 2, 1000), half(2, 2, 1050)},
                                 {half(0, 2, 3100), half(2, 2, 1000)},
                                 {half(0, 2, 1000), half(2, 2, 980)}});
  EXPECT_EQ(step.order, HalfOrder::neither);
  EXPECT_EQ(step.repetitions.size(), 3u);
  EXPECT_EQ(step.repetitions[1].order, HalfOrder::first_slower);
  EXPECT_NE(step.evidence.find("not the same half"), std::string::npos) << step.evidence;
  // A slow component: slower every time; the step's ratio is the smallest.
  const auto real = decide_step({{half(0, 2, 1000), half(2, 2, 21000)},
                                 {half(0, 2, 1200), half(2, 2, 20500)},
                                 {half(0, 2, 900), half(2, 2, 4000)}});
  EXPECT_EQ(real.order, HalfOrder::second_slower);
  EXPECT_NEAR(real.ratio, 4000.0 / 900.0, 1e-9);
  EXPECT_NE(real.evidence.find("slower in all 3 repetitions"), std::string::npos) << real.evidence;
  EXPECT_EQ(decide_step({}).order, HalfOrder::neither);
}

TEST(LocateBisect, FindsTheSlowRankInLog2NRuns) {
  for (int n : {2, 4, 8, 16, 64}) {
    for (int bad : {0, n / 2 - 1 < 0 ? 0 : n / 2 - 1, n - 1}) {
      SCOPED_TRACE(fmt::format("n={} bad={}", n, bad));
      int calls = 0;
      const auto rep = bisect(n, synthetic({bad}, 1000, 20000, calls, 3));
      ASSERT_TRUE(rep.rank);
      EXPECT_EQ(*rep.rank, bad);
      EXPECT_TRUE(rep.found);
      EXPECT_EQ(calls, static_cast<int>(std::ceil(std::log2(n))));
    }
  }
}

TEST(LocateBisect, NothingSlowStopsAfterOneRun) {
  int calls = 0;
  const auto rep = bisect(8, synthetic({}, 1000, 0, calls));
  EXPECT_EQ(calls, 1);
  EXPECT_FALSE(rep.found);
  EXPECT_FALSE(rep.rank);
  EXPECT_NE(rep.conclusion.find("no single slow rank"), std::string::npos);
}

TEST(LocateBisect, TwoSlowRanksInDifferentHalvesStopAtTheGroup) {
  int calls = 0;
  // Ranks 1 and 3 of 4 slow: the first split (0-1 vs 2-3) is even; nothing is named.
  const auto even = bisect(4, synthetic({1, 3}, 1000, 20000, calls));
  EXPECT_FALSE(even.found);
  // Ranks 2 and 3 slow: 2-3 is slower, then neither of 2 or 3 alone is slower: the group stays.
  calls = 0;
  const auto pair = bisect(4, synthetic({2, 3}, 1000, 20000, calls));
  EXPECT_TRUE(pair.found);
  EXPECT_FALSE(pair.rank);
  EXPECT_EQ(pair.lo, 2);
  EXPECT_EQ(pair.hi, 4);
  EXPECT_EQ(calls, 2);
}

TEST(LocateBisect, OddSetsStopWhereHalvesAreNotComparable) {
  int calls = 0;
  // 6 ranks: 3 vs 3, then the suspect half of 3 would split 1 vs 2: stop with the three.
  const auto rep = bisect(6, synthetic({4}, 1000, 20000, calls));
  EXPECT_EQ(calls, 1);
  EXPECT_TRUE(rep.found);
  EXPECT_EQ(rep.lo, 3);
  EXPECT_EQ(rep.hi, 6);
  EXPECT_NE(rep.conclusion.find("one rank against several"), std::string::npos);
}

TEST(LocateBisect, DomainSizesAndHalvesFromARecord) {
  EXPECT_EQ(bisect_domain_sizes(8, 0, 4, 8), (std::vector<int>{4, 4}));
  EXPECT_EQ(bisect_domain_sizes(8, 4, 6, 8), (std::vector<int>{4, 2, 2}));
  EXPECT_EQ(bisect_domain_sizes(8, 2, 3, 4), (std::vector<int>{2, 1, 1, 4}));
  CaseRecord r;
  r.collective = "allreduce";
  r.case_key = "k";
  r.extra["per_domain"] = nlohmann::json::array();
  const std::vector<int> sizes{4, 2, 2};
  int first = 0;
  for (int d = 0; d < 3; ++d) {
    const auto size = sizes[static_cast<std::size_t>(d)];
    r.extra["per_domain"].push_back(
        {{"domain", d},
         {"first_rank", first},
         {"num_ranks", size},
         {"time_us", {{"p50", 100.0 * (d + 1)}, {"ci95_low", 90.0}, {"ci95_high", 110.0 * (d + 1)}}}});
    first += size;
  }
  const auto [a, b] = halves_from_record(r, 4, 6, 8);
  EXPECT_EQ(a.first_rank, 4);
  EXPECT_EQ(a.num_ranks, 2);
  EXPECT_DOUBLE_EQ(a.p50_us, 200.0);
  EXPECT_DOUBLE_EQ(b.p50_us, 300.0);
  EXPECT_DOUBLE_EQ(a.busbw_factor, 1.0);                                // all-reduce on 2 ranks
  EXPECT_THROW(halves_from_record(r, 0, 4, 8), collbench::InputError);  // domain 1 is 4..5, not 4..7
}

// ---- merged report ----

TEST(LocateReport, SuspectsMergeMethodsAndNameHosts) {
  LocateReport rep;
  rep.num_ranks = 4;
  rep.hosts = {"n0", "n0", "n1", "n1"};
  rep.skew = analyse_skew({skew_record("a", 20600, {20300, 20250, 300, 20400})});
  rep.pairwise = analyse_pairwise(
      build_pairwise_matrix(rounds_with(4, 5000, [](int a, int b) { return (a == 0 && b == 1) ? 6.0 : 1.0; })));
  int calls = 0;
  rep.bisection = bisect(4, synthetic({2}, 1000, 20000, calls));
  collect_suspects(rep);
  ASSERT_EQ(rep.suspects.size(), 2u);
  EXPECT_EQ(rep.suspects[0].kind, "rank");
  EXPECT_EQ(rep.suspects[0].rank, 2);
  EXPECT_EQ(rep.suspects[0].host, "n1");
  EXPECT_EQ(rep.suspects[0].found_by, "skew, bisection");
  EXPECT_EQ(rep.suspects[0].evidence.size(), 2u);
  EXPECT_EQ(rep.suspects[1].kind, "link");
  EXPECT_EQ(rep.suspects[1].a, 0);
  EXPECT_EQ(rep.suspects[1].b, 1);
  EXPECT_EQ(rep.suspects[1].host, "n0");

  const auto j = locate_to_json(rep);
  EXPECT_EQ(j["schema"], "collbench.locate/1");
  EXPECT_EQ(j["suspects"][0]["rank"], 2);
  EXPECT_EQ(j["suspects"][1]["ranks"], nlohmann::json::array({0, 1}));
  EXPECT_EQ(j["pairwise"]["matrix_gbps"].size(), 4u);
  EXPECT_TRUE(j["pairwise"]["matrix_gbps"][1][1].is_null());
  EXPECT_EQ(j["bisection"]["rank"], 2);
  const std::string text = render_locate_text(rep);
  EXPECT_NE(text.find("SUSPECT rank 2 on n1 (found by skew, bisection)"), std::string::npos) << text;
  EXPECT_NE(text.find("SUSPECT link 0-1 on n0 (found by pairwise)"), std::string::npos) << text;
}

TEST(LocateReport, NothingFound) {
  LocateReport rep;
  rep.num_ranks = 4;
  rep.skew = analyse_skew({skew_record("a", 1000, {900, 950, 930, 850})});
  collect_suspects(rep);
  EXPECT_TRUE(rep.suspects.empty());
  EXPECT_NE(render_locate_text(rep).find("none: nothing found"), std::string::npos);
}

}  // namespace
