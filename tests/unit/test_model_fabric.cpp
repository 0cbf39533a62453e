// Terms of the model that change with the number of domains a job spans (issue 19 item 2):
// static-ECMP collisions above the leaf, the taper above the leaf, and NCCL's NVLS heads. Every
// number is computed by hand (docs/model.md, "Expected from 1 to 20 racks").
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "collbench/core/error.hpp"
#include "collbench/core/placement.hpp"
#include "collbench/model/estimate.hpp"
#include "collbench/model/fabric.hpp"
#include "collbench/model/profile_overrides.hpp"
#include "collbench/model/system_profile.hpp"

using namespace collbench;
using namespace collbench::model;

namespace {

constexpr double kS = 1073741824.0;  // 1 GiB

Estimate allreduce(const SystemProfile& s, const std::string& algo, int domains, int per_domain) {
  CaseGeometry g;
  g.collective = "allreduce";
  g.algo = algo;
  g.bytes = static_cast<std::uint64_t>(kS);
  g.placement = placement_from_sizes(domains * per_domain, std::vector<int>(domains, per_domain));
  const auto outcome = model_case(s, g);
  if (!outcome.estimate) throw std::runtime_error("not modelled: " + outcome.why_not);
  return *outcome.estimate;
}

std::string message(const std::string& system, const std::vector<std::string>& sets) {
  try {
    load_system_profile(system, sets);
  } catch (const InputError& e) {
    return e.what();
  }
  return "accepted";
}

}  // namespace

TEST(ModelFabric, EcmpExpectedMaxLoadByHand) {
  // 4 flows on 4 uplinks: of 4^4 = 256 hashings, 24 put one flow per uplink, 4 put all on one,
  // 4 x 4 x 3 = 48 put three on one; the other 180 have a maximum of 2:
  // E[max] = (24 + 2 x 180 + 3 x 48 + 4 x 4) / 256 = 544 / 256 = 2.125.
  EXPECT_NEAR(ecmp_expected_max_load(4, 4), 2.125, 1e-12);
  EXPECT_NEAR(ecmp_rate_factor(4, 4), 1.0 / 2.125, 1e-12);
  // 3 on 3: 6 of 27 distinct, 3 all on one, 18 with a pair: (6 + 36 + 9) / 27.
  EXPECT_NEAR(ecmp_expected_max_load(3, 3), 51.0 / 27.0, 1e-12);
  // 2 on 4: the two collide with probability 1/4: E[max] = 1.25; ideal 1 flow per uplink.
  EXPECT_NEAR(ecmp_expected_max_load(2, 4), 1.25, 1e-12);
  EXPECT_NEAR(ecmp_rate_factor(2, 4), 0.8, 1e-12);
  // 8 on 2: E[max] = 4 + E|X - 4| for X ~ Binomial(8, 1/2) = 4 + 2 x (4x1 + 3x8 + 2x28 + 1x56)/256.
  EXPECT_NEAR(ecmp_expected_max_load(8, 2), 4.0 + 2.0 * 140.0 / 256.0, 1e-12);
  EXPECT_NEAR(ecmp_rate_factor(8, 2), 4.0 / (4.0 + 280.0 / 256.0), 1e-12);
  // 64 on 64 (docs/model.md's illustration): the same sum done independently in Python
  // (floating point, binomial counts bin by bin) gives 3.9577368640731.
  EXPECT_NEAR(ecmp_expected_max_load(64, 64), 3.9577368640731, 1e-9);
  // One uplink: no choice, no collision loss.
  EXPECT_DOUBLE_EQ(ecmp_expected_max_load(5, 1), 5.0);
  EXPECT_DOUBLE_EQ(ecmp_rate_factor(5, 1), 1.0);
  EXPECT_THROW(ecmp_expected_max_load(0, 4), std::invalid_argument);
}

TEST(ModelFabric, TermsApplyOnlyAboveTheLeaf) {
  const auto plain = load_system_profile("b200-hgx");
  const auto ecmp = load_system_profile(
      "b200-hgx", {"scale_out.routing=ecmp", "scale_out.ecmp_uplinks=4", "scale_out.leaf_domains=2"});
  EXPECT_EQ(ecmp.scale_out.routing, Routing::ecmp);
  EXPECT_EQ(ecmp.scale_out.ecmp_flows, 0);  // = uplinks
  EXPECT_DOUBLE_EQ(scale_out_routing_factor(plain.scale_out, 8), 1.0);
  EXPECT_DOUBLE_EQ(scale_out_routing_factor(ecmp.scale_out, 1), 1.0);
  EXPECT_DOUBLE_EQ(scale_out_routing_factor(ecmp.scale_out, 2), 1.0);  // under one leaf
  EXPECT_NEAR(scale_out_routing_factor(ecmp.scale_out, 3), 1.0 / 2.125, 1e-12);
  // Without leaf_domains every multi-domain job crosses the spine.
  const auto everywhere =
      load_system_profile("b200-hgx", {"scale_out.routing=ecmp", "scale_out.ecmp_uplinks=2", "scale_out.ecmp_flows=8"});
  EXPECT_NEAR(scale_out_routing_factor(everywhere.scale_out, 2), 4.0 / (4.0 + 280.0 / 256.0), 1e-12);
  // The taper: everywhere without a leaf span (as before), above the leaf only with one.
  const auto tapered = load_system_profile("b200-hgx", {"scale_out.oversubscription=2"});
  EXPECT_DOUBLE_EQ(scale_out_line_rate(tapered.scale_out, 2), 25e9);
  const auto leaf = load_system_profile("b200-hgx", {"scale_out.oversubscription=2", "scale_out.leaf_domains=4"});
  EXPECT_DOUBLE_EQ(scale_out_line_rate(leaf.scale_out, 4), 50e9);
  EXPECT_DOUBLE_EQ(scale_out_line_rate(leaf.scale_out, 5), 25e9);
}

