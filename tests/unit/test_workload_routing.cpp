// Routing generator: agreement with a direct (exhaustive) implementation of the definition in
// routing.hpp, determinism, the group limit, EP groups, row conventions, token distributions,
// redundant slots and send layouts.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <numeric>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "collbench/core/error.hpp"
#include "collbench/workload/counts.hpp"
#include "collbench/workload/routing.hpp"

using namespace collbench;
using namespace collbench::workload;

namespace {

RoutingConfig deepseek(int num_ranks, int tokens_per_rank, int groups_per_token = 0) {
  RoutingConfig c;
  c.num_ranks = num_ranks;
  c.num_experts = 256;
  c.top_k = 8;
  c.num_expert_groups = 8;
  c.tokens_per_rank = tokens_per_rank;
  c.settings.groups_per_token = groups_per_token;
  return c;
}

// The definition of routing.hpp computed the slow, obvious way: every key, full sorts.
std::vector<std::int32_t> direct_route(const RoutingGenerator& gen, int src_rank_idx, int token_idx) {
  const auto& c = gen.config();
  const auto& w = gen.expert_weights();
  const int num_experts = c.num_experts;
  const int k = c.top_k;
  const std::uint64_t key = routing_token_key(c.settings.seed, c.settings.layer, c.iteration, src_rank_idx, token_idx);
  std::vector<std::pair<double, std::int32_t>> keys(static_cast<std::size_t>(num_experts));
  for (int e = 0; e < num_experts; ++e) keys[e] = {-std::log(routing_uniform(key, e)) * (1.0 / w[e]), e};
  std::vector<std::pair<double, std::int32_t>> pool;
  const int m = c.settings.groups_per_token;
  if (m == 0 || m >= c.num_expert_groups) {
    pool = keys;
  } else {
    const int size = num_experts / c.num_expert_groups;
    const int n = std::max(1, k / m);
    std::vector<std::pair<double, int>> scores;
    for (int g = 0; g < c.num_expert_groups; ++g) {
      std::vector<std::pair<double, std::int32_t>> group(keys.begin() + g * size, keys.begin() + (g + 1) * size);
      std::sort(group.begin(), group.end());
      double product = 1.0;
      for (int j = 0; j < n; ++j) product *= group[j].first;
      scores.emplace_back(product, g);
    }
    std::sort(scores.begin(), scores.end());
    for (int i = 0; i < m; ++i) {
      const int g = scores[i].second;
      pool.insert(pool.end(), keys.begin() + g * size, keys.begin() + (g + 1) * size);
    }
  }
  std::sort(pool.begin(), pool.end());
  std::vector<std::int32_t> out;
  for (int j = 0; j < k; ++j) out.push_back(pool[j].second);
  return out;
}

void expect_matches_direct(const RoutingConfig& config, int num_tokens) {
  const RoutingGenerator gen(config);
  const RankRouting r = gen.route_rank(config.num_ranks - 1);
  ASSERT_EQ(r.num_tokens, config.tokens_per_rank);
  int mismatches = 0;
  for (int t = 0; t < num_tokens; ++t) {
    const auto direct = direct_route(gen, config.num_ranks - 1, t);
    const auto got = r.token_experts(t);
    if (!std::equal(direct.begin(), direct.end(), got.begin(), got.end())) ++mismatches;
  }
  EXPECT_EQ(mismatches, 0);
}

}  // namespace

TEST(Routing, MatchesDirectImplementationUnlimited) {
  RoutingConfig c = deepseek(8, 1500);
  expect_matches_direct(c, 1500);
  c.settings.popularity = Popularity::lognormal;
  c.settings.sigma = 1.0;
  expect_matches_direct(c, 1500);
  c.top_k = 1;
  expect_matches_direct(c, 500);
}

