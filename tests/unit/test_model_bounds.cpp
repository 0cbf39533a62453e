// The model's formulas against numbers computed by hand (docs/model.md shows each derivation).
// Pure arithmetic; no profile files involved.
#include <gtest/gtest.h>

#include <cmath>

#include "collbench/core/error.hpp"
#include "collbench/core/units.hpp"
#include "collbench/model/bounds.hpp"
#include "collbench/model/estimate.hpp"

using namespace collbench;
using namespace collbench::model;

namespace {
constexpr double kGB = 1e9;
// Relative comparison for values of any magnitude.
void expect_rel(double actual, double expected, double rel = 1e-9) {
  EXPECT_NEAR(actual, expected, std::abs(expected) * rel) << "actual " << actual << " expected " << expected;
}
}  // namespace

// The formulas are constexpr: the model can be checked at compile time too.
static_assert(ring_allreduce_wire_bytes(8.0, 4) == 12.0);
static_assert(nvls_allreduce_wire_bytes(8.0, 8) == 9.0);
static_assert(alltoall_off_domain_fraction(1024, 64) == 0.9375);
static_assert(double_binary_tree_wire_factor(1024) == 2.0);
static_assert(ceil_log2(72) == 7);

// ---- units: the two conversions every profile depends on ----------------------------------

TEST(ModelBounds, NvlinkBidirectionalIsHalfPerDirection) {
  // 1.8 TB/s bidirectional = 900 GB/s each way (18 links x 100 GB/s bidirectional / 2).
  expect_rel(per_direction_bytes_per_s(parse_rate("1.8TB/s bidirectional"), Direction::per_direction), 900 * kGB);
  // NVLink 4: 900 GB/s bidirectional = 450 GB/s each way.
  expect_rel(per_direction_bytes_per_s(parse_rate("900GB/s bidirectional"), Direction::per_direction), 450 * kGB);
}

TEST(ModelBounds, NicGigabitsToGigabytes) {
  // 800 Gb/s / 8 bits = 100 GB/s; 400 Gb/s = 50 GB/s (per direction, the NIC convention).
  expect_rel(per_direction_bytes_per_s(parse_rate("800Gb/s"), Direction::per_direction), 100 * kGB);
  expect_rel(per_direction_bytes_per_s(parse_rate("400Gb/s"), Direction::per_direction), 50 * kGB);
}

// ---- busbw factors --------------------------------------------------------------------------

TEST(ModelBounds, BusbwFactors) {
  EXPECT_DOUBLE_EQ(busbw_factor(BusbwRule::two_n_minus_1_over_n, 8), 1.75);         // 2 x 7/8
  EXPECT_DOUBLE_EQ(busbw_factor(BusbwRule::two_n_minus_1_over_n, 72), 142.0 / 72);  // 2 x 71/72
  EXPECT_DOUBLE_EQ(busbw_factor(BusbwRule::n_minus_1_over_n, 8), 0.875);
  EXPECT_DOUBLE_EQ(busbw_factor("alltoallv", 4), 0.75);
  EXPECT_DOUBLE_EQ(busbw_factor("broadcast", 64), 1.0);
  EXPECT_DOUBLE_EQ(busbw_factor("sendrecv", 2), 1.0);
  EXPECT_THROW(busbw_factor("allreduse", 8), InputError);
}

// ---- ring ---------------------------------------------------------------------------------------

TEST(ModelBounds, RingAllreduceWireBytes) {
  // n = 4: 2 x 3/4 x 1 GB = 1.5 GB per rank per direction.
  EXPECT_DOUBLE_EQ(ring_allreduce_wire_bytes(1e9, 4), 1.5e9);
  EXPECT_DOUBLE_EQ(ring_allreduce_wire_bytes(1e9, 1), 0.0);
  // Reduce-scatter / all-gather: half of it, 7/8 of S at n = 8.
  EXPECT_DOUBLE_EQ(ring_gather_scatter_wire_bytes(1e9, 8), 0.875e9);
}

TEST(ModelBounds, RingAllreduceBusbwBoundIsTheLinkRate) {
  // T = 2(n-1)/n S/B  =>  busbw = S/T x 2(n-1)/n = B, for any n.
  for (const int n : {2, 8, 72, 1024}) {
    const double bytes = 1 << 30;
    const double t = transfer_time_s(ring_allreduce_wire_bytes(bytes, n), 450 * kGB);
    expect_rel(bytes / t * busbw_factor(BusbwRule::two_n_minus_1_over_n, n), 450 * kGB);
  }
}