TEST(ModelFabric, EcmpLowersExpectedNeverTheBound) {
  // 4 HGX B200 nodes, ring all-reduce of 1 GiB on 32 GPUs: each NIC carries
  // 2 x 31/32 S / 8 = 0.2421875 S; expected NIC rate 50 GB/s x 0.96, x 1/2.125 with ECMP (4 flows
  // on 4 uplinks, 4 nodes > a leaf of 2), against NVLink's 1.9375 S at 742.5 GB/s.
  const auto plain = load_system_profile("b200-hgx");
  const auto ecmp = load_system_profile(
      "b200-hgx", {"scale_out.routing=ecmp", "scale_out.ecmp_uplinks=4", "scale_out.leaf_domains=2"});
  const Estimate a = allreduce(plain, "ring", 4, 8);
  const Estimate b = allreduce(ecmp, "ring", 4, 8);
  EXPECT_DOUBLE_EQ(a.bound_time_us, b.bound_time_us);
  // At 1 GiB the Simple protocol is the fastest (docs/model.md "Protocols"): NCCL's base 8.4 us, 56
  // NVLink steps at 3.4 us (above the 3 x 1 us network overhead per step across nodes), 6 network
  // steps at 14 us.
  const double latency_us = 8.4 + (62 - 6) * 3.4 + 6 * 14.0;
  EXPECT_NEAR(a.expected_time_us, 0.2421875 * kS / (50e9 * 0.96) * 1e6 + latency_us, 1e-6);
  EXPECT_NEAR(b.expected_time_us, 0.2421875 * kS / (50e9 * 0.96 / 2.125) * 1e6 + latency_us, 1e-6);
  // Two nodes stay under one leaf: no collision term.
  EXPECT_DOUBLE_EQ(allreduce(plain, "ring", 2, 8).expected_time_us, allreduce(ecmp, "ring", 2, 8).expected_time_us);
}

TEST(ModelFabric, NvlsTreeThroughAtMost32HeadsPerRack) {
  // GB300 NVL72 with 100 Gb/s NICs (12.5 GB/s, expected 12 GB/s) so that the network binds:
  // 4 racks, tree factor 2: the expected NIC traffic is 2S/32 through 32 heads (NCCL's NVLS
  // arity), 2S/72 in the bound (every NIC). Expected = S/16 / 12 GB/s + 25 + 2 x 2 x 20.9 + 6.6 us.
  const auto slow = load_system_profile("gb300-nvl72", {"scale_out.nic_bandwidth=100Gb/s"});
  const Estimate e = allreduce(slow, "nvlstree", 4, 72);
  EXPECT_NEAR(e.expected_time_us, kS / 16.0 / 12e9 * 1e6 + 25.0 + 83.6 + 6.6, 1e-6);
  EXPECT_NEAR(e.bound_time_us, 2.0 * kS / 72.0 / 12.5e9 * 1e6, 1e-6);
  EXPECT_NE(e.note.find("through 32 NVLS heads per team (expected)"), std::string::npos) << e.note;
  // HGX nodes have 8 GPUs: every GPU is a head, no change.
  EXPECT_EQ(allreduce(load_system_profile("b200-hgx"), "nvlstree", 4, 8).note.find("NVLS heads"), std::string::npos);
}

TEST(ModelFabric, BadTopologyValuesNameKeyValueAndAcceptedOnes) {
  const std::string bad_routing = message("b200-hgx", {"scale_out.routing=hashed"});
  EXPECT_NE(bad_routing.find("b200-hgx.yaml"), std::string::npos) << bad_routing;
  EXPECT_NE(bad_routing.find("key 'scale_out.routing'"), std::string::npos) << bad_routing;
  EXPECT_NE(bad_routing.find("'hashed'"), std::string::npos) << bad_routing;
  EXPECT_NE(bad_routing.find("adaptive, ecmp"), std::string::npos) << bad_routing;
  EXPECT_NE(message("b200-hgx", {"scale_out.routing=ecmp"})
                .find("key 'scale_out.ecmp_uplinks': missing required key in 'scale_out'"),
            std::string::npos)
      << message("b200-hgx", {"scale_out.routing=ecmp"});
  const std::string zero = message("b200-hgx", {"scale_out.routing=ecmp", "scale_out.ecmp_uplinks=0"});
  EXPECT_NE(zero.find("key 'scale_out.ecmp_uplinks': must be in [1, 1024], got 0"), std::string::npos) << zero;
  const std::string flows =
      message("b200-hgx", {"scale_out.routing=ecmp", "scale_out.ecmp_uplinks=4", "scale_out.ecmp_flows=2000"});
  EXPECT_NE(flows.find("key 'scale_out.ecmp_flows': must be in [1, 1024], got 2000"), std::string::npos) << flows;
  const std::string alone = message("b200-hgx", {"scale_out.ecmp_uplinks=4"});
  EXPECT_NE(alone.find("key 'scale_out.ecmp_uplinks': applies only with scale_out.routing: ecmp"), std::string::npos)
      << alone;
  const std::string leaf = message("b200-hgx", {"scale_out.leaf_domains=0"});
  EXPECT_NE(leaf.find("key 'scale_out.leaf_domains': must be at least 1, got 0"), std::string::npos) << leaf;
  EXPECT_NE(message("b200-hgx", {"scale_out.leaf_domain=2"}).find("did you mean 'leaf_domains'?"), std::string::npos);
}