TEST(Routing, MatchesDirectImplementationGroupLimited) {
  RoutingConfig c = deepseek(8, 1500, 4);
  expect_matches_direct(c, 1500);  // EP8: a group is a rank
  c.settings.popularity = Popularity::zipf;
  c.settings.zipf_s = 1.2;
  expect_matches_direct(c, 1500);
  c.settings.popularity = Popularity::one_hot_rank;
  c.settings.hot_factor = 8.0;
  c.settings.groups_per_token = 2;
  expect_matches_direct(c, 1000);
  c.settings.popularity = Popularity::lognormal;
  c.settings.sigma = 2.0;  // extreme skew: the fast pass often has to rescan groups
  c.settings.groups_per_token = 3;
  c.top_k = 6;  // n = 6 / 3 = 2 keys per group score
  expect_matches_direct(c, 1000);
}

TEST(Routing, DeterministicWhereverComputed) {
  RoutingConfig c = deepseek(16, 512, 4);
  c.settings.popularity = Popularity::lognormal;
  c.settings.sigma = 0.7;
  c.settings.seed = 1234;
  const RoutingGenerator a(c);
  const RoutingGenerator b(c);  // another rank building its own generator
  const RankRouting ra = a.route_rank(5);
  EXPECT_EQ(ra.experts, b.route_rank(5).experts);
  EXPECT_EQ(ra.dest_ranks, b.route_rank(5).dest_ranks);
  // A receiver regenerating single tokens gets the same answer.
  std::int32_t experts[8];
  std::int32_t dests[8];
  for (int t : {0, 1, 77, 511}) {
    b.route_token(5, t, experts, dests);
    EXPECT_TRUE(std::equal(experts, experts + 8, ra.token_experts(t).begin()));
    EXPECT_TRUE(std::equal(dests, dests + 8, ra.token_dest_ranks(t).begin()));
  }
  // Counts without the routing, and the offline matrix, agree with the routing itself.
  const DestinationCounts counts = a.count_destinations(5);
  std::vector<std::int64_t> copy(16, 0);
  for (const auto d : ra.dest_ranks) ++copy[d];
  EXPECT_EQ(counts.copy_rows, copy);
  const CountsMatrices m = b.counts_matrices();
  for (int d = 0; d < 16; ++d) {
    EXPECT_EQ(m.copy.at(5, d), counts.copy_rows[d]);
    EXPECT_EQ(m.dedup.at(5, d), counts.dedup_rows[d]);
  }
}

TEST(Routing, SeedsLayersIterationsAndRanksDiffer) {
  const RoutingConfig base = deepseek(8, 1000);
  const auto reference = RoutingGenerator(base).route_rank(3).experts;
  auto fraction_equal = [&](const std::vector<std::int32_t>& other) {
    int same = 0;
    for (int t = 0; t < 1000; ++t) {
      same += std::equal(reference.begin() + t * 8, reference.begin() + t * 8 + 8, other.begin() + t * 8) ? 1 : 0;
    }
    return same / 1000.0;
  };
  RoutingConfig c = base;
  c.settings.seed = 2;
  EXPECT_LT(fraction_equal(RoutingGenerator(c).route_rank(3).experts), 0.01);
  c = base;
  c.settings.layer = 1;
  EXPECT_LT(fraction_equal(RoutingGenerator(c).route_rank(3).experts), 0.01);
  c = base;
  c.iteration = 1;
  EXPECT_LT(fraction_equal(RoutingGenerator(c).route_rank(3).experts), 0.01);
  EXPECT_LT(fraction_equal(RoutingGenerator(base).route_rank(4).experts), 0.01);
  // Popularity depends on (seed, layer), not on the iteration.
  c = base;
  c.settings.popularity = Popularity::lognormal;
  c.settings.sigma = 1.0;
  const auto w0 = RoutingGenerator(c).expert_weights();
  c.iteration = 9;
  EXPECT_EQ(RoutingGenerator(c).expert_weights(), w0);
  c.settings.layer = 3;
  EXPECT_NE(RoutingGenerator(c).expert_weights(), w0);
}