TEST(ModelBounds, RingLatencySplitsNvlinkAndNetworkSteps) {
  // n = 256 in 4 domains: 2(256-4) NVLink steps x 0.6 us + 2(4-1) network steps x 2.7 us.
  expect_rel(ring_allreduce_latency_s(256, 4, 0.6e-6, 2.7e-6), 302.4e-6 + 16.2e-6);
  // Reduce-scatter on 8 GPUs in one domain: 7 steps.
  expect_rel(ring_latency_s(8, 1, 0.6e-6, 2.7e-6), 4.2e-6);
}

// ---- tree ---------------------------------------------------------------------------------------

TEST(ModelBounds, DoubleBinaryTreeWireFactor) {
  EXPECT_DOUBLE_EQ(double_binary_tree_wire_factor(1), 0.0);
  EXPECT_DOUBLE_EQ(double_binary_tree_wire_factor(2), 1.0);  // each rank: degree 1 in both trees
  EXPECT_DOUBLE_EQ(double_binary_tree_wire_factor(3), 1.5);  // degree 2 + 1
  EXPECT_DOUBLE_EQ(double_binary_tree_wire_factor(4), 2.0);  // degree 3 + 1
  EXPECT_DOUBLE_EQ(double_binary_tree_wire_factor(1024), 2.0);
  // Tree all-reduce at large n: algbw <= B/2, busbw <= (n-1)/n B.
  const double t = transfer_time_s(tree_allreduce_wire_bytes(1e9, 8), 450 * kGB);
  expect_rel(1e9 / t * busbw_factor(BusbwRule::two_n_minus_1_over_n, 8), 393.75 * kGB);
}

TEST(ModelBounds, TreeLatencyGrowsWithLog2) {
  EXPECT_EQ(ceil_log2(1), 0);
  EXPECT_EQ(ceil_log2(2), 1);
  EXPECT_EQ(ceil_log2(3), 2);
  EXPECT_EQ(ceil_log2(72), 7);
  EXPECT_EQ(ceil_log2(1024), 10);
  // 4 racks of 72: 2 x (7 x 0.6 us + 2 x 2.7 us) = 19.2 us.
  expect_rel(tree_allreduce_latency_s(72, 4, 0.6e-6, 2.7e-6), 19.2e-6);
  // One domain of n reduces to 2 ceil(log2 n) alpha.
  expect_rel(tree_allreduce_latency_s(8, 1, 1e-6, 5e-6), 6e-6);
}

// ---- NVLink SHARP ------------------------------------------------------------------------------

TEST(ModelBounds, InSwitchHardwareBoundM8) {
  // 2(m-1)/m B_up = 2 x 7/8 x 450 = 787.5 GB/s.
  expect_rel(in_switch_allreduce_busbw_bound(8, 450 * kGB), 787.5 * kGB);
}

TEST(ModelBounds, InSwitchHardwareBoundM72) {
  // 2 x 71/72 x 900 = 1775 GB/s.
  expect_rel(in_switch_allreduce_busbw_bound(72, 900 * kGB), 1775 * kGB);
}

TEST(ModelBounds, NvlsLdReduceStoreBoundM8) {
  // 2(m-1)/(m+1) B_up = 14/9 x 450 = 700 GB/s.
  expect_rel(nvls_allreduce_busbw_bound(8, 450 * kGB), 700 * kGB);
  EXPECT_DOUBLE_EQ(nvls_allreduce_wire_bytes(8e9, 8), 9e9);  // (1 + 1/8) S
}

TEST(ModelBounds, NvlsLdReduceStoreBoundM72) {
  // 142/73 x 900 = 1750.684931... GB/s.
  expect_rel(nvls_allreduce_busbw_bound(72, 900 * kGB), 127800.0 / 73 * kGB);
  EXPECT_DOUBLE_EQ(nvls_allreduce_wire_bytes(72e9, 72), 73e9);
}

TEST(ModelBounds, NvlsBoundFollowsFromWireBytes) {
  // The closed form equals S / ((1+1/m) S/B) x 2(m-1)/m: the two derivations agree.
  for (const int m : {2, 4, 8, 36, 72}) {
    const double t = transfer_time_s(nvls_allreduce_wire_bytes(1e9, m), 900 * kGB);
    expect_rel(1e9 / t * busbw_factor(BusbwRule::two_n_minus_1_over_n, m), nvls_allreduce_busbw_bound(m, 900 * kGB));
  }
  // NVLS reduce-scatter alone: S/B_up, no gain over the ring's (m-1)/m B_up busbw.
  EXPECT_DOUBLE_EQ(nvls_gather_scatter_wire_bytes(3e9), 3e9);
}

// ---- all-to-all across racks -------------------------------------------------------------------

