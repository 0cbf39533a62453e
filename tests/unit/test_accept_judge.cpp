// Acceptance verdicts on synthetic records: thresholds (fractions of bound and expected, floors,
// ceilings), the median/best policies, per-domain verdicts with per-domain bounds, silent
// fallback and waivers, failed verification, judging without a model, and the evidence that
// names a slow rank or pair. Pure C++: no MPI, no timing.

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <functional>
#include <string>
#include <vector>

#include "accept_fixtures.hpp"
#include "collbench/accept/judge.hpp"
#include "collbench/accept/profile.hpp"
#include "collbench/core/pairing.hpp"
#include "collbench/core/placement.hpp"
#include "collbench/core/units.hpp"
#include "collbench/model/estimate.hpp"
#include "collbench/model/system_profile.hpp"

namespace {

using collbench::record::CaseRecord;
using namespace collbench::accept;
using namespace collbench::accept_fixtures;

constexpr std::uint64_t kMiB = 1u << 20;

TEST(AcceptJudge, TimedSecondsSumIterationsTimesMeanOverRepetitions) {
  const std::string yaml = R"(name: t
checks:
  - name: bw
    collective: allreduce
    bytes: 1M
    repetitions: 3
    threshold: {min_busbw_gbps: 1}
)";
  auto f = build(yaml, 2, [&](const PlannedCase& pc, int) {
    CaseRecord r = ok_record(pc, 250.0, 2, 1.0);
    r.iterations = 200;
    r.time_us->mean = 300.0;  // the mean, not the p50, times the iterations
    return r;
  });
  const auto rep = judge(f.profile, f.records, nullptr);
  ASSERT_EQ(rep.rows.size(), 1u);
  ASSERT_EQ(rep.rows[0].time_us.size(), 3u);
  EXPECT_NEAR(rep.rows[0].timed_s, 3 * 200 * 300e-6, 1e-12);  // 0.18 s
}

TEST(AcceptJudge, FractionOfBoundAndExpected) {
  // 1 MiB all-reduce on 2 ranks (factor 1): p50 104.8576 us -> 10 GB/s algbw = busbw.
  const std::string yaml = R"(name: t
checks:
  - name: bound
    collective: allreduce
    bytes: 1M
    threshold: {fraction_of_bound: 0.5}
  - name: expected
    collective: allreduce
    bytes: 1M
    threshold: {fraction_of_expected: 0.9}
)";
  const double p50 = static_cast<double>(kMiB) / 10e3;
  auto f = build(yaml, 2, [&](const PlannedCase& pc, int) {
    CaseRecord r = ok_record(pc, p50, 2, 1.0);
    set_model(r, pc.check_index == 0 ? 25.0 : 30.0, pc.check_index == 0 ? 12.0 : 12.0);
    return r;
  });
  const auto rep = judge(f.profile, f.records, nullptr);
  ASSERT_EQ(rep.rows.size(), 2u);
  // bound: 10 < 0.5 x 25 = 12.5 -> FAIL
  EXPECT_EQ(rep.rows[0].verdict, Verdict::fail);
  EXPECT_NEAR(*rep.rows[0].busbw, 10.0, 1e-9);
  ASSERT_EQ(rep.rows[0].limits.size(), 1u);
  EXPECT_NEAR(*rep.rows[0].limits[0].limit, 12.5, 1e-9);
  EXPECT_NE(rep.rows[0].reason.find("busbw 10 GB/s < 12.5 GB/s (0.5 x bound 25 GB/s)"), std::string::npos)
      << rep.rows[0].reason;
  // expected: 10 < 0.9 x 12 = 10.8 -> FAIL; at 0.8 it would pass
  EXPECT_EQ(rep.rows[1].verdict, Verdict::fail);
  EXPECT_NEAR(*rep.rows[1].limits[0].limit, 10.8, 1e-9);
  EXPECT_EQ(rep.exit_code(), 1);

  auto g = build(R"(name: t
checks:
  - name: expected
    collective: allreduce
    bytes: 1M
    threshold: {fraction_of_expected: 0.8, fraction_of_bound: 0.3}
)",
                 2, [&](const PlannedCase& pc, int) {
                   CaseRecord r = ok_record(pc, p50, 2, 1.0);
                   set_model(r, 30.0, 12.0);
                   return r;
                 });
  const auto ok = judge(g.profile, g.records, nullptr);
  ASSERT_EQ(ok.rows.size(), 1u);
  EXPECT_EQ(ok.rows[0].verdict, Verdict::pass) << ok.rows[0].reason;
  EXPECT_EQ(ok.rows[0].limits.size(), 2u);
  EXPECT_EQ(ok.exit_code(), 0);
  EXPECT_NE(ok.rows[0].reason.find("(median of 3)"), std::string::npos);
}

