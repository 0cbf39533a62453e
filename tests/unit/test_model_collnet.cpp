// In-network reduction (CollNet / SHARP) as an all-reduce candidate, the HGX B200 and H800
// profiles, and --set overrides of any profile key (issue 19 item 1). Every number below is
// computed by hand from the formulas of docs/model.md ("In-network reduction").
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "collbench/core/error.hpp"
#include "collbench/core/placement.hpp"
#include "collbench/model/estimate.hpp"
#include "collbench/model/profile_overrides.hpp"
#include "collbench/model/system_profile.hpp"

using namespace collbench;
using namespace collbench::model;

namespace {

constexpr double kS = 1073741824.0;  // 1 GiB

Estimate allreduce(const SystemProfile& s, const std::string& algo, std::vector<int> sizes,
                   Dtype dtype = Dtype::float32) {
  CaseGeometry g;
  g.collective = "allreduce";
  g.algo = algo;
  g.dtype = dtype;
  g.bytes = static_cast<std::uint64_t>(kS);
  int n = 0;
  for (int v : sizes) n += v;
  g.placement = placement_from_sizes(n, sizes);
  const auto outcome = model_case(s, g);
  if (!outcome.estimate) throw std::runtime_error("not modelled: " + outcome.why_not);
  return *outcome.estimate;
}

std::string why_not(const SystemProfile& s, const std::string& algo, std::vector<int> sizes) {
  CaseGeometry g;
  g.collective = "allreduce";
  g.algo = algo;
  g.bytes = 1 << 20;
  int n = 0;
  for (int v : sizes) n += v;
  g.placement = placement_from_sizes(n, sizes);
  return model_case(s, g).why_not;
}

}  // namespace

TEST(ModelCollNet, ShippedFiguresAndOffByDefault) {
  const auto b200 = load_system_profile("b200-hgx");
  EXPECT_EQ(b200.scale_up.domain_size, 8);
  EXPECT_DOUBLE_EQ(b200.scale_up.bytes_per_s, 900e9);      // 1.8 TB/s bidirectional
  EXPECT_DOUBLE_EQ(b200.scale_out.nic_bytes_per_s, 50e9);  // 400 Gb/s
  const auto h800 = load_system_profile("h800-hgx");
  EXPECT_DOUBLE_EQ(h800.scale_up.bytes_per_s, 200e9);  // 400 GB/s bidirectional
  EXPECT_DOUBLE_EQ(h800.scale_out.nic_bytes_per_s, 50e9);
  for (const auto& name : list_system_profiles()) {
    if (name == "cpu-local") continue;
    EXPECT_EQ(load_system_profile(name).scale_out.in_network.supported, name == "b200-hgx-sharp") << name;
  }
  const auto sharp = load_system_profile("b200-hgx-sharp");
  EXPECT_DOUBLE_EQ(sharp.scale_out.in_network.latency_s, 31e-6);
  EXPECT_TRUE(sharp.scale_out.in_network.reduces(Dtype::bfloat16));
  EXPECT_FALSE(sharp.scale_out.in_network.reduces(Dtype::float8e4m3));
}

TEST(ModelCollNet, NvlsCollNetBoundAndExpectedByHand) {
  const auto s = load_system_profile("b200-hgx-sharp");
  const auto e = allreduce(s, "nvls-collnet", std::vector<int>(8, 8));
  // NVLS in the domain: (1 + 1/8) S / 900 GB/s = 1342.18 us; network: S/8 / 50 GB/s = 2684.35 us.
  // Pipelined: the network sets the bound.
  EXPECT_DOUBLE_EQ(e.bound_time_us, kS / 8 / 50e9 * 1e6);
  EXPECT_NEAR(e.bound_busbw_gbps, 400.0 * 2 * 63 / 64, 1e-9);  // algbw 400 GB/s x 2(n-1)/n = 787.5
  // Expected: max(1.125 S / (900 x 0.825), S/8 / (50 x 0.96)) + a_nvls 25 + a_net 31 + launch 6.6 us.
  const double expected = std::max(1.125 * kS / (900e9 * 0.825), kS / 8 / (50e9 * 0.96)) * 1e6 + 25 + 31 + 6.6;
  EXPECT_NEAR(e.expected_time_us, expected, 1e-6);
  EXPECT_DOUBLE_EQ(e.wire_bytes_per_rank, 1.125 * kS + kS / 8);
  EXPECT_EQ(e.algo_modelled, "nvls-collnet");
}

