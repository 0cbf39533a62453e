// MoE traffic formulas against docs/hardware-context.md section 6 and against simulation; imbalance search;
// load statistics and placement views of counts matrices.
#include <gtest/gtest.h>

#include <cmath>
#include <numeric>
#include <set>

#include "collbench/core/error.hpp"
#include "collbench/core/placement.hpp"
#include "collbench/workload/counts.hpp"
#include "collbench/workload/expected.hpp"
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

// Mean destination ranks per token over every token of the run.
double simulated_destinations(const RoutingGenerator& gen) {
  const CountsMatrices m = gen.counts_matrices();
  const double tokens = static_cast<double>(m.copy.total_rows()) / gen.top_k();
  return static_cast<double>(m.dedup.total_rows()) / tokens;
}

constexpr int kEpSizes[] = {8, 16, 32, 64, 256};
constexpr std::int64_t kFp8RowBytes = 7392;

}  // namespace

TEST(MoeFormulas, ExpectedDestinationRanksClosedForm) {
  // Computed by hand: U = P (1 - prod_{i<8} (256 - 256/P - i) / (256 - i)).
  EXPECT_NEAR(expected_destination_ranks(256, 8, 8), 5.2947, 1e-4);
  EXPECT_NEAR(expected_destination_ranks(256, 16, 8), 6.5233, 1e-4);
  EXPECT_NEAR(expected_destination_ranks(256, 32, 8), 7.2668, 1e-4);
  EXPECT_NEAR(expected_destination_ranks(256, 64, 8), 7.6758, 1e-4);
  EXPECT_DOUBLE_EQ(expected_destination_ranks(256, 256, 8), 8.0);  // one expert per rank
  EXPECT_DOUBLE_EQ(expected_destination_ranks(256, 1, 8), 1.0);
  EXPECT_DOUBLE_EQ(expected_destination_ranks(16, 2, 12), 2.0);  // k > E - E/P: both ranks always
  EXPECT_DOUBLE_EQ(expected_rows_per_token(256, 64, 8, RowConvention::copy), 8.0);
  EXPECT_THROW(expected_destination_ranks(256, 48, 8), InputError);
}

TEST(MoeFormulas, DispatchBytesPerGpuReproduceContext) {
  // docs/hardware-context.md section 6: T = 4096, FP8 7392 B rows, dedup, uniform unlimited routing (MB = 1e6 B).
  const double expected_mb[] = {160, 198, 220, 232, 242};
  for (int i = 0; i < 5; ++i) {
    const double bytes =
        expected_dispatch_bytes_per_rank(4096, 256, kEpSizes[i], 8, RowConvention::dedup, kFp8RowBytes);
    EXPECT_NEAR(bytes / 1e6, expected_mb[i], 0.6) << "EP" << kEpSizes[i];
  }
  // Per-peer messages: EP64 ~3.6 MB, EP256 ~0.95 MB.
  EXPECT_NEAR(expected_dispatch_bytes_per_rank(4096, 256, 64, 8, RowConvention::dedup, kFp8RowBytes) / 64 / 1e6, 3.6,
              0.05);
  EXPECT_NEAR(expected_dispatch_bytes_per_rank(4096, 256, 256, 8, RowConvention::dedup, kFp8RowBytes) / 256 / 1e6, 0.95,
              0.01);
  // Combine (BF16, 14336 B) is roughly double.
  const double ratio = expected_dispatch_bytes_per_rank(4096, 256, 64, 8, RowConvention::dedup, 14336) /
                       expected_dispatch_bytes_per_rank(4096, 256, 64, 8, RowConvention::dedup, kFp8RowBytes);
  EXPECT_NEAR(ratio, 1.94, 0.01);
}

TEST(MoeFormulas, SimulatedDestinationsMatchClosedFormUnlimited) {
  for (const int ep : kEpSizes) {
    // 4096 tokens in all, spread over the EP group's source ranks.
    const RoutingGenerator gen(deepseek(ep, std::max(16, 4096 / ep)));
    const double simulated = simulated_destinations(gen);
    const double closed = expected_destination_ranks(256, ep, 8);
    EXPECT_NEAR(simulated / closed, 1.0, 0.01) << "EP" << ep << " simulated " << simulated << " closed " << closed;
    // Per-GPU dispatch bytes from the simulated counts (scaled to T = 4096) reproduce the table.
    const double bytes = 4096 * simulated * static_cast<double>(kFp8RowBytes);
    EXPECT_NEAR(bytes / expected_dispatch_bytes_per_rank(4096, 256, ep, 8, RowConvention::dedup, kFp8RowBytes), 1.0,
                0.01);
  }
}