TEST(AcceptJudge, FloorsAndCeilings) {
  const std::string yaml = R"(name: t
checks:
  - name: floor-bus
    collective: allreduce
    bytes: 1M
    threshold: {min_busbw_gbps: 15}
  - name: floor-alg
    collective: allreduce
    bytes: 1M
    threshold: {min_algbw_gbps: 4}
  - name: latency
    collective: allreduce
    bytes: 8
    threshold: {max_time_us: 50}
)";
  // 4 ranks, factor 2(n-1)/n = 1.5; 1 MiB at 104.8576 us -> algbw 10, busbw 15.
  auto f = build(yaml, 4, [&](const PlannedCase& pc, int) {
    return ok_record(pc, pc.bytes == 8 ? 60.0 : static_cast<double>(kMiB) / 10e3, 4, 1.5);
  });
  const auto rep = judge(f.profile, f.records, nullptr);
  ASSERT_EQ(rep.rows.size(), 3u);
  EXPECT_EQ(rep.rows[0].verdict, Verdict::pass) << rep.rows[0].reason;  // 15 >= 15
  EXPECT_EQ(rep.rows[1].verdict, Verdict::pass);                        // 10 >= 4
  EXPECT_EQ(rep.rows[1].primary_metric, "algbw_gbps");
  EXPECT_EQ(rep.rows[2].verdict, Verdict::fail);  // 60 us > 50 us
  EXPECT_EQ(rep.rows[2].primary_metric, "time_us");
  EXPECT_NE(rep.rows[2].reason.find("time 60 us > 50 us (ceiling)"), std::string::npos) << rep.rows[2].reason;
  EXPECT_EQ(rep.rows[2].domain_label, "all (ranks 0-3)");
}

TEST(AcceptJudge, MedianAndBestPolicies) {
  // Repetitions at 2, 6 and 9 GB/s (2 ranks, factor 1): median 6, best 9; floor 7.
  const std::vector<double> gbps{2.0, 6.0, 9.0};
  const auto make = [&](const PlannedCase& pc, int) {
    return ok_record(pc, static_cast<double>(pc.bytes) / (gbps[static_cast<std::size_t>(pc.repetition)] * 1e3), 2, 1.0);
  };
  auto fm = build(
      "name: t\nchecks:\n  - {name: c, collective: allreduce, bytes: 1M, policy: median, threshold: "
      "{min_busbw_gbps: 7}}\n",
      2, make);
  const auto m = judge(fm.profile, fm.records, nullptr);
  ASSERT_EQ(m.rows.size(), 1u);
  EXPECT_NEAR(*m.rows[0].busbw, 6.0, 1e-9);
  EXPECT_EQ(m.rows[0].busbw_gbps.size(), 3u);
  EXPECT_EQ(m.rows[0].verdict, Verdict::fail);
  EXPECT_EQ(m.rows[0].policy_text, "median of 3");

  auto fb = build(
      "name: t\nchecks:\n  - {name: c, collective: allreduce, bytes: 1M, policy: best, threshold: "
      "{min_busbw_gbps: 7, max_time_us: 200}}\n",
      2, make);
  const auto b = judge(fb.profile, fb.records, nullptr);
  EXPECT_NEAR(*b.rows[0].busbw, 9.0, 1e-9);
  EXPECT_NEAR(*b.rows[0].time, static_cast<double>(kMiB) / 9e3, 1e-9);  // best time = shortest
  EXPECT_EQ(b.rows[0].verdict, Verdict::pass) << b.rows[0].reason;
  EXPECT_EQ(b.rows[0].policy_text, "best of 3");
}

