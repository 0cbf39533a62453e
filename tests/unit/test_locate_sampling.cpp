// locate at scale: a sample of the round-robin rounds (--pair-rounds) still names one slow NIC
// and flags nothing on a healthy two-tier fabric, and the report says what each method cost.
#include <gtest/gtest.h>

#include <cmath>
#include <set>
#include <utility>
#include <vector>

#include "collbench/core/pairing.hpp"
#include "collbench/locate/locate.hpp"
#include "collbench/report/locate_render.hpp"

using namespace collbench;
using namespace collbench::locate;
using namespace collbench::report;

namespace {

// n ranks in domains of `per_domain`: 500 GB/s inside a domain, 90 GB/s between, `slow_nic` (if
// >= 0) at a quarter of that on its links between domains; only the links of `rounds` measured.
PairwiseMatrix sampled_two_tier(int n, int per_domain, int slow_nic, const std::vector<int>& rounds) {
  PairwiseMatrix m;
  m.num_ranks = n;
  m.bytes = 1 << 20;
  m.domain_sizes.assign(static_cast<std::size_t>(n / per_domain), per_domain);
  m.time_us.assign(static_cast<std::size_t>(n) * n, std::nan(""));
  m.gbps.assign(static_cast<std::size_t>(n) * n, std::nan(""));
  for (const int round : rounds) {
    for (const auto& [a, b] : round_robin_pairs(round, n)) {
      const bool cross = a / per_domain != b / per_domain;
      double g = cross ? 90.0 : 500.0;
      if (cross && (a == slow_nic || b == slow_nic)) g /= 4;
      for (const auto& [x, y] : {std::pair{a, b}, std::pair{b, a}}) {
        m.gbps[m.index(x, y)] = g;
        m.time_us[m.index(x, y)] = static_cast<double>(m.bytes) / (g * 1e3);
      }
    }
  }
  return m;
}

}  // namespace

TEST(SampledRounds, SpreadEvenlyOverTheRoundRobin) {
  EXPECT_EQ(sampled_rounds(8, 3), (std::vector<int>{0, 2, 4}));  // 7 rounds: floor(i * 7 / 3)
  EXPECT_EQ(sampled_rounds(8, 0), (std::vector<int>{0, 1, 2, 3, 4, 5, 6}));
  EXPECT_EQ(sampled_rounds(8, 100), sampled_rounds(8, 0));
  EXPECT_EQ(sampled_rounds(7, 7).size(), 7u);  // odd n: n rounds, one bye each
  const auto r = sampled_rounds(1024, 16);
  ASSERT_EQ(r.size(), 16u);
  EXPECT_EQ(r.front(), 0);
  EXPECT_EQ(r[1], 63);       // floor(1023 / 16)
  EXPECT_EQ(r.back(), 959);  // floor(15 * 1023 / 16)
}

TEST(SampledRounds, EveryRankMeetsDistinctPartners) {
  const int n = 256;
  const auto rounds = sampled_rounds(n, 12);
  for (int rank = 0; rank < n; ++rank) {
    std::set<int> partners;
    for (const int round : rounds) partners.insert(round_robin_partner(rank, round, n));
    EXPECT_EQ(partners.size(), 12u) << "rank " << rank;
    EXPECT_EQ(partners.count(rank), 0u);
  }
}

TEST(LocateSampling, HealthyFabricFlagsNothingFromASample) {
  const auto rounds = sampled_rounds(256, 16);
  PairwiseOptions o;
  o.rounds_measured = 16;
  const auto rep = analyse_pairwise(sampled_two_tier(256, 64, -1, rounds), o);
  EXPECT_EQ(rep.links_measured, 16 * 128);
  EXPECT_TRUE(rep.slow_links.empty());
  EXPECT_TRUE(rep.suspect_ranks.empty());
  ASSERT_FALSE(rep.observations.empty());
  EXPECT_EQ(rep.observations.front(),
            "2048 of 32640 links measured: 16 of 255 round-robin rounds, sampled (--pair-rounds)");
}

TEST(LocateSampling, OneSlowNicNamedFromASample) {
  // 1,024 ranks in 16 racks of 64, NIC of rank 517 at 25%: 16 rounds (of 1,023) name it.
  const auto rounds = sampled_rounds(1024, 16);
  const auto rep = analyse_pairwise(sampled_two_tier(1024, 64, 517, rounds));
  ASSERT_EQ(rep.suspect_ranks.size(), 1u);
  EXPECT_EQ(rep.suspect_ranks[0].rank, 517);
  EXPECT_EQ(rep.suspect_ranks[0].links, 16);
  EXPECT_GE(2 * rep.suspect_ranks[0].slow_links, rep.suspect_ranks[0].links);
  EXPECT_TRUE(rep.suspect_links.empty());  // every slow link is explained by rank 517
  EXPECT_EQ(rep.slow_links.size(), static_cast<std::size_t>(rep.suspect_ranks[0].slow_links));
}

TEST(LocateCost, JsonAndTextSayWhatEachMethodCost) {
  LocateReport r;
  r.num_ranks = 4;
  r.clock = "simulated";
  r.costs = {{"skew", 0.25, 2}, {"pairwise", 3.5, 3}};
  const auto j = locate_to_json(r);
  ASSERT_TRUE(j.contains("cost"));
  EXPECT_EQ(j["cost"]["clock"], "simulated");
  EXPECT_DOUBLE_EQ(j["cost"]["total_seconds"].get<double>(), 3.75);
  EXPECT_EQ(j["cost"]["methods"][1]["method"], "pairwise");
  EXPECT_EQ(j["cost"]["methods"][1]["cases"], 3);
  const std::string text = render_locate_text(r);
  EXPECT_NE(
      text.find(
          "## cost: 3.75 s of cluster time (simulated clock): skew 250 ms (2 case(s)), pairwise 3.5 s (3 case(s))"),
      std::string::npos)
      << text;
  EXPECT_FALSE(locate_to_json(LocateReport{}).contains("cost"));  // analysing files: no cost
}