TEST(MoeFormulas, GroupLimitLowersDestinations) {
  // EP8 with 8 groups of 32 experts: a group is a rank, so at most 4 destinations per token.
  const RoutingGenerator limited(deepseek(8, 512, 4));
  const double u_limited = simulated_destinations(limited);
  EXPECT_LE(u_limited, 4.0);
  EXPECT_GT(u_limited, 3.5);
  for (const int ep : {16, 64}) {
    const double u = simulated_destinations(RoutingGenerator(deepseek(ep, 4096 / ep, 4)));
    EXPECT_LT(u, expected_destination_ranks(256, ep, 8)) << "EP" << ep;
  }
}

TEST(MoeFormulas, GroupLimitedDestinationsMatchDirectSimulation) {
  // A direct simulation of node-limited routing for EP8 (group = rank), written independently:
  // every key, per-group top-2 sums of Gumbel scores, the 4 best groups, top-8 inside them.
  const RoutingGenerator gen(deepseek(8, 2048, 4));
  const RankRouting r = gen.route_rank(2);
  double direct_total = 0.0;
  double generator_total = 0.0;
  for (int t = 0; t < r.num_tokens; ++t) {
    const std::uint64_t key = routing_token_key(1, 0, 0, 2, t);
    std::vector<double> score(256);  // Gumbel score log w + G = -log(-log u) + const (uniform w)
    for (int e = 0; e < 256; ++e) score[e] = -std::log(-std::log(routing_uniform(key, e)));
    std::vector<std::pair<double, int>> groups;
    for (int g = 0; g < 8; ++g) {
      std::vector<double> s(score.begin() + g * 32, score.begin() + (g + 1) * 32);
      std::sort(s.rbegin(), s.rend());
      groups.emplace_back(-(s[0] + s[1]), g);
    }
    std::sort(groups.begin(), groups.end());
    std::vector<std::pair<double, int>> pool;
    for (int i = 0; i < 4; ++i) {
      for (int e = groups[i].second * 32; e < (groups[i].second + 1) * 32; ++e) pool.emplace_back(-score[e], e);
    }
    std::sort(pool.begin(), pool.end());
    std::set<int> ranks;
    for (int j = 0; j < 8; ++j) ranks.insert(pool[j].second / 32);
    direct_total += static_cast<double>(ranks.size());
    const auto dests = r.token_dest_ranks(t);
    generator_total += static_cast<double>(std::set<std::int32_t>(dests.begin(), dests.end()).size());
  }
  // The same tokens: equal up to rare ties between log-domain and product-domain rounding.
  EXPECT_NEAR(generator_total / r.num_tokens, direct_total / r.num_tokens, 0.002);
  EXPECT_LE(generator_total / r.num_tokens, 4.0);
}

TEST(MoeFormulas, ExactExpectedLoadsMatchClosedFormAndSimulation) {
  // Uniform popularity: the race integral reproduces the closed form.
  const std::vector<double> uniform(256, 1.0);
  for (const int ep : kEpSizes) {
    const auto dedup = expected_rank_rows_per_token(uniform, ep, 8, RowConvention::dedup);
    const auto copy = expected_rank_rows_per_token(uniform, ep, 8, RowConvention::copy);
    EXPECT_NEAR(std::accumulate(dedup.begin(), dedup.end(), 0.0), expected_destination_ranks(256, ep, 8), 1e-6);
    EXPECT_NEAR(std::accumulate(copy.begin(), copy.end(), 0.0), 8.0, 1e-6);
  }
  // Skewed popularity: per-rank expectations agree with the generator's counts.
  RoutingConfig c = deepseek(16, 2048);
  c.settings.popularity = Popularity::lognormal;
  c.settings.sigma = 0.8;
  const RoutingGenerator gen(c);
  const auto expected = expected_rank_rows_per_token(gen.expert_weights(), 16, 8, RowConvention::dedup);
  const auto received = gen.counts_matrices().dedup.receive_rows();
  const double tokens = 16.0 * 2048;
  for (int r = 0; r < 16; ++r) {
    EXPECT_NEAR(static_cast<double>(received[r]) / tokens, expected[r], 0.03 * expected[r] + 0.002) << "rank " << r;
  }
}