// NCCL's CollNet Direct and Chain (NCCL_ALGO=CollNet) on 8 x 8 HGX B200 with SHARP, 1 GiB: the NVLink
// part is a reduce-scatter plus an all-gather, not NVLS.
TEST(ModelCollNet, DirectAndChainByHand) {
  const auto s = load_system_profile("b200-hgx-sharp");
  const std::vector<int> nodes(8, 8);
  const auto direct = allreduce(s, "collnet-direct", nodes);
  const auto chain = allreduce(s, "collnet-chain", nodes);
  // Bound (both): max(2 x 7/8 S / 900 GB/s, S/8 / 50 GB/s) = max(2087.8, 2684.4) us: the NICs.
  EXPECT_DOUBLE_EQ(direct.bound_time_us, kS / 8 / 50e9 * 1e6);
  EXPECT_DOUBLE_EQ(chain.bound_time_us, kS / 8 / 50e9 * 1e6);
  // Direct expected: max(1.75 S / 742.5 GB/s = 2530.7 us, S/8 / 48 GB/s = 2796.2 us) / 0.85 = 3289.6 us,
  // + NCCL's latency 2 (3.7 + 7 x 0.4) + 31 = 44 us + launch 6.6 us = 3340.25 us.
  const double direct_transfer = std::max(1.75 * kS / 742.5e9, kS / 8 / 48e9) / 0.85;
  EXPECT_NEAR(direct.expected_time_us, direct_transfer * 1e6 + 44.0 + 6.6, 1e-6);
  // Chain expected: max(2 S / 742.5 GB/s = 2892.2 us, 2796.2 us) + 2 x 7 x 2.8 + 31 = 70.2 us + 6.6 = 2969.0 us.
  EXPECT_NEAR(chain.expected_time_us, 2.0 * kS / 742.5e9 * 1e6 + 70.2 + 6.6, 1e-6);
  EXPECT_NEAR(chain.expected_time_us, 2969.0, 0.05);
  EXPECT_NEAR(direct.expected_time_us, 3340.25, 0.01);
  // busbw: 2969.0 us -> algbw 361.6 GB/s -> busbw x 126/64 = 712.0 GB/s; direct 643.6 GB/s.
  EXPECT_NEAR(chain.expected_busbw_gbps, kS / (2969.0e-6) / 1e9 * 126 / 64, 0.05);
  // NCCL_ALGO=CollNet: NCCL's tuner picks the faster; here the chain.
  const auto either = allreduce(s, "collnet", nodes);
  EXPECT_EQ(either.algo_modelled, "collnet-chain");
  EXPECT_DOUBLE_EQ(either.expected_time_us, chain.expected_time_us);
  EXPECT_NE(either.note.find("collnet: predicted collnet-chain"), std::string::npos) << either.note;
}

TEST(ModelCollNet, WithoutNvlsTheDomainRunsReduceScatterAndAllGather) {
  const auto s = load_system_profile("b200-hgx-sharp", {"in_switch.supported=false"});
  const auto direct = allreduce(s, "collnet-direct", {8, 8, 4});
  // In domain: 2 x 7/8 S / 900 GB/s = 2087.8 us; network: the 4-GPU domain's S/4 / 50 GB/s = 5368.7 us.
  EXPECT_DOUBLE_EQ(direct.bound_time_us, kS / 4 / 50e9 * 1e6);
  // Expected: NCCL's CollNet Direct rating 0.85 and latency 2 (3.7 + 7 x 0.4) + 31 us.
  const double transfer = std::max(1.75 * kS / (900e9 * 0.825), kS / 4 / (50e9 * 0.96)) / 0.85;
  EXPECT_NEAR(direct.expected_time_us, transfer * 1e6 + 44.0 + 6.6, 1e-6);
  // The chain: NIC-bound (S/4 / 48 GB/s = 5592.4 us > 2 S / 742.5 GB/s), no rating: NCCL's pick.
  const auto e = allreduce(s, "collnet", {8, 8, 4});
  EXPECT_EQ(e.algo_modelled, "collnet-chain");
  EXPECT_NEAR(e.expected_time_us, kS / 4 / 48e9 * 1e6 + 70.2 + 6.6, 1e-6);
  // Without an NVLink switch that reduces, nvls-collnet is not modelled.
  EXPECT_NE(why_not(s, "nvls-collnet", {8, 8}).find("nvls-collnet needs an NVLink switch"), std::string::npos);
}