TEST(Routing, TopKIsWithoutReplacement) {
  const RoutingGenerator gen(deepseek(4, 2000, 4));
  const RankRouting r = gen.route_rank(0);
  for (int t = 0; t < r.num_tokens; ++t) {
    const auto e = r.token_experts(t);
    EXPECT_EQ(std::set<std::int32_t>(e.begin(), e.end()).size(), 8u);
  }
}

TEST(Routing, GroupLimitNeverExceeded) {
  for (int ep : {8, 16, 64}) {
    for (int m : {1, 2, 4}) {
      RoutingConfig c = deepseek(ep, 256, m);
      c.settings.popularity = Popularity::lognormal;
      c.settings.sigma = 1.0;
      const RoutingGenerator gen(c);
      const int group_size = gen.expert_group_size();
      int worst_groups = 0;
      int worst_ranks = 0;
      for (int src = 0; src < ep; src += std::max(1, ep / 4)) {
        const RankRouting r = gen.route_rank(src);
        for (int t = 0; t < r.num_tokens; ++t) {
          std::set<int> groups;
          for (const auto e : r.token_experts(t)) groups.insert(e / group_size);
          const auto dests = r.token_dest_ranks(t);
          worst_groups = std::max(worst_groups, static_cast<int>(groups.size()));
          worst_ranks =
              std::max(worst_ranks, static_cast<int>(std::set<std::int32_t>(dests.begin(), dests.end()).size()));
        }
      }
      EXPECT_LE(worst_groups, m) << "EP" << ep << " M=" << m;
      EXPECT_EQ(worst_groups, m) << "the limit is reached, not undershot";
      if (ep == 8) {
        EXPECT_LE(worst_ranks, m) << "EP8: a group is a rank";
      }
    }
  }
}

TEST(Routing, CopyAndDedupConsistent) {
  RoutingConfig c = deepseek(16, 700, 4);
  c.settings.popularity = Popularity::zipf;
  const RoutingGenerator gen(c);
  const CountsMatrices m = gen.counts_matrices();
  const auto copy_sent = m.copy.send_rows();
  const auto dedup_sent = m.dedup.send_rows();
  for (int s = 0; s < 16; ++s) {
    EXPECT_EQ(copy_sent[s], 700 * 8);  // T * k
    EXPECT_GE(dedup_sent[s], 700);     // at least one destination per token
    for (int d = 0; d < 16; ++d) {
      EXPECT_LE(m.dedup.at(s, d), m.copy.at(s, d));
      EXPECT_EQ(m.dedup.at(s, d) == 0, m.copy.at(s, d) == 0);
    }
  }
  EXPECT_EQ(m.copy.total_rows(), 16 * 700 * 8);
  const auto recv = m.dedup.receive_rows();
  EXPECT_EQ(std::accumulate(recv.begin(), recv.end(), std::int64_t{0}), m.dedup.total_rows());
}

TEST(Routing, SeveralEpGroupsKeepTrafficInside) {
  RoutingConfig c = deepseek(16, 300, 4);
  c.settings.ep_size = 4;  // 4 EP groups of 4 ranks, 64 experts per rank
  const RoutingGenerator gen(c);
  EXPECT_EQ(gen.num_ep_groups(), 4);
  EXPECT_EQ(gen.experts_per_rank(), 64);
  const CountsMatrices m = gen.counts_matrices();
  for (int s = 0; s < 16; ++s) {
    for (int d = 0; d < 16; ++d) {
      if (s / 4 != d / 4) {
        EXPECT_EQ(m.copy.at(s, d), 0) << s << "->" << d;
      }
    }
  }
  // Expert e lives on local rank e / 64 of every group.
  const RankRouting r = gen.route_rank(9);  // group 2: ranks 8..11
  for (std::size_t i = 0; i < r.experts.size(); ++i) EXPECT_EQ(r.dest_ranks[i], 8 + r.experts[i] / 64);
}