TEST(AcceptJudge, PerDomainVerdictsUseEachDomainsNumbersAndBound) {
  // 16 ranks in two 8-GPU domains (h100-hgx); domain 1 is 3x slower than domain 0.
  const std::string yaml = R"(name: t
checks:
  - name: node-allreduce
    collective: allreduce
    scope: domain
    ranks_per_domain: 8
    bytes: 256M
    threshold: {fraction_of_bound: 0.5}
)";
  const auto system = collbench::model::load_system_profile("h100-hgx");
  collbench::model::CaseGeometry g;
  g.collective = "allreduce";
  g.algo = "auto";
  g.bytes = 256 * kMiB;
  g.placement = collbench::placement_from_sizes(8, {8});
  g.scope = collbench::Scope::domain;
  const auto est = collbench::model::model_case(system, g).estimate;
  ASSERT_TRUE(est);
  const double fast_us = est->bound_time_us / 0.8, slow_us = est->bound_time_us / 0.3;
  auto f = build(yaml, 16, [&](const PlannedCase& pc, int) {
    CaseRecord r = ok_record(pc, slow_us, 16, 1.75);
    r.domain_sizes = {8, 8};
    r.num_domains = 2;
    nlohmann::json dom = nlohmann::json::array();
    for (int d = 0; d < 2; ++d) {
      const double t = d == 0 ? fast_us : slow_us;
      const double alg = collbench::gbps(static_cast<double>(pc.bytes), t);
      dom.push_back({{"domain", d},
                     {"first_rank", 8 * d},
                     {"num_ranks", 8},
                     {"time_us", {{"p50", t}, {"mean", t}, {"ci95_low", t}, {"ci95_high", t}}},
                     {"algbw_gbps", alg},
                     {"busbw_gbps", alg * 1.75}});
    }
    r.extra["per_domain"] = dom;
    return r;
  });
  const auto rep = judge(f.profile, f.records, &system);
  ASSERT_EQ(rep.rows.size(), 2u);
  EXPECT_EQ(rep.rows[0].domain, 0);
  EXPECT_EQ(rep.rows[0].domain_label, "domain 0 (ranks 0-7)");
  EXPECT_EQ(rep.rows[1].domain_label, "domain 1 (ranks 8-15)");
  ASSERT_TRUE(rep.rows[0].bound_busbw_gbps);
  EXPECT_NEAR(*rep.rows[0].bound_busbw_gbps, est->bound_busbw_gbps, 1e-9);
  EXPECT_EQ(rep.rows[0].verdict, Verdict::pass) << rep.rows[0].reason;
  EXPECT_EQ(rep.rows[1].verdict, Verdict::fail) << rep.rows[1].reason;
  EXPECT_NEAR(*rep.rows[1].busbw / *rep.rows[1].bound_busbw_gbps, 0.3, 1e-9);
}

