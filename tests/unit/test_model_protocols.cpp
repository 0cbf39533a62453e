// NCCL's ring protocols (LL, LL128, Simple) and CollNet latencies in the model (issue 35 items 6
// and 7). Every number is computed by hand from NCCL 2.30.7's src/graph/tuning.cc tables
// (docs/model.md, "Protocols"): base latencies 6.6 / 14.0 / 8.4 us, NVLink steps 0.6 / 1.9 / 3.4 us,
// network steps 2.7 / 4.0 / 14.0 us, in-node steps across nodes at least 1 us (3 us with Simple).
#include <gtest/gtest.h>

#include <stdexcept>
#include <string>
#include <vector>

#include "collbench/core/placement.hpp"
#include "collbench/model/estimate.hpp"
#include "collbench/model/nccl_tuning.hpp"
#include "collbench/model/system_profile.hpp"

using namespace collbench;
using namespace collbench::model;

namespace {

const nccl::RingProtocol& protocol(nccl::Protocol p) {
  for (const auto& r : nccl::kRingProtocols) {
    if (r.protocol == p) return r;
  }
  throw std::logic_error("no protocol");
}

// NCCL's ring all-reduce latency over n ranks in R nodes with the protocol's own table figures.
double nccl_ring_allreduce_us(nccl::Protocol p, int n, int nodes) {
  const auto& r = protocol(p);
  const double intra = nccl::ring_intra_step_s(r, r.nvlink_hop_s, nodes);
  return nccl::ring_protocol_latency_s(r.base_s, intra, r.net_hop_s, 2 * (n - 1), 2 * (nodes - 1)) * 1e6;
}

Estimate ring(const SystemProfile& s, const std::string& collective, std::uint64_t bytes, std::vector<int> sizes) {
  CaseGeometry g;
  g.collective = collective;
  g.algo = "ring";
  g.bytes = bytes;
  int n = 0;
  for (int v : sizes) n += v;
  g.placement = placement_from_sizes(n, sizes);
  return *estimate(s, g);
}

}  // namespace

TEST(ModelProtocols, NcclRingLatencyAt1440Ranks) {
  // 20 racks of 72: 2 x 1439 = 2878 steps, 2 x 19 = 38 across the network, 2840 inside.
  // LL128: 14 + 2840 x 1.9 + 38 x 4.0 = 14 + 5396 + 152 = 5562 us (the issue's 5.6 ms).
  EXPECT_NEAR(nccl_ring_allreduce_us(nccl::Protocol::ll128, 1440, 20), 5562.0, 1e-6);
  // Simple: 8.4 + 2840 x 3.4 + 38 x 14 = 8.4 + 9656 + 532 = 10196.4 us (10.2 ms).
  EXPECT_NEAR(nccl_ring_allreduce_us(nccl::Protocol::simple, 1440, 20), 10196.4, 1e-6);
  // LL: the in-node step is max(0.6, 1.0 us of network overhead): 6.6 + 2840 + 38 x 2.7 = 2949.2 us.
  EXPECT_NEAR(nccl_ring_allreduce_us(nccl::Protocol::ll, 1440, 20), 2949.2, 1e-6);
  // One rack (no network): LL 6.6 + 142 x 0.6 = 91.8; LL128 14 + 142 x 1.9 = 283.8; Simple 8.4 + 142 x 3.4 = 491.2.
  EXPECT_NEAR(nccl_ring_allreduce_us(nccl::Protocol::ll, 72, 1), 91.8, 1e-9);
  EXPECT_NEAR(nccl_ring_allreduce_us(nccl::Protocol::ll128, 72, 1), 283.8, 1e-9);
  EXPECT_NEAR(nccl_ring_allreduce_us(nccl::Protocol::simple, 72, 1), 491.2, 1e-9);
  // Simple across nodes: the in-node step is max(3.4, 3 x 1.0) = 3.4 us.
  EXPECT_DOUBLE_EQ(nccl::ring_intra_step_s(protocol(nccl::Protocol::simple), 3.4e-6, 2), 3.4e-6);
  EXPECT_DOUBLE_EQ(nccl::ring_intra_step_s(protocol(nccl::Protocol::simple), 2.0e-6, 2), 3.0e-6);
}

