// send/recv peer patterns (coll/sendrecv.hpp): ring, one round-robin round, one rail round;
// parameter checks, waivers and case-key labels. The runner's slow-pair injection uses the same
// peers. Pure C++ (no MPI).

#include <gtest/gtest.h>

#include <map>
#include <string>

#include "collbench/coll/collective.hpp"
#include "collbench/coll/sendrecv.hpp"
#include "collbench/core/error.hpp"
#include "collbench/core/pairing.hpp"
#include "collbench/core/placement.hpp"

namespace {

using namespace collbench::coll;

CaseContext ctx(int rank, int n, const std::map<std::string, std::string>* params,
                collbench::Placement placement = {}) {
  CaseContext c;
  c.rank = rank;
  c.num_ranks = n;
  c.params = params;
  c.placement = placement.domain_sizes.empty() ? collbench::placement_from_sizes(n, {n}) : placement;
  return c;
}

TEST(SendRecvPairing, RingIsTheDefault) {
  const auto p = sendrecv_peers(ctx(0, 4, nullptr));
  EXPECT_EQ(p.send_to, 1);
  EXPECT_EQ(p.recv_from, 3);
  const std::map<std::string, std::string> ring{{"pairing", "ring"}};
  EXPECT_EQ(sendrecv_peers(ctx(3, 4, &ring)).send_to, 0);
}

TEST(SendRecvPairing, RoundRobinExchangesWithTheRoundsPartner) {
  for (int round = 0; round < 5; ++round) {
    const std::map<std::string, std::string> params{{"pairing", "round-robin"}, {"round", std::to_string(round)}};
    for (int r = 0; r < 6; ++r) {
      const auto p = sendrecv_peers(ctx(r, 6, &params));
      EXPECT_EQ(p.send_to, collbench::round_robin_partner(r, round, 6));
      EXPECT_EQ(p.send_to, p.recv_from);
    }
  }
}

TEST(SendRecvPairing, RailPairsTheSameIndexInThePartnerDomain) {
  // 3 domains of 4: round r of the circle method over domains (one domain sits out each round).
  const auto placement = collbench::placement_from_ranks_per_domain(12, 4);
  for (int round = 0; round < 3; ++round) {
    const std::map<std::string, std::string> params{{"pairing", "rail"}, {"round", std::to_string(round)}};
    for (int r = 0; r < 12; ++r) {
      const int d = r / 4;
      const int other = collbench::round_robin_partner(d, round, 3);
      const int expected = other == d ? r : other * 4 + r % 4;
      EXPECT_EQ(sendrecv_peers(ctx(r, 12, &params, placement)).send_to, expected) << "rank " << r << " round " << round;
    }
  }
  // Uneven domains: a rank with no counterpart on its rail sits the round out.
  const auto uneven = collbench::placement_from_sizes(6, {4, 2});
  const std::map<std::string, std::string> params{{"pairing", "rail"}, {"round", "0"}};
  EXPECT_EQ(sendrecv_peers(ctx(1, 6, &params, uneven)).send_to, 5);
  EXPECT_EQ(sendrecv_peers(ctx(3, 6, &params, uneven)).send_to, 3);
}

TEST(SendRecvPairing, ParametersWaiversAndLabels) {
  EXPECT_NO_THROW(check_sendrecv_params({{"pairing", "round-robin"}, {"round", "3"}}));
  EXPECT_THROW(check_sendrecv_params({{"pairing", "pairs"}}), collbench::InputError);
  EXPECT_THROW(check_sendrecv_params({{"round", "1"}}), collbench::InputError);  // ring has no rounds
  EXPECT_THROW(check_sendrecv_params({{"pairing", "rail"}, {"round", "-1"}}), collbench::InputError);
  const Collective& c = find_collective("sendrecv");
  const std::map<std::string, std::string> rail{{"pairing", "rail"}, {"round", "0"}};
  EXPECT_TRUE(c.waiver(ctx(0, 4, &rail)));  // one domain
  EXPECT_FALSE(c.waiver(ctx(0, 4, &rail, collbench::placement_from_ranks_per_domain(4, 2))));
  const std::map<std::string, std::string> rr{{"pairing", "round-robin"}, {"round", "2"}};
  EXPECT_EQ(c.size_label(Shape{}, ctx(0, 4, &rr)), "round-robin-round2");
  EXPECT_EQ(c.size_label(Shape{}, ctx(0, 4, nullptr)), "");
}

}  // namespace
