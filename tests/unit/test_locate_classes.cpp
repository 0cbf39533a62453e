// Pairwise analysis on a two-tier fabric (found by the 16-rank simulation, docs/simulation.md): a
// link inside a domain (NVLink) and a link between domains (NIC) are judged against their own
// class's reference, so a healthy fabric flags nothing and one slow NIC names its rank.
#include <gtest/gtest.h>

#include <cmath>

#include "collbench/locate/locate.hpp"

using namespace collbench::locate;

namespace {

// 8 ranks in 2 domains of 4: 500 GB/s inside a domain, 90 GB/s between; `slow_nic` (if >= 0) at
// a quarter of that on its links between domains.
PairwiseMatrix two_tier(int slow_nic, std::vector<int> domain_sizes = {4, 4}) {
  PairwiseMatrix m;
  m.num_ranks = 8;
  m.bytes = 1 << 20;
  m.domain_sizes = std::move(domain_sizes);
  m.time_us.assign(64, std::nan(""));
  m.gbps.assign(64, std::nan(""));
  for (int a = 0; a < 8; ++a) {
    for (int b = 0; b < 8; ++b) {
      if (a == b) continue;
      const bool cross = (a < 4) != (b < 4);
      double g = cross ? 90.0 : 500.0;
      if (cross && (a == slow_nic || b == slow_nic)) g /= 4;
      m.gbps[m.index(a, b)] = g;
      m.time_us[m.index(a, b)] = static_cast<double>(m.bytes) / (g * 1e3);
    }
  }
  return m;
}

}  // namespace

TEST(LocateClasses, HealthyTwoTierFabricFlagsNothing) {
  const auto rep = analyse_pairwise(two_tier(-1));
  EXPECT_TRUE(rep.slow_links.empty());
  EXPECT_TRUE(rep.suspect_ranks.empty());
  EXPECT_DOUBLE_EQ(rep.reference_gbps, 500.0);
  ASSERT_TRUE(rep.cross_reference_gbps);
  EXPECT_DOUBLE_EQ(*rep.cross_reference_gbps, 90.0);
  EXPECT_EQ(pairwise_reference_text(rep), "its class's reference (500 GB/s inside a domain, 90 GB/s between domains)");
}

TEST(LocateClasses, OneSlowNicNamesItsRank) {
  const auto rep = analyse_pairwise(two_tier(5));
  ASSERT_EQ(rep.suspect_ranks.size(), 1u);
  EXPECT_EQ(rep.suspect_ranks[0].rank, 5);
  EXPECT_EQ(rep.suspect_ranks[0].slow_links, 4);  // its 4 links to the other domain
  EXPECT_EQ(rep.slow_links.size(), 4u);
  for (const auto& l : rep.slow_links) EXPECT_DOUBLE_EQ(l.fraction_of_reference, 0.25);
}

TEST(LocateClasses, WithoutAPlacementEveryLinkHasOneReference) {
  // One domain (placement unknown): the 16 links between the halves read slow against the NVLink
  // majority - why the records' domain sizes matter.
  const auto rep = analyse_pairwise(two_tier(-1, {8}));
  EXPECT_FALSE(rep.cross_reference_gbps);
  EXPECT_EQ(rep.slow_links.size(), 16u);
}