TEST(ModelProtocols, RingExpectedIsTheFastestProtocol) {
  const auto s = load_system_profile("gb200-nvl72");
  const std::vector<int> racks(20, 72);
  // 8 bytes: latency only, LL wins: 2949.2 us (+ a negligible transfer).
  const auto tiny = ring(s, "allreduce", 8, racks);
  EXPECT_EQ(tiny.protocol, "LL");
  EXPECT_NEAR(tiny.expected_time_us, 2949.2, 0.01);
  EXPECT_NE(tiny.note.find("protocol LL (lowest expected of LL/LL128/Simple)"), std::string::npos) << tiny.note;
  // 1 GiB: T = 2 x 1439/1440 x S / (900 x 0.825 GB/s) = 2890.23 us on NVLink (the NICs need 621 us).
  // LL 2T + 2949.2 = 8729.65; LL128 T / 0.92 + 5562 = 8703.55; Simple T + 10196.4 = 13086.63: LL128.
  const double S = 1073741824.0;
  const double t_us = 2.0 * 1439 / 1440 * S / 742.5e9 * 1e6;
  const auto big = ring(s, "allreduce", 1ull << 30, racks);
  EXPECT_EQ(big.protocol, "LL128");
  EXPECT_NEAR(big.expected_time_us, t_us / 0.92 + 5562.0, 1e-6);
  EXPECT_NEAR(big.expected_time_us, 8703.55, 0.01);
  // LL128 loses to Simple once 0.087 T exceeds 10196.4 - 5562 us (T > 53.3 ms, about 18.4 GiB).
  // 16 GiB: LL128 still (50,265 + 5,562 us against 46,244 + 10,196); 32 GiB: Simple, 32 T + 10196.4
  // = 102,683.6 us against LL128's 106,091.6.
  EXPECT_EQ(ring(s, "allreduce", 16ull << 30, racks).protocol, "LL128");
  const auto huge = ring(s, "allreduce", 32ull << 30, racks);
  EXPECT_EQ(huge.protocol, "Simple");
  EXPECT_NEAR(huge.expected_time_us, 32.0 * t_us + 10196.4, 1e-6);
  // The bound never carries a latency: unchanged by the protocols.
  EXPECT_NEAR(big.bound_time_us, 2.0 * 1439 / 1440 * S / 900e9 * 1e6, 1e-6);
}

TEST(ModelProtocols, ReduceScatterHasHalfTheSteps) {
  const auto s = load_system_profile("gb200-nvl72");
  // 2 racks, 8 bytes: 143 steps, 1 across. LL: 6.6 + 142 x 1.0 + 2.7 = 151.3 us.
  const auto e = ring(s, "reducescatter", 8 * 144, {72, 72});
  EXPECT_EQ(e.protocol, "LL");
  EXPECT_NEAR(e.expected_time_us, 151.3, 0.01);
}

TEST(ModelProtocols, CpuProfilesHaveNoProtocols) {
  // MPI on a CPU host: one protocol, the profile's own latencies: 2 (4-1) x 1 us.
  const auto s = parse_system_profile(R"(name: cpu-test
kind: cpu
scale_up: {bandwidth: 10GB/s per-direction, hop_latency: 1us}
scale_out: {nics_per_gpu: 1, nic_bandwidth: 10GB/s per-direction, hop_latency: 1us, fabric: shared-memory}
efficiency: {scale_up: 1.0, scale_out: 1.0}
sources: [unit test]
)",
                                      "cpu-test.yaml");
  const auto e = ring(s, "allreduce", 8, {4});
  EXPECT_NEAR(e.expected_time_us, 6.0, 1e-2);
  EXPECT_EQ(e.protocol, "");
  EXPECT_EQ(e.note.find("protocol"), std::string::npos);
}

TEST(ModelProtocols, CollNetLatencies) {
  // Direct: 2 (min(1, m-1) x 3.7 + (m-1) x 0.4) + a_net; m = 8: 2 (3.7 + 2.8) + 31 = 44 us.
  EXPECT_NEAR(nccl::collnet_direct_latency_s(8, 31e-6) * 1e6, 44.0, 1e-9);
  // m = 1: no NVLink step: 31 us.
  EXPECT_NEAR(nccl::collnet_direct_latency_s(1, 31e-6) * 1e6, 31.0, 1e-9);
  // Chain: 2 (m-1) x 2.8 + a_net; m = 8: 39.2 + 31 = 70.2 us.
  EXPECT_NEAR(nccl::collnet_chain_latency_s(8, 31e-6) * 1e6, 70.2, 1e-9);
}