TEST(MoeImbalance, AchievedWithinFivePercentAtEp64) {
  for (const int limit : {0, 4}) {
    RoutingConfig c = deepseek(64, 2048, limit);
    c.settings.popularity = Popularity::lognormal;
    c.settings.imbalance = 1.25;
    c.settings.seed = 7;
    const RoutingGenerator gen(c);  // resolves sigma
    EXPECT_GT(gen.sigma(), 0.0);
    const LoadStats achieved = load_stats(gen.counts_matrices().dedup.receive_rows());
    EXPECT_NEAR(achieved.imbalance, 1.25, 0.05 * 1.25) << "groups_per_token " << limit << " sigma " << gen.sigma();
    EXPECT_GT(achieved.gini, 0.0);
  }
}

TEST(MoeImbalance, GroupLimitIsCalibratedWhereItMatters) {
  // EP16: a group is two ranks, and the 4-group limit changes the imbalance a given sigma gives,
  // so the search must use the limited routing (the unlimited sigma would overshoot).
  RoutingConfig c = deepseek(16, 4096, 4);
  c.settings.popularity = Popularity::lognormal;
  c.settings.seed = 7;
  const double sigma_limited = sigma_for_imbalance(1.25, c, RowConvention::dedup);
  RoutingConfig unlimited = c;
  unlimited.settings.groups_per_token = 0;
  EXPECT_LT(sigma_limited, 0.98 * sigma_for_imbalance(1.25, unlimited, RowConvention::dedup));
  c.settings.sigma = sigma_limited;
  const LoadStats achieved = load_stats(RoutingGenerator(c).counts_matrices().dedup.receive_rows());
  EXPECT_NEAR(achieved.imbalance, 1.25, 0.05 * 1.25) << "sigma " << sigma_limited;
}

TEST(MoeImbalance, SearchRejectsImpossibleTargets) {
  RoutingConfig c = deepseek(8, 256);
  EXPECT_THROW(sigma_for_imbalance(0.9, c, RowConvention::dedup), InputError);
  // Dedup rows: a rank receives a token at most once, so I <= P / U (8 / 5.29 at uniform).
  try {
    sigma_for_imbalance(3.0, c, RowConvention::dedup);
    FAIL();
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("at most once"), std::string::npos) << e.what();
  }
  EXPECT_DOUBLE_EQ(sigma_for_imbalance(1.0, c, RowConvention::dedup), 0.0);
  // Tokens T - rank within one EP group: every source spreads its tokens over all ranks, so
  // receive loads stay even and 1.0 is still reachable.
  c.settings.tokens = TokenDistribution::linear;
  EXPECT_DOUBLE_EQ(sigma_for_imbalance(1.0, c, RowConvention::copy), 0.0);
  // Several EP groups with different token totals: the floor is above 1.
  RoutingConfig groups = deepseek(16, 100);
  groups.settings.ep_size = 8;
  groups.settings.tokens = TokenDistribution::linear;
  const double floor = expected_imbalance(groups, 0.0, RowConvention::copy);
  EXPECT_GT(floor, 1.0);
  EXPECT_THROW(sigma_for_imbalance(1.0, groups, RowConvention::copy), InputError);
}