TEST(Routing, TokenDistributions) {
  RoutingConfig c = deepseek(8, 100);
  c.settings.tokens = TokenDistribution::linear;
  const RoutingGenerator linear(c);
  for (int r = 0; r < 8; ++r) EXPECT_EQ(linear.num_tokens(r), 100 - r);
  EXPECT_EQ(linear.route_rank(7).num_tokens, 93);
  EXPECT_EQ(linear.counts_matrices().copy.send_rows()[7], 93 * 8);
  c.settings.tokens = TokenDistribution::uniform;
  const RoutingGenerator uniform(c);
  std::set<int> seen;
  for (int r = 0; r < 8; ++r) {
    EXPECT_GE(uniform.num_tokens(r), 50);
    EXPECT_LE(uniform.num_tokens(r), 150);
    seen.insert(uniform.num_tokens(r));
  }
  EXPECT_GT(seen.size(), 1u);
  EXPECT_EQ(uniform.max_tokens_per_rank(), 150);
  c.settings.min_tokens = 10;
  c.settings.max_tokens = 12;
  const RoutingGenerator narrow(c);
  for (int r = 0; r < 8; ++r) EXPECT_TRUE(narrow.num_tokens(r) >= 10 && narrow.num_tokens(r) <= 12);
  c = deepseek(64, 32);
  c.settings.tokens = TokenDistribution::linear;
  EXPECT_THROW(RoutingGenerator{c}, InputError);  // T - 63 < 0
}

TEST(Routing, RedundantSlotsReplicateHotExperts) {
  RoutingConfig c = deepseek(8, 2000);
  c.settings.popularity = Popularity::one_hot_rank;
  c.settings.hot_rank_idx = 2;
  c.settings.hot_factor = 6.0;
  const auto before = load_stats(RoutingGenerator(c).counts_matrices().copy.receive_rows());
  EXPECT_EQ(before.hottest_rank_idx, 2);
  c.settings.num_redundant_experts = 16;  // 2 extra slots per rank
  const RoutingGenerator gen(c);
  EXPECT_EQ(gen.slots_per_rank(), 34);
  int replicated = 0;
  std::vector<int> slots(8, 0);
  for (int e = 0; e < 256; ++e) {
    const auto ranks = gen.expert_local_ranks(e);
    EXPECT_EQ(ranks[0], e / 32);                                                         // home first
    EXPECT_EQ(std::set<std::int32_t>(ranks.begin(), ranks.end()).size(), ranks.size());  // no rank twice
    for (const auto r : ranks) ++slots[r];
    if (ranks.size() > 1) {
      ++replicated;
      EXPECT_EQ(e / 32, 2) << "only the hot rank's experts are the hottest";
    }
  }
  // Rank 2's own 2 spare slots cannot take its own experts, and a colder expert there would only
  // add load: 14 replicas, 2 on each other rank.
  EXPECT_EQ(replicated, 14);
  for (int r = 0; r < 8; ++r) EXPECT_EQ(slots[r], r == 2 ? 32 : 34) << "rank " << r;
  const auto after = load_stats(gen.counts_matrices().copy.receive_rows());
  EXPECT_LT(after.imbalance, before.imbalance - 0.3);
  // Rows of a replicated expert (ties in popularity go to the lower index: 64 is one) are
  // spread over its replicas.
  const RankRouting r = gen.route_rank(0);
  std::set<std::int32_t> used;
  for (std::size_t i = 0; i < r.experts.size(); ++i) {
    if (r.experts[i] == 64) used.insert(r.dest_ranks[i]);
  }
  ASSERT_EQ(gen.expert_local_ranks(64).size(), 2u);
  EXPECT_EQ(used.size(), gen.expert_local_ranks(64).size());
}

