// The MoE kernel's resources in traffic-matrix expected values (system profile `ep_kernel:`,
// docs/model.md "MoE kernel resources"): the section's parsing and errors, the SM cap and the
// per-peer cost pinned to hand-computed cases, the bound left alone, profiles without the section
// unchanged, and the GB200 NVL72 dispatch table of docs/model.md.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "collbench/core/error.hpp"
#include "collbench/core/placement.hpp"
#include "collbench/model/system_profile.hpp"
#include "collbench/model/traffic.hpp"
#include "collbench/workload/expected.hpp"

using namespace collbench;
using namespace collbench::model;

namespace {

// One domain of 8 GPUs at 100 GB/s per direction, efficiencies 1, no latencies: every expected
// time below is bytes / rate plus the kernel's terms, by hand.
std::string base_profile(const std::string& extra) {
  return R"(name: kernel-test
kind: gpu
scale_up: {domain_size: 8, bandwidth: 100GB/s per-direction, hop_latency: 0us}
scale_out: {nics_per_gpu: 1, nic_bandwidth: 10GB/s, hop_latency: 0us, fabric: rail-optimized}
efficiency: {scale_up: 1.0, scale_out: 1.0}
)" + extra +
         "sources: [unit test]\n";
}

SystemProfile profile(const std::string& extra) {
  return parse_system_profile(base_profile(extra), "t.yaml");
}

std::string error_of(const std::string& extra) {
  try {
    (void)profile(extra);
  } catch (const InputError& e) {
    return e.what();
  }
  return "no error";
}

Placement one_domain(int ranks) {
  return placement_from_ranks_per_domain(ranks, ranks);
}

void expect_rel(double actual, double expected, double rel = 1e-9) {
  EXPECT_NEAR(actual, expected, std::abs(expected) * rel) << "actual " << actual << " expected " << expected;
}

}  // namespace

TEST(EpKernelProfile, ParsesTheSection) {
  const auto p = profile("ep_kernel: {sms: 24, per_sm_bandwidth: 26.8GB/s, per_peer_cost: 4.5us}\n");
  ASSERT_TRUE(p.ep_kernel.has_value());
  EXPECT_EQ(p.ep_kernel->sms, 24);
  expect_rel(p.ep_kernel->per_sm_bytes_per_s, 26.8e9);
  expect_rel(p.ep_kernel->sm_bytes_per_s(), 24 * 26.8e9);
  expect_rel(p.ep_kernel->per_peer_s, 4.5e-6);
  const auto peer_only = profile("ep_kernel: {per_peer_cost: 2us}\n");
  EXPECT_EQ(peer_only.ep_kernel->sms, 0);
  EXPECT_EQ(peer_only.ep_kernel->sm_bytes_per_s(), 0.0);
  EXPECT_FALSE(profile("").ep_kernel.has_value());
}

TEST(EpKernelProfile, BadValuesNameTheKey) {
  EXPECT_EQ(error_of("ep_kernel: {sms: 24}\n"),
            "t.yaml:6: key 'ep_kernel.sms': needs ep_kernel.per_sm_bandwidth too (the SM cap is sms x "
            "per_sm_bandwidth)");
  EXPECT_EQ(error_of("ep_kernel: {per_sm_bandwidth: 20GB/s}\n"),
            "t.yaml:6: key 'ep_kernel.per_sm_bandwidth': needs ep_kernel.sms too (the SM cap is sms x "
            "per_sm_bandwidth)");
  EXPECT_EQ(error_of("ep_kernel: {}\n"),
            "t.yaml:6: key 'ep_kernel': sets nothing; accepted: sms with per_sm_bandwidth, per_peer_cost");
  EXPECT_NE(error_of("ep_kernel: {sms: 0, per_sm_bandwidth: 20GB/s}\n").find("key 'ep_kernel.sms'"), std::string::npos);
  EXPECT_NE(error_of("ep_kernel: {sms: 8, per_sm_bandwidth: fast}\n").find("key 'ep_kernel.per_sm_bandwidth'"),
            std::string::npos);
  EXPECT_NE(error_of("ep_kernel: {per_peer_cost: soon}\n").find("key 'ep_kernel.per_peer_cost'"), std::string::npos);
  EXPECT_NE(error_of("ep_kernel: {per_peer_cost: -3us}\n").find("key 'ep_kernel.per_peer_cost'"), std::string::npos);
  const std::string typo = error_of("ep_kernel: {sm: 8}\n");
  EXPECT_NE(typo.find("ep_kernel"), std::string::npos) << typo;
  EXPECT_NE(typo.find("sms"), std::string::npos) << typo;
}

TEST(EpKernelTerms, SmCapAndPeerCostByHand) {
  EpKernel k;
  k.sms = 2;
  k.per_sm_bytes_per_s = 10e9;
  k.per_peer_s = 5e-6;
  RankTraffic x;
  x.send_total = 4000000;  // 4 MB moved by the SMs (self included)
  x.recv_total = 3000000;
  x.send_peers = 3;
  x.recv_peers = 5;
  expect_rel(kernel_sm_time_s(k, x), 4e6 / 20e9);  // 200 us
  expect_rel(kernel_peer_time_s(k, x), 5 * 5e-6);  // the larger peer count: 25 us
  k.sms = 0;
  EXPECT_EQ(kernel_sm_time_s(k, x), 0.0);
}