TEST(MoeLoads, StatsComputedByHand) {
  const std::vector<std::int64_t> loads{1, 1, 1, 5};
  const LoadStats s = load_stats(loads);
  EXPECT_DOUBLE_EQ(s.mean_rows, 2.0);
  EXPECT_EQ(s.max_rows, 5);
  EXPECT_EQ(s.hottest_rank_idx, 3);
  EXPECT_DOUBLE_EQ(s.imbalance, 2.5);
  // Pairwise: sum |xi - xj| over ordered pairs = 3 x 4 x 2 = 24; / (2 n^2 mean) = 24 / 64.
  EXPECT_DOUBLE_EQ(s.gini, 0.375);
  const std::vector<std::int64_t> even{3, 3, 3};
  EXPECT_DOUBLE_EQ(load_stats(even).gini, 0.0);
  EXPECT_DOUBLE_EQ(load_stats(even).imbalance, 1.0);
  const std::vector<std::int64_t> zeros{0, 0};
  EXPECT_DOUBLE_EQ(load_stats(zeros).imbalance, 1.0);
  const std::vector<double> one_hot{0, 0, 0, 8};
  EXPECT_DOUBLE_EQ(gini(one_hot), 0.75);  // (n - 1) / n
}

TEST(MoeLoads, DomainCountsAndLinkClasses) {
  // 4 ranks in 2 domains of 2; rows[s][d] = 10 s + d + 1.
  CountsMatrix m;
  m.num_ranks = 4;
  for (int s = 0; s < 4; ++s) {
    for (int d = 0; d < 4; ++d) m.rows.push_back(10 * s + d + 1);
  }
  const Placement p = placement_from_ranks_per_domain(4, 2);
  const CountsMatrix dom = domain_counts(m, p);
  ASSERT_EQ(dom.num_ranks, 2);
  EXPECT_EQ(dom.at(0, 0), 1 + 2 + 11 + 12);
  EXPECT_EQ(dom.at(0, 1), 3 + 4 + 13 + 14);
  EXPECT_EQ(dom.at(1, 0), 21 + 22 + 31 + 32);
  EXPECT_EQ(dom.at(1, 1), 23 + 24 + 33 + 34);
  const LinkClassRows c = link_class_rows(m, p);
  EXPECT_EQ(c.send_self[1], 12);
  EXPECT_EQ(c.send_in_domain[1], 11);
  EXPECT_EQ(c.send_off_domain[1], 13 + 14);
  EXPECT_EQ(c.recv_self[2], 23);
  EXPECT_EQ(c.recv_in_domain[2], 33);
  EXPECT_EQ(c.recv_off_domain[2], 3 + 13);
  for (int r = 0; r < 4; ++r) {
    EXPECT_EQ(c.send_self[r] + c.send_in_domain[r] + c.send_off_domain[r], m.send_rows()[r]);
    EXPECT_EQ(c.recv_self[r] + c.recv_in_domain[r] + c.recv_off_domain[r], m.receive_rows()[r]);
  }
  EXPECT_THROW(domain_counts(m, placement_from_ranks_per_domain(8, 2)), InputError);
}

TEST(MoeLoads, ExpertGroupsFollowDomains) {
  // EP256 over 4 racks of 64: 4 expert groups of 64 experts, one per rack.
  EXPECT_EQ(expert_groups_for_domains(placement_from_ranks_per_domain(256, 64), 256, 256), 4);
  // 1024 GPUs, 4 x EP256, 16 racks of 64: each EP group spans 4 racks.
  EXPECT_EQ(expert_groups_for_domains(placement_from_ranks_per_domain(1024, 64), 256, 256), 4);
  // EP64 inside each 64-GPU rack: one group.
  EXPECT_EQ(expert_groups_for_domains(placement_from_ranks_per_domain(256, 64), 64, 256), 1);
  // NVL72 packing 72,72,72,40 does not split EP256 evenly.
  EXPECT_THROW(expert_groups_for_domains(placement_from_sizes(256, {72, 72, 72, 40}), 256, 256), InputError);
  // With groups = domains, the group limit is a domain limit: at most 2 racks per token.
  RoutingConfig c = deepseek(32, 64, 2);
  c.num_expert_groups = expert_groups_for_domains(placement_from_ranks_per_domain(32, 8), 32, 256);
  ASSERT_EQ(c.num_expert_groups, 4);
  const RoutingGenerator gen(c);
  const Placement p = placement_from_ranks_per_domain(32, 8);
  const RankRouting r = gen.route_rank(0);
  for (int t = 0; t < r.num_tokens; ++t) {
    std::set<int> domains;
    for (const auto d : r.token_dest_ranks(t)) domains.insert(p.domain_of(d));
    EXPECT_LE(domains.size(), 2u);
  }
}