TEST(Routing, SendLayoutGroupsRowsByDestination) {
  RoutingConfig c = deepseek(8, 300, 4);
  const RoutingGenerator gen(c);
  const RankRouting r = gen.route_rank(6);
  const DestinationCounts counts = gen.count_destinations(6);
  for (const auto conv : {RowConvention::copy, RowConvention::dedup}) {
    const SendLayout layout = send_layout(r, 8, conv);
    ASSERT_EQ(layout.offsets.size(), 9u);
    for (int d = 0; d < 8; ++d) {
      EXPECT_EQ(layout.offsets[d + 1] - layout.offsets[d], counts.rows(conv)[d]);
      const auto expected = rows_for_destination(r, d, conv);
      ASSERT_EQ(static_cast<std::int64_t>(expected.size()), counts.rows(conv)[d]);
      for (std::size_t i = 0; i < expected.size(); ++i) {
        const RowRef got = layout.rows[static_cast<std::size_t>(layout.offsets[d]) + i];
        EXPECT_EQ(got.token_idx, expected[i].token_idx);
        EXPECT_EQ(got.expert_idx, expected[i].expert_idx);
        if (conv == RowConvention::copy) {
          EXPECT_EQ(got.expert_idx / 32, d);  // EP8: 32 experts per rank
        }
        if (conv == RowConvention::dedup) {
          EXPECT_EQ(got.expert_idx, -1);
        }
        if (i > 0) {
          EXPECT_GE(got.token_idx, expected[i - 1].token_idx);  // token order
        }
      }
    }
  }
}

TEST(Routing, RejectsImpossibleLayouts) {
  auto message = [](const RoutingConfig& c) {
    try {
      RoutingGenerator{c};
    } catch (const InputError& e) {
      return std::string(e.what());
    }
    return std::string("accepted");
  };
  EXPECT_NE(message(deepseek(1024, 16)).find("several EP groups"), std::string::npos);
  RoutingConfig c = deepseek(1024, 16);
  c.settings.ep_size = 256;
  EXPECT_EQ(message(c), "accepted");  // 4 x EP256
  c.settings.ep_size = 384;
  EXPECT_NE(message(c), "accepted");
  c = deepseek(12, 16);
  c.settings.ep_size = 8;
  EXPECT_NE(message(c).find("whole EP groups"), std::string::npos);
  c = deepseek(8, 16, 4);
  c.top_k = 200;
  EXPECT_NE(message(c), "accepted");
  c = deepseek(8, 16);
  c.settings.num_redundant_experts = 12;  // not a multiple of 8
  EXPECT_NE(message(c).find("redundant"), std::string::npos);
  c = deepseek(8, 16);
  c.settings.popularity = Popularity::one_hot_rank;
  c.settings.hot_rank_idx = 8;
  EXPECT_NE(message(c).find("hot_rank"), std::string::npos);
}

// The refusal's hint names an ep_size that routing accepts on the same ranks (the first GPU run
// printed "set ep_size, e.g. 3" for the very ep_size 3 it refused).
TEST(Routing, EpSizeHintNamesAValidEpSize) {
  for (const auto& [ranks, ep] : std::vector<std::pair<int, int>>{{3, 0}, {72, 0}, {1024, 0}, {12, 24}, {6, 384}}) {
    RoutingConfig c = deepseek(ranks, 16);
    c.settings.ep_size = ep;
    std::string what;
    try {
      RoutingGenerator{c};
    } catch (const InputError& e) {
      what = e.what();
    }
    const auto at = what.find("e.g. ");
    ASSERT_NE(at, std::string::npos) << ranks << " ranks, ep_size " << ep << ": " << what;
    const int hint = std::stoi(what.substr(at + 5));
    EXPECT_NE(hint, ep > 0 ? ep : ranks) << what;
    EXPECT_EQ(hint, std::gcd(ranks, 256)) << what;
    EXPECT_NE(what.find(fmt::format("{} groups of {}", ranks / hint, hint)), std::string::npos) << what;
    c.settings.ep_size = hint;
    EXPECT_NO_THROW(RoutingGenerator{c}) << "the hint's ep_size " << hint << " on " << ranks << " ranks";
  }
}