TEST(ModelBounds, AlltoallOffDomainFraction64PerRack) {
  EXPECT_DOUBLE_EQ(alltoall_off_domain_fraction(256, 64), 0.75);
  EXPECT_DOUBLE_EQ(alltoall_off_domain_fraction(512, 64), 0.875);
  EXPECT_DOUBLE_EQ(alltoall_off_domain_fraction(1024, 64), 0.9375);
}

TEST(ModelBounds, AlltoallAlgbwBound64PerRack) {
  // B_out / f: 1.33, 1.14, 1.07 x 100 GB/s.
  expect_rel(alltoall_algbw_bound(100 * kGB, 0.75), 400.0 / 3 * kGB);
  expect_rel(alltoall_algbw_bound(100 * kGB, 0.875), 800.0 / 7 * kGB);
  expect_rel(alltoall_algbw_bound(100 * kGB, 0.9375), 1600.0 / 15 * kGB);
}

TEST(ModelBounds, AlltoallPartialRackIsTheWorstRank) {
  // 72+72+72+40: the 40-GPU rack sends 216/256 = 0.84375 of S off-domain (1.19 x B_out).
  EXPECT_DOUBLE_EQ(alltoall_off_domain_fraction(256, 40), 0.84375);
  EXPECT_GT(alltoall_off_domain_fraction(256, 40), alltoall_off_domain_fraction(256, 72));
  expect_rel(alltoall_algbw_bound(100 * kGB, 0.84375), 118.518518518 * kGB, 1e-9);
  // 14 x 72 + 16 = 1024: f = 1008/1024 = 0.984375 (1.016 x B_out).
  EXPECT_DOUBLE_EQ(alltoall_off_domain_fraction(1024, 16), 0.984375);
  expect_rel(alltoall_algbw_bound(100 * kGB, 0.984375), 101.587301587 * kGB, 1e-9);
}

TEST(ModelBounds, AlltoallInDomain) {
  // A rank in a 72-GPU rack of a 256-GPU job keeps 71/256 of S on NVLink.
  EXPECT_DOUBLE_EQ(alltoall_in_domain_fraction(256, 72), 71.0 / 256);
  // One domain of 72: (m-1)/m S over NVLink, busbw = B_up.
  const double t = transfer_time_s(alltoall_in_domain_wire_bytes(1e9, 72), 900 * kGB);
  expect_rel(1e9 / t * busbw_factor(BusbwRule::n_minus_1_over_n, 72), 900 * kGB);
}

// ---- hierarchical ------------------------------------------------------------------------------

TEST(ModelBounds, HierarchicalAllreduceNetworkTerm) {
  // 2(R-1)/R x S/m: R = 4 racks of 72, S = 1 GB -> 1.5 GB / 72 = 20.833 MB per NIC,
  // 208.33 us at 100 GB/s.
  expect_rel(hierarchical_allreduce_network_bytes(1e9, 72, 4), 1.5e9 / 72);
  expect_rel(transfer_time_s(hierarchical_allreduce_network_bytes(1e9, 72, 4), 100 * kGB), 208.3333333e-6, 1e-9);
  EXPECT_DOUBLE_EQ(hierarchical_allreduce_network_bytes(1e9, 72, 1), 0.0);
  // Reduce-scatter / all-gather: half of it.
  expect_rel(hierarchical_gather_scatter_network_bytes(1e9, 72, 4), 0.75e9 / 72);
}

TEST(ModelBounds, HierarchicalPipelinedNetworkBusbw) {
  // ~ m B_out R/(R-1): 2 x 287/288 x 72 x 100 GB/s x 4 / 6 = 9566.67 GB/s (NVLink binds first).
  expect_rel(hierarchical_network_busbw_bound(288, 72, 4, 100 * kGB), 2.0 * 287 / 288 * 72 * 100 * kGB * 4 / 6);
  EXPECT_DOUBLE_EQ(hierarchical_network_busbw_bound(72, 72, 1, 100 * kGB), 0.0);
}

// ---- packing -------------------------------------------------------------------------------

TEST(ModelBounds, NvlsTeamIsGcdOfDomainSizes) {
  EXPECT_EQ(gcd_int(gcd_int(gcd_int(72, 72), 72), 40), 8);
  EXPECT_EQ(gcd_int(64, 64), 64);
  EXPECT_EQ(gcd_int(0, 72), 72);
}

TEST(ModelBounds, PackingString) {
  EXPECT_EQ(packing_string(placement_from_ranks_per_domain(256, 72)), "3x72+40");
  EXPECT_EQ(packing_string(placement_from_ranks_per_domain(256, 64)), "4x64");
  EXPECT_EQ(packing_string(placement_from_ranks_per_domain(72, 72)), "72");
  EXPECT_EQ(packing_string(placement_from_ranks_per_domain(1024, 72)), "14x72+16");
}