TEST(AcceptJudge, SilentFallbackAndWaivers) {
  const std::string yaml = R"(name: t
defaults: {threshold: {min_busbw_gbps: 1}, repetitions: 2}
checks:
  - {name: fallback, collective: allreduce, algo: nvls, require_algo: true, bytes: 1M}
  - {name: unreported, collective: allreduce, algo: nvls, require_algo: true, bytes: 1M}
  - {name: waived-required, collective: allreduce, algo: nvls, require_algo: true, bytes: 1M}
  - {name: waived-optional, collective: allreduce, algo: nvls, bytes: 1M}
  - {name: honest, collective: allreduce, algo: nvls, require_algo: true, bytes: 1M}
)";
  auto f = build(yaml, 2, [&](const PlannedCase& pc, int) {
    CaseRecord r = ok_record(pc, 10.0, 2, 1.0);
    switch (pc.check_index) {
      case 0:
        r.algo_used = pc.repetition == 0 ? "nvls" : "ring";
        break;
      case 1:
        break;  // backend reported nothing
      case 2:
      case 3:
        r.status = "waived";
        r.reason = "NVLS needs multicast support (CU_DEVICE_ATTRIBUTE_MULTICAST_SUPPORTED is 0)";
        r.time_us.reset();
        break;
      default:
        r.algo_used = "nvls";
    }
    return r;
  });
  const auto rep = judge(f.profile, f.records, nullptr);
  ASSERT_EQ(rep.rows.size(), 5u);
  EXPECT_EQ(rep.rows[0].verdict, Verdict::fail);
  EXPECT_NE(rep.rows[0].reason.find("silent fallback: requested algorithm 'nvls', the library ran 'ring'"),
            std::string::npos)
      << rep.rows[0].reason;
  EXPECT_EQ(rep.rows[1].verdict, Verdict::fail);
  EXPECT_NE(rep.rows[1].reason.find("did not report the algorithm"), std::string::npos) << rep.rows[1].reason;
  EXPECT_EQ(rep.rows[2].verdict, Verdict::fail);
  EXPECT_NE(rep.rows[2].reason.find("waived (NVLS needs multicast"), std::string::npos) << rep.rows[2].reason;
  EXPECT_NE(rep.rows[2].reason.find("requires algorithm 'nvls'"), std::string::npos);
  EXPECT_EQ(rep.rows[3].verdict, Verdict::waived);
  EXPECT_EQ(rep.rows[3].reason, "NVLS needs multicast support (CU_DEVICE_ATTRIBUTE_MULTICAST_SUPPORTED is 0)");
  EXPECT_EQ(rep.rows[4].verdict, Verdict::pass) << rep.rows[4].reason;
  EXPECT_EQ(rep.count(Verdict::fail), 3u);
  EXPECT_EQ(rep.count(Verdict::waived), 1u);
  EXPECT_EQ(rep.count(Verdict::pass), 1u);
}

TEST(AcceptJudge, WrongElementsFail) {
  auto f = build("name: t\nchecks:\n  - {name: c, collective: allreduce, bytes: 1M, threshold: {min_busbw_gbps: 1}}\n",
                 2, [&](const PlannedCase& pc, int i) {
                   CaseRecord r = ok_record(pc, 10.0, 2, 1.0);
                   if (i == 1) {
                     r.status = "failed";
                     r.reason = "1 wrong element(s): 1 on rank 1";
                   }
                   return r;
                 });
  const auto rep = judge(f.profile, f.records, nullptr);
  EXPECT_EQ(rep.rows[0].verdict, Verdict::fail);
  EXPECT_EQ(rep.rows[0].reason, "repetition 2: 1 wrong element(s): 1 on rank 1");
}