TEST(EpKernelTerms, SummaryCountsPeersWithNonZeroBlocks) {
  // 4 ranks, 1 MB to every rank except 0 -> 3 (zero) and nothing to self on rank 1.
  TrafficMatrix m{4, std::vector<std::uint64_t>(16, 1000000)};
  m.bytes[3] = 0;
  m.bytes[5] = 0;
  const auto s = summarize_traffic(m, one_domain(4));
  EXPECT_EQ(s.per_rank[0].send_peers, 2);
  EXPECT_EQ(s.per_rank[3].recv_peers, 2);
  EXPECT_EQ(s.per_rank[1].send_peers, 3);  // self is never a peer
  EXPECT_EQ(s.per_rank[1].recv_peers, 3);
}

TEST(EpKernelEstimate, ExpectedAddsTheTermsBoundUnchanged) {
  // 4 ranks in one domain, 1 MB to every rank (self included): in-domain 3 MB per rank.
  const TrafficMatrix m{4, std::vector<std::uint64_t>(16, 1000000)};
  const auto plain = estimate_from_traffic(profile(""), m, one_domain(4));
  expect_rel(plain.estimate.bound_time_us, 30.0);     // 3 MB / 100 GB/s
  expect_rel(plain.estimate.expected_time_us, 30.0);  // efficiency 1, no latency
  EXPECT_EQ(plain.estimate.note.find("ep_kernel"), std::string::npos);

  // SM cap binding: 2 SMs x 10 GB/s move 4 MB in 200 us; 3 peers x 5 us.
  const auto capped = estimate_from_traffic(
      profile("ep_kernel: {sms: 2, per_sm_bandwidth: 10GB/s, per_peer_cost: 5us}\n"), m, one_domain(4));
  expect_rel(capped.estimate.bound_time_us, 30.0);
  expect_rel(capped.estimate.expected_time_us, 200.0 + 15.0);
  expect_rel(capped.estimate.expected_algbw_gbps, 4e6 / 215e-6 / 1e9);
  EXPECT_NE(capped.estimate.note.find("; ep_kernel: 2 SMs x 10 GB/s, 5 us x 3 peers (expected only)"),
            std::string::npos)
      << capped.estimate.note;

  // SM cap above the link: 10 SMs x 10 GB/s move 4 MB in 40 us > 30 us on the link; + 15 us.
  const auto wide = estimate_from_traffic(
      profile("ep_kernel: {sms: 10, per_sm_bandwidth: 10GB/s, per_peer_cost: 5us}\n"), m, one_domain(4));
  expect_rel(wide.estimate.expected_time_us, 40.0 + 15.0);

  // Per-peer cost alone: the link's 30 us + 3 x 5 us.
  const auto peers = estimate_from_traffic(profile("ep_kernel: {per_peer_cost: 5us}\n"), m, one_domain(4));
  expect_rel(peers.estimate.expected_time_us, 45.0);
}

TEST(EpKernelEstimate, Gb200DispatchTableOfModelMd) {
  // docs/model.md "MoE kernel resources": HybridEP's GB200 configuration, T = 4096 tokens per
  // rank, 8 local experts (E = 8P), top-8, FP8 rows of 7392 B, dedup, uniform routing, one rack.
  // Per rank B = T U 7392 with U = expected_destination_ranks(8P, P, 8); e_up = 900 x 0.825 GB/s.
  // Before: T = B (P-1)/P / e_up + 7.2 us (launch 6.6 + NVLink hop 0.6).
  // After:  T = max(B (P-1)/P / e_up, B / (32 x 45.5 GB/s)) + (P-1) x 4.53 us + 7.2 us.
  struct Row {
    int ep;
    double before_gbps;
    double after_gbps;
  };
  const std::vector<Row> rows{
      {8, 818.2, 706.7}, {16, 770.0, 610.2}, {32, 747.7, 506.2}, {36, 745.3, 486.7}, {64, 737.0, 385.6}};
  const SystemProfile gb200 =
      load_system_profile(std::string(COLLBENCH_SOURCE_DIR) + "/profiles/systems/gb200-nvl72.yaml");
  ASSERT_TRUE(gb200.ep_kernel.has_value());
  SystemProfile without = gb200;
  without.ep_kernel.reset();
  // The fall from EP8 to EP36 follows: 9% before, 31% after (HybridEP published: 713.98 -> 489.27
  // GB/s, 31%).
  for (const auto& row : rows) {
    const int p = row.ep;
    const double per_rank =
        workload::expected_dispatch_bytes_per_rank(4096, 8 * p, p, 8, workload::RowConvention::dedup, 7392);
    const auto per_pair = static_cast<std::uint64_t>(std::llround(per_rank / p));
    const TrafficMatrix m{p, std::vector<std::uint64_t>(static_cast<std::size_t>(p) * p, per_pair)};
    const auto before = estimate_from_traffic(without, m, one_domain(p));
    const auto after = estimate_from_traffic(gb200, m, one_domain(p));
    EXPECT_NEAR(before.estimate.expected_algbw_gbps, row.before_gbps, 0.05) << "EP" << p;
    EXPECT_NEAR(after.estimate.expected_algbw_gbps, row.after_gbps, 0.05) << "EP" << p;
    expect_rel(after.estimate.bound_time_us, before.estimate.bound_time_us);
  }
}