TEST(ModelCollNet, AutoIsTheBestEnabledCandidate) {
  const auto plain = load_system_profile("b200-hgx");
  const auto sharp = load_system_profile("b200-hgx-sharp");
  const std::vector<int> racks(8, 8);
  // Without SHARP, 64 GPUs: the ring's NICs bound busbw at 8 x 50 = 400 GB/s (NVLS-tree over 8
  // teams moves 2S/8 per NIC: worse). With it, CollNet's S/8 per NIC: 787.5 GB/s.
  EXPECT_NEAR(allreduce(plain, "auto", racks).bound_busbw_gbps, 400.0, 1e-9);
  const auto best = allreduce(sharp, "auto", racks);
  EXPECT_EQ(best.algo_modelled, "nvls-collnet");
  EXPECT_NEAR(best.bound_busbw_gbps, 787.5, 1e-9);
  EXPECT_NE(best.note.find("ring/tree/nvlstree/collnet-direct/collnet-chain/nvls-collnet"), std::string::npos)
      << best.note;
  // One domain: nothing for the network to reduce.
  EXPECT_EQ(why_not(sharp, "collnet", {8}), "CollNet reduces across domains; one domain: use nvls or ring");
  EXPECT_EQ(allreduce(sharp, "auto", {8}).algo_modelled, "nvls");
  // A dtype the network cannot reduce leaves CollNet out of auto.
  EXPECT_EQ(allreduce(sharp, "auto", racks, Dtype::float8e4m3).note.find("collnet"), std::string::npos);
  EXPECT_NE(why_not(plain, "collnet", racks).find("has no in-network reduction"), std::string::npos);
}

TEST(ProfileOverrides, SetIsValidatedLikeTheFile) {
  const auto p = load_system_profile("b200-hgx", {"scale_out.oversubscription=2", "scale_out.nic_bandwidth=800Gb/s"});
  EXPECT_DOUBLE_EQ(p.scale_out.per_gpu_bytes_per_s(), 100e9 / 2);
  EXPECT_EQ(p.name, "b200-hgx");
  EXPECT_NE(p.description.find("(--set scale_out.oversubscription=2, scale_out.nic_bandwidth=800Gb/s)"),
            std::string::npos);
  EXPECT_NE(p.digest, load_system_profile("b200-hgx").digest);
  // Lists and new sections.
  const auto on = load_system_profile("h800-hgx", {"scale_out.in_network_reduction.supported=true",
                                                   "scale_out.in_network_reduction.dtypes=[float32, bfloat16]",
                                                   "scale_out.in_network_reduction.latency=31us"});
  EXPECT_TRUE(on.scale_out.in_network.reduces(Dtype::bfloat16));
  EXPECT_FALSE(on.scale_out.in_network.reduces(Dtype::float16));
  const auto message = [](const std::vector<std::string>& sets) {
    try {
      load_system_profile("b200-hgx", sets);
    } catch (const InputError& e) {
      return std::string(e.what());
    }
    return std::string("accepted");
  };
  EXPECT_NE(message({"scale_out.oversubscriptin=2"}).find("did you mean 'oversubscription'?"), std::string::npos);
  EXPECT_NE(message({"scale_out.oversubscription=0.5"}).find("scale_out.oversubscription"), std::string::npos);
  EXPECT_NE(message({"scale_up.bandwidth=900GB/s"}).find("names no direction"), std::string::npos);
  EXPECT_EQ(message({"name.x=1"}), "--set 'name.x=1': 'name' is a value, not a section with keys");
  EXPECT_EQ(message({"oversubscription"}),
            "--set 'oversubscription': expected KEY=VALUE with a profile key, e.g. scale_out.oversubscription=2 or "
            "scale_out.in_network_reduction.supported=true");
}