TEST(AcceptJudge, WithoutModelFallsBackToFloorOrCannotJudge) {
  const std::string yaml = R"(name: t
checks:
  - {name: with-floor, collective: allreduce, bytes: 1M, threshold: {fraction_of_expected: 0.5, min_busbw_gbps: 1}}
  - {name: no-floor, collective: allreduce, bytes: 1M, threshold: {fraction_of_bound: 0.5}}
)";
  auto f = build(yaml, 2, [&](const PlannedCase& pc, int) {
    CaseRecord r = ok_record(pc, static_cast<double>(kMiB) / 5e3, 2, 1.0);
    r.extra["model_note"] = "no system profile";
    return r;
  });
  const auto rep = judge(f.profile, f.records, nullptr);
  ASSERT_EQ(rep.rows.size(), 2u);
  EXPECT_EQ(rep.rows[0].verdict, Verdict::pass) << rep.rows[0].reason;
  EXPECT_NE(rep.rows[0].reason.find("busbw 5 GB/s >= 1 GB/s (floor)"), std::string::npos) << rep.rows[0].reason;
  EXPECT_NE(rep.rows[0].reason.find("fraction_of_expected 0.5: not judged (no system profile)"), std::string::npos)
      << rep.rows[0].reason;
  EXPECT_FALSE(rep.rows[0].limits[0].judged);
  EXPECT_EQ(rep.rows[1].verdict, Verdict::fail);
  EXPECT_NE(rep.rows[1].reason.find("cannot judge"), std::string::npos) << rep.rows[1].reason;
  EXPECT_NE(rep.rows[1].reason.find("absolute floor"), std::string::npos);
}

TEST(AcceptJudge, FailureNamesTheStraggler) {
  // Rank 1 arrives 20 ms late in every repetition: it waits least inside the collective.
  auto f = build("name: t\nchecks:\n  - {name: c, collective: allreduce, bytes: 1M, threshold: {max_time_us: 5000}}\n",
                 2, [&](const PlannedCase& pc, int) {
                   CaseRecord r = ok_record(pc, 20500.0, 2, 1.0);
                   r.per_rank->wait_us = {20300.0, 200.0};
                   return r;
                 });
  const auto rep = judge(f.profile, f.records, nullptr);
  EXPECT_EQ(rep.rows[0].verdict, Verdict::fail);
  ASSERT_EQ(rep.rows[0].evidence.size(), 1u);
  EXPECT_EQ(rep.rows[0].evidence[0].rfind("rank 1 slow on its own: arrived late in 3 of 3 cases", 0), 0u)
      << rep.rows[0].evidence[0];
  EXPECT_NE(rep.rows[0].reason.find("rank 1 slow on its own"), std::string::npos);
}

TEST(AcceptJudge, PairwiseJudgesTheSlowestRoundAndNamesItsPair) {
  // 4 ranks, rounds 0..2 of the circle method; ranks 1 and 3 take 10x as long in the round
  // where they meet.
  const std::string yaml = R"(name: t
checks:
  - {name: pairs, collective: sendrecv, pairing: round-robin, bytes: 1M, repetitions: 1, threshold: {min_busbw_gbps: 5}}
)";
  int round_13 = -1;
  for (int r = 0; r < 3; ++r) {
    if (collbench::round_robin_partner(1, r, 4) == 3) round_13 = r;
  }
  ASSERT_GE(round_13, 0);
  const double fast = static_cast<double>(kMiB) / 10e3;  // 10 GB/s
  auto f = build(yaml, 4, [&](const PlannedCase& pc, int) {
    const bool slow_round = pc.round == round_13;
    CaseRecord r = ok_record(pc, slow_round ? 10 * fast : fast, 4, 1.0);
    std::vector<double> p50(4, fast);
    if (slow_round) p50[1] = p50[3] = 10 * fast;
    r.extra["per_rank_p50_us"] = p50;
    return r;
  });
  ASSERT_EQ(f.groups[0].cases.size(), 3u);
  const auto rep = judge(f.profile, f.records, nullptr);
  ASSERT_EQ(rep.rows.size(), 1u);
  EXPECT_NEAR(*rep.rows[0].busbw, 1.0, 1e-9);  // the slowest round
  EXPECT_EQ(rep.rows[0].verdict, Verdict::fail);
  EXPECT_NE(rep.rows[0].reason.find(fmt::format("slowest pair 1-3 in round {}", round_13)), std::string::npos)
      << rep.rows[0].reason;
  // One slow link, and no rank slow on most of its links: the matrix names the link.
  ASSERT_EQ(rep.rows[0].evidence.size(), 2u);
  EXPECT_EQ(rep.rows[0].evidence[1],
            "pairwise matrix: link rank 1 - rank 3 is slow, 1 GB/s (10% of the reference link) "
            "in 1 of 1 repetitions");
}

TEST(AcceptJudge, PairwiseRoundsAreJudgedByTheirSlowestPairNotTheBarrierSkew) {
  // 4 ranks; every exchange takes 100 us (10.5 GB/s at 1 MiB), but each round's record time, the
  // maximum over ranks, is 300 us: one rank leaves the barrier late (its partner waits, and the
  // later-arriving partner's own time is the exchange's, report::pair_time_us). Judged by the
  // record the row would read 3.5 GB/s and FAIL; judged by the slowest pair it reads 10.5 GB/s.
  const std::string yaml = R"(name: t
checks:
  - {name: pairs, collective: sendrecv, pairing: round-robin, bytes: 1M, repetitions: 1, threshold: {min_busbw_gbps: 5}}
)";
  const double pair_us = 100.0;
  auto f = build(yaml, 4, [&](const PlannedCase& pc, int) {
    CaseRecord r = ok_record(pc, 3 * pair_us, 4, 1.0);
    std::vector<double> p50(4, pair_us);
    p50[static_cast<std::size_t>(pc.round)] = 3 * pair_us;  // the rank that waited for its late partner
    r.extra["per_rank_p50_us"] = p50;
    return r;
  });
  const auto rep = judge(f.profile, f.records, nullptr);
  ASSERT_EQ(rep.rows.size(), 1u);
  EXPECT_NEAR(*rep.rows[0].time, pair_us, 1e-9);
  EXPECT_NEAR(*rep.rows[0].busbw, static_cast<double>(kMiB) / (pair_us * 1e3), 1e-9);  // 10.49 GB/s
  EXPECT_EQ(rep.rows[0].verdict, Verdict::pass) << rep.rows[0].reason;
}

TEST(AcceptJudge, SampledRoundsAreJudgedAndSaidSo) {
  const std::string yaml = R"(name: t
checks:
  - {name: pairs, collective: sendrecv, pairing: round-robin, bytes: 1M, repetitions: 1, rounds: 3,
     threshold: {min_busbw_gbps: 5}}
)";
  const double fast = static_cast<double>(kMiB) / 10e3;  // 10 GB/s
  std::vector<int> rounds_seen;
  auto f = build(yaml, 8, [&](const PlannedCase& pc, int) {
    rounds_seen.push_back(pc.round);
    return ok_record(pc, fast, 8, 1.0);
  });
  EXPECT_EQ(rounds_seen, (std::vector<int>{0, 2, 4}));
  const auto rep = judge(f.profile, f.records, nullptr);
  ASSERT_EQ(rep.rows.size(), 1u);
  EXPECT_EQ(rep.rows[0].verdict, Verdict::pass) << rep.rows[0].reason;
  EXPECT_NE(std::find(rep.rows[0].evidence.begin(), rep.rows[0].evidence.end(),
                      "3 of the 7 rounds measured (rounds: 3, spread over the round robin); a link only in the "
                      "others was not exchanged on"),
            rep.rows[0].evidence.end());
}

TEST(AcceptJudge, PairwiseMatrixNamesTheRankAndHostSlowOnEveryLink) {
  // 4 ranks on 4 hosts; rank 2's link is slow: every exchange with rank 2 takes 10x as long,
  // in both repetitions. The slowest round alone cannot say which partner is to blame; the
  // matrix over all rounds can.
  const std::string yaml = R"(name: t
checks:
  - {name: pairs, collective: sendrecv, pairing: round-robin, bytes: 1M, repetitions: 2, threshold: {min_busbw_gbps: 5}}
)";
  const double fast = static_cast<double>(kMiB) / 10e3;  // 10 GB/s
  auto f = build(yaml, 4, [&](const PlannedCase& pc, int) {
    const int partner = collbench::round_robin_partner(2, pc.round, 4);
    CaseRecord r = ok_record(pc, 10 * fast, 4, 1.0);
    std::vector<double> p50(4, fast);
    p50[2] = p50[static_cast<std::size_t>(partner)] = 10 * fast;
    r.extra["per_rank_p50_us"] = p50;
    return r;
  });
  const std::vector<std::string> hosts{"h0", "h1", "h2", "h3"};
  const auto rep = judge(f.profile, f.records, nullptr, hosts);
  ASSERT_EQ(rep.rows.size(), 1u);
  EXPECT_EQ(rep.rows[0].verdict, Verdict::fail);
  ASSERT_EQ(rep.rows[0].evidence.size(), 2u);
  EXPECT_EQ(rep.rows[0].evidence[1],
            "pairwise matrix: rank 2 (host h2) is slow on 3 of its 3 links (< 50% of the "
            "reference link, 10 GB/s) in 2 of 2 repetitions");
  EXPECT_NE(rep.rows[0].reason.find("rank 2 (host h2) is slow on 3 of its 3 links"), std::string::npos)
      << rep.rows[0].reason;
}

}  // namespace

TEST(AcceptJudge, PairwiseNamesTheRankInTheSlowestPairOfEveryRound) {
  // 8 ranks in one domain (scope domain: no matrix analysis), rank 5's link at a quarter of its
  // rate: whoever rank 5 meets, that pair is the round's slowest, 4x the median pair.
  const std::string yaml = R"(name: t
checks:
  - {name: pairs, collective: sendrecv, pairing: round-robin, scope: domain, bytes: 1M, repetitions: 1, threshold: {min_busbw_gbps: 5}}
)";
  const double fast = static_cast<double>(kMiB) / 10e3;  // 10 GB/s
  auto f = build(yaml, 8, [&](const PlannedCase& pc, int) {
    const int partner = collbench::round_robin_partner(5, pc.round, 8);
    CaseRecord r = ok_record(pc, 4 * fast, 8, 1.0);
    std::vector<double> p50(8, fast);
    p50[5] = p50[static_cast<std::size_t>(partner)] = 4 * fast;
    r.extra["per_rank_p50_us"] = p50;
    return r;
  });
  const auto rep = judge(f.profile, f.records, nullptr, {"h0", "h1", "h2", "h3", "h4", "h5", "h6", "h7"});
  ASSERT_EQ(rep.rows.size(), 1u);
  EXPECT_EQ(rep.rows[0].verdict, Verdict::fail);
  const auto& ev = rep.rows[0].evidence;
  EXPECT_NE(
      std::find(ev.begin(), ev.end(),
                "rank 5 (host h5) is in the slowest pair of 7 of 7 rounds: that rank's link is slow, not one pair"),
      ev.end())
      << fmt::format("{}", fmt::join(ev, " | "));
}

TEST(AcceptJudge, PairwiseNamesNoRankWhenNoPairStandsOut) {
  // Every pair equally fast (a healthy fabric judged against a floor it misses): no rank is named.
  const std::string yaml = R"(name: t
checks:
  - {name: pairs, collective: sendrecv, pairing: round-robin, scope: domain, bytes: 1M, repetitions: 1, threshold: {min_busbw_gbps: 50}}
)";
  const double fast = static_cast<double>(kMiB) / 10e3;
  auto f = build(yaml, 8, [&](const PlannedCase& pc, int) {
    CaseRecord r = ok_record(pc, fast, 8, 1.0);
    r.extra["per_rank_p50_us"] = std::vector<double>(8, fast);
    return r;
  });
  const auto rep = judge(f.profile, f.records, nullptr);
  ASSERT_EQ(rep.rows.size(), 1u);
  for (const auto& e : rep.rows[0].evidence) EXPECT_EQ(e.find("slowest pair of"), std::string::npos) << e;
}
