// estimate() on the shipped system profiles: hand-computed bounds per collective, algorithm and
// placement, the auto choice, unmodelled cases with their reasons, and the properties every
// estimate must keep (expected never beats bound; bound time grows with bytes; the per-GPU
// all-to-all bound does not rise from 256 to 1,024 GPUs).
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <string>

#include "collbench/core/error.hpp"
#include "collbench/core/placement.hpp"
#include "collbench/model/estimate.hpp"
#include "collbench/model/system_profile.hpp"
#include "collbench/model/traffic.hpp"
#include "collbench/workload/expected.hpp"

using namespace collbench;
using namespace collbench::model;

namespace {

constexpr double kGiB = 1073741824.0;

SystemProfile shipped(const std::string& name) {
  return load_system_profile(std::string(COLLBENCH_SOURCE_DIR) + "/profiles/systems/" + name + ".yaml");
}

// A CPU host as `collbench calibrate` would describe it: 10 GB/s point-to-point, 5 GB/s
// concurrent memory copy, 1 us latency, 10% margin.
SystemProfile cpu_profile() {
  return parse_system_profile(R"(name: cpu-test
kind: cpu
scale_up: {bandwidth: 10GB/s per-direction, hop_latency: 1us}
scale_out: {nics_per_gpu: 1, nic_bandwidth: 10GB/s per-direction, hop_latency: 1us, fabric: shared-memory}
memory: {copy_bandwidth: 5GB/s}
efficiency: {scale_up: 1.0, scale_out: 1.0}
calibrated: {date: 2025-01-01T00:00:00Z, host: test, ranks: 2, repetitions: 5, margin: 0.1}
sources: [unit test]
)",
                              "cpu-test.yaml");
}

CaseGeometry geometry(const std::string& collective, const std::string& algo, std::uint64_t bytes, Placement placement,
                      Scope scope = Scope::global, Dtype dtype = Dtype::float32) {
  CaseGeometry g;
  g.collective = collective;
  g.algo = algo;
  g.dtype = dtype;
  g.bytes = bytes;
  g.placement = std::move(placement);
  g.scope = scope;
  return g;
}

Estimate must_estimate(const SystemProfile& s, const CaseGeometry& g) {
  const ModelOutcome out = model_case(s, g);
  EXPECT_TRUE(out.estimate.has_value()) << g.collective << "/" << g.algo << ": " << out.why_not;
  return out.estimate.value_or(Estimate{});
}

Placement rpd(int ranks, int per_domain) {
  return placement_from_ranks_per_domain(ranks, per_domain);
}

void expect_rel(double actual, double expected, double rel = 1e-9) {
  EXPECT_NEAR(actual, expected, std::abs(expected) * rel) << "actual " << actual << " expected " << expected;
}

}  // namespace

// ---- ring -----------------------------------------------------------------------------------

TEST(ModelEstimate, RingAllreduceOneRackBusbwIsNvlinkRate) {
  const auto e = must_estimate(shipped("gb300-nvl72"), geometry("allreduce", "ring", 1ULL << 30, rpd(72, 72)));
  expect_rel(e.bound_busbw_gbps, 900.0);
  expect_rel(e.wire_bytes_per_rank, 2.0 * 71 / 72 * kGiB);
  EXPECT_EQ(e.algo_modelled, "ring");
  EXPECT_EQ(e.system, "gb300-nvl72");
}

TEST(ModelEstimate, RingAllreduceAcrossHgxNodesIsNicBound) {
  // Two HGX H100 nodes: the ring's 2(n-1)/n S crossing each node is spread over 8 NICs of
  // 50 GB/s = 400 GB/s per node, below NVLink's 450: busbw bound = 400 GB/s.
  const auto e = must_estimate(shipped("h100-hgx"), geometry("allreduce", "ring", 1ULL << 30, rpd(16, 8)));
  expect_rel(e.bound_busbw_gbps, 400.0);
}

TEST(ModelEstimate, RingAllreduceAcrossNvl72RacksStaysNvlinkBound) {
  // 72 NICs x 50 GB/s per GB200 rack far exceed one GPU's 900 GB/s of NVLink.
  const auto e = must_estimate(shipped("gb200-nvl72"), geometry("allreduce", "ring", 1ULL << 30, rpd(288, 72)));
  expect_rel(e.bound_busbw_gbps, 900.0);
}

TEST(ModelEstimate, ReduceScatterAndBroadcastRingOnHgx) {
  const auto h100 = shipped("h100-hgx");
  expect_rel(must_estimate(h100, geometry("reducescatter", "ring", 1ULL << 30, rpd(8, 8))).bound_busbw_gbps, 450.0);
  expect_rel(must_estimate(h100, geometry("allgather", "ring", 1ULL << 30, rpd(8, 8))).bound_busbw_gbps, 450.0);
  expect_rel(must_estimate(h100, geometry("broadcast", "ring", 1ULL << 30, rpd(8, 8))).bound_busbw_gbps, 450.0);
}

TEST(ModelEstimate, TreeAllreduceHalvesAlgbw) {
  // Double binary tree on 8 GPUs: 2S per rank, algbw <= 225, busbw <= 1.75 x 225 = 393.75.
  const auto e = must_estimate(shipped("h100-hgx"), geometry("allreduce", "tree", 1ULL << 30, rpd(8, 8)));
  expect_rel(e.bound_algbw_gbps, 225.0);
  expect_rel(e.bound_busbw_gbps, 393.75);
}

// ---- NVLS ----------------------------------------------------------------------------------

TEST(ModelEstimate, NvlsOneRackBoundAndCalibratedExpected) {
  const auto e = must_estimate(shipped("gb300-nvl72"), geometry("allreduce", "nvls", 8ULL << 30, rpd(72, 72)));
  expect_rel(e.bound_busbw_gbps, 127800.0 / 73);  // 2(m-1)/(m+1) x 900
  // The switch cap (770 GB/s busbw at 72 GPUs) belongs to expected: at 8 GiB latency is noise.
  EXPECT_GT(e.expected_busbw_gbps, 760.0);
  EXPECT_LE(e.expected_busbw_gbps, 770.0);
  EXPECT_NE(e.note.find("busbw may exceed the link rate"), std::string::npos);
}

TEST(ModelEstimate, NvlsOnHgxWithoutCalibratedCap) {
  const auto e = must_estimate(shipped("h100-hgx"), geometry("allreduce", "nvls", 8ULL << 30, rpd(8, 8)));
  expect_rel(e.bound_busbw_gbps, 700.0);  // 14/9 x 450
  EXPECT_NEAR(e.expected_busbw_gbps, 700.0 * 0.825, 2.0);
  EXPECT_NE(e.note.find("no calibrated switch cap"), std::string::npos);
}

TEST(ModelEstimate, NvlsReduceScatterLimits) {
  const auto gb300 = shipped("gb300-nvl72");
  // NCCL skips NVLS reduce-scatter above 32 local ranks...
  const auto skipped = model_case(gb300, geometry("reducescatter", "nvls", 1ULL << 30, rpd(72, 72)));
  EXPECT_FALSE(skipped.estimate.has_value());
  EXPECT_NE(skipped.why_not.find("32"), std::string::npos);
  // ... collbench's own multimem kernels do not: S/B_up, busbw (m-1)/m B_up = 887.5 GB/s.
  expect_rel(must_estimate(gb300, geometry("reducescatter", "cb-multimem", 1ULL << 30, rpd(72, 72))).bound_busbw_gbps,
             887.5);
  // On 8 GPUs NVLS reduce-scatter runs, with the ring's busbw bound 7/8 x 450.
  expect_rel(
      must_estimate(shipped("h100-hgx"), geometry("reducescatter", "nvls", 1ULL << 30, rpd(8, 8))).bound_busbw_gbps,
      393.75);
}

TEST(ModelEstimate, NvlsRefusesWhatTheSwitchCannotDo) {
  const auto gb300 = shipped("gb300-nvl72");
  const auto fp8 =
      model_case(gb300, geometry("allreduce", "nvls", 1 << 20, rpd(72, 72), Scope::global, Dtype::float8e4m3));
  EXPECT_FALSE(fp8.estimate.has_value());
  EXPECT_NE(fp8.why_not.find("cannot reduce float8e4m3"), std::string::npos);
  const auto across = model_case(gb300, geometry("allreduce", "nvls", 1 << 20, rpd(144, 72)));
  EXPECT_FALSE(across.estimate.has_value());
  EXPECT_NE(across.why_not.find("nvlstree"), std::string::npos);
  const auto cpu = model_case(cpu_profile(), geometry("allreduce", "nvls", 1 << 20, rpd(4, 4)));
  EXPECT_NE(cpu.why_not.find("no in-switch reduction"), std::string::npos);
}

// ---- across domains ----------------------------------------------------------------------------

TEST(ModelEstimate, HierarchicalAllreduceFourRacks) {
  // RS + AG in the rack: 2 x 71/72 x 1 GB / 900 GB/s = 2191.358 us; network AR of S/72 over
  // 4 racks: 2 x 3/4 x 1 GB / 72 / 100 GB/s = 208.333 us; sequential sum 2399.691 us.
  const auto e = must_estimate(shipped("gb300-nvl72"), geometry("allreduce", "hierarchical", 1000000000, rpd(288, 72)));
  expect_rel(e.bound_time_us, 2.0 * 71 / 72 * 1e9 / 900e9 * 1e6 + 1.5e9 / 72 / 100e9 * 1e6);
  EXPECT_NE(e.note.find("pipelined bound"), std::string::npos);
}

TEST(ModelEstimate, NvlsTreeUniformRacks) {
  // 4 x 64: NVLS in the rack (1 + 1/64) S / 900 GB/s = 1128.47 us; tree over 4 racks moves
  // 2S per rack over 64 NICs: 2 GB / 64 / 100 GB/s = 312.5 us; pipelined: the larger.
  const auto e = must_estimate(shipped("gb300-nvl72"), geometry("allreduce", "nvlstree", 1000000000, rpd(256, 64)));
  expect_rel(e.bound_time_us, 65.0 / 64 * 1e9 / 900e9 * 1e6);
}

TEST(ModelEstimate, NvlsTreeUnevenPackingShrinksTheTeam) {
  // 72+72+72+40: team gcd = 8, 32 teams. Bound: NVLS on 8 GPUs, 1.125 S / 900 GB/s = 1250 us,
  // beats the provable NIC traffic (S/2 over a crossing team's 8 NICs = 625 us).
  const auto e = must_estimate(shipped("gb300-nvl72"), geometry("allreduce", "nvlstree", 1000000000, rpd(256, 72)));
  expect_rel(e.bound_time_us, 1250.0);
  // Expected puts the whole tree on the teams' NICs: 2 S / 8 / (100 GB/s x 0.96) = 2604 us.
  EXPECT_GT(e.expected_time_us, 2e9 / 8 / 96e9 * 1e6);
  EXPECT_NE(e.note.find("gcd = 8"), std::string::npos);
  EXPECT_NE(e.note.find("3x72+40"), std::string::npos);
  // With a 7x72+8 packing the 8-GPU rack's NICs carry the rack-level tree: 2 S / 8 / 100 GB/s.
  const auto e512 = must_estimate(shipped("gb300-nvl72"), geometry("allreduce", "nvlstree", 1000000000, rpd(512, 72)));
  expect_rel(e512.bound_time_us, 2500.0);
}

TEST(ModelEstimate, AlltoallAcrossRacks64PerRack) {
  const auto gb300 = shipped("gb300-nvl72");
  const std::uint64_t bytes = 1ULL << 30;
  expect_rel(must_estimate(gb300, geometry("alltoall", "flat", bytes, rpd(256, 64))).bound_algbw_gbps, 400.0 / 3);
  expect_rel(must_estimate(gb300, geometry("alltoall", "flat", bytes, rpd(512, 64))).bound_algbw_gbps, 800.0 / 7);
  expect_rel(must_estimate(gb300, geometry("alltoall", "auto", bytes, rpd(1024, 64))).bound_algbw_gbps, 1600.0 / 15);
}

TEST(ModelEstimate, AlltoallAcrossRacksPartialRack) {
  const auto gb300 = shipped("gb300-nvl72");
  const std::uint64_t bytes = 1ULL << 30;
  const auto e256 = must_estimate(gb300, geometry("alltoall", "flat", bytes, rpd(256, 72)));
  expect_rel(e256.bound_algbw_gbps, 100.0 / 0.84375);
  EXPECT_NE(e256.note.find("0.8438"), std::string::npos);
  EXPECT_NE(e256.note.find("uneven packing 3x72+40"), std::string::npos);
  expect_rel(must_estimate(gb300, geometry("alltoall", "flat", bytes, rpd(1024, 72))).bound_algbw_gbps,
             100.0 / 0.984375);
}

TEST(ModelEstimate, AlltoallInsideOneRack) {
  const auto e = must_estimate(shipped("gb300-nvl72"), geometry("alltoall", "flat", 1ULL << 30, rpd(72, 72)));
  expect_rel(e.bound_busbw_gbps, 900.0);
}

TEST(ModelEstimate, HierarchicalAlltoallKeepsTheNetworkTerm) {
  // Aggregation merges messages but moves the same off-domain bytes: the bound is never below flat.
  const auto gb300 = shipped("gb300-nvl72");
  const auto flat = must_estimate(gb300, geometry("alltoall", "flat", 1ULL << 30, rpd(256, 64)));
  const auto hier = must_estimate(gb300, geometry("alltoall", "hierarchical", 1ULL << 30, rpd(256, 64)));
  EXPECT_GE(hier.bound_time_us, flat.bound_time_us);
}

TEST(ModelEstimate, SendrecvAcrossRacksIsNicBound) {
  const auto e = must_estimate(shipped("gb300-nvl72"), geometry("sendrecv", "auto", 1ULL << 30, rpd(144, 72)));
  expect_rel(e.bound_busbw_gbps, 100.0);
}

// ---- auto, scope, refusals ---------------------------------------------------------------------

TEST(ModelEstimate, AutoPicksLikeNcclTuner) {
  const auto gb300 = shipped("gb300-nvl72");
  // Small: latency decides (tree 2 x 7 hops beats ring's 2 x 71 and NVLS's 25 us).
  EXPECT_EQ(must_estimate(gb300, geometry("allreduce", "auto", 1024, rpd(72, 72))).algo_modelled, "tree");
  // Large: NVLS; the bound is the fastest candidate's (NVLS ld_reduce+st).
  const auto big = must_estimate(gb300, geometry("allreduce", "auto", 1ULL << 30, rpd(72, 72)));
  EXPECT_EQ(big.algo_modelled, "nvls");
  expect_rel(big.bound_busbw_gbps, 127800.0 / 73);
  EXPECT_NE(big.note.find("ring/tree/nvls"), std::string::npos);
}

TEST(ModelEstimate, DomainScopeUsesTheWorstDomain) {
  // 256 = 72+72+72+40, each rack runs its own ring: the 72-GPU racks finish last.
  const auto e =
      must_estimate(shipped("gb300-nvl72"), geometry("allreduce", "ring", 1ULL << 30, rpd(256, 72), Scope::domain));
  expect_rel(e.bound_time_us, 2.0 * 71 / 72 * kGiB / 900e9 * 1e6);
  EXPECT_EQ(e.busbw_ranks, 72);
  EXPECT_NE(e.note.find("scope domain"), std::string::npos);
}

TEST(ModelEstimate, RefusesImpossiblePlacementsAndUnknownCases) {
  const auto gb300 = shipped("gb300-nvl72");
  const auto too_big = model_case(gb300, geometry("allreduce", "ring", 1024, rpd(256, 128)));
  EXPECT_FALSE(too_big.estimate.has_value());
  EXPECT_NE(too_big.why_not.find("exceeds the 72-GPU"), std::string::npos);
  const auto moe = model_case(gb300, geometry("moe-dispatch", "auto", 1024, rpd(72, 72)));
  EXPECT_NE(moe.why_not.find("traffic-matrix"), std::string::npos);
  const auto pat = model_case(gb300, geometry("allreduce", "pat", 1024, rpd(72, 72)));
  EXPECT_NE(pat.why_not.find("no modelled 'pat'"), std::string::npos);
  EXPECT_FALSE(estimate(gb300, geometry("alltoall", "ring", 1024, rpd(72, 72))).has_value());
}

TEST(ModelEstimate, CpuProfileUsesMeasuredFigures) {
  const auto cpu = cpu_profile();
  // Ring over 4 ranks on 10 GB/s point-to-point: busbw bound 10 GB/s; domains are simulated, so
  // a domain size above any GPU rack is fine.
  const auto e = must_estimate(cpu, geometry("allreduce", "ring", 64 << 20, rpd(4, 4)));
  expect_rel(e.bound_busbw_gbps, 10.0);
  // Expected is capped by the 5 GB/s concurrent memory copy, never above it.
  EXPECT_LE(e.expected_busbw_gbps, 5.0);
  EXPECT_DOUBLE_EQ(e.bound_margin, 0.1);
  EXPECT_TRUE(estimate(cpu, geometry("allreduce", "auto", 1024, rpd(256, 128))).has_value());
}

TEST(ModelEstimate, EfficiencyAndBoundCheck) {
  Estimate e;
  e.bound_time_us = 100.0;
  e.bound_margin = 0.1;
  EXPECT_DOUBLE_EQ(efficiency(e, 125.0), 0.8);
  EXPECT_DOUBLE_EQ(efficiency(e, 0.0), 0.0);
  const auto ok = check_against_bound(e, 125.0);
  EXPECT_FALSE(ok.beats_bound);
  const auto noise = check_against_bound(e, 95.0);  // within the 10% calibration margin
  EXPECT_TRUE(noise.beats_bound);
  EXPECT_FALSE(noise.beyond_margin);
  const auto wrong = check_against_bound(e, 80.0);
  EXPECT_TRUE(wrong.beyond_margin);
}

// ---- traffic matrix -------------------------------------------------------------------------------

TEST(ModelTraffic, UniformMatrixMatchesAlltoallBound) {
  // 8 ranks in 2 domains of 4, 1 MB to every rank: each rank sends 3 MB in-domain and 4 MB
  // off-domain; bound = max(3 MB / 900 GB/s, 4 MB / 100 GB/s) = 40 us.
  const auto gb300 = shipped("gb300-nvl72");
  TrafficMatrix m{8, std::vector<std::uint64_t>(64, 1000000)};
  const auto t = estimate_from_traffic(gb300, m, rpd(8, 4));
  expect_rel(t.estimate.bound_time_us, 40.0);
  EXPECT_EQ(t.traffic.bytes_max_rank, 8000000u);
  EXPECT_EQ(t.traffic.bytes_in_domain, 8u * 3 * 1000000);
  EXPECT_EQ(t.traffic.bytes_off_domain, 8u * 4 * 1000000);
  EXPECT_EQ(t.traffic.bytes_logical_total, 64u * 1000000);
  const auto a2a = must_estimate(gb300, geometry("alltoall", "flat", 8000000, rpd(8, 4)));
  expect_rel(t.estimate.bound_time_us, a2a.bound_time_us);
  EXPECT_GE(t.estimate.expected_time_us, t.estimate.bound_time_us);
}

TEST(ModelTraffic, HottestReceiverSetsTheBound) {
  // Everyone sends 1 MB to everyone, and 10 MB to rank 5: rank 5 receives 4 x 10 MB off-domain.
  const auto gb300 = shipped("gb300-nvl72");
  TrafficMatrix m{8, std::vector<std::uint64_t>(64, 1000000)};
  for (int src = 0; src < 8; ++src) m.bytes[static_cast<std::size_t>(src * 8 + 5)] = 10000000;
  const auto t = estimate_from_traffic(gb300, m, rpd(8, 4));
  EXPECT_EQ(t.traffic.hottest_rank, 5);
  expect_rel(t.estimate.bound_time_us, 40e6 / 100e9 * 1e6);
  EXPECT_EQ(t.traffic.per_rank[5].recv_off_domain, 40000000u);
  EXPECT_NE(t.estimate.note.find("rank 5"), std::string::npos);
}

TEST(ModelTraffic, RejectsMismatchedShapes) {
  const auto gb300 = shipped("gb300-nvl72");
  EXPECT_THROW(estimate_from_traffic(gb300, TrafficMatrix{4, std::vector<std::uint64_t>(15, 1)}, rpd(4, 4)),
               InputError);
  EXPECT_THROW(estimate_from_traffic(gb300, TrafficMatrix{4, std::vector<std::uint64_t>(16, 1)}, rpd(8, 4)),
               InputError);
}

TEST(ModelTraffic, MoeDispatchInsideVersusAcrossRacks) {
  // DeepSeek-V3 dispatch at T = 4096, FP8 rows (7392 B), dedup, uniform routing, EP64: the
  // workload closed form gives ~232 MB per GPU, ~3.6 MB per peer (docs/hardware-context.md section 6).
  const double per_gpu =
      workload::expected_dispatch_bytes_per_rank(4096, 256, 64, 8, workload::RowConvention::dedup, 7392);
  EXPECT_NEAR(per_gpu / 1e6, 232.4, 0.5);
  const auto per_peer = static_cast<std::uint64_t>(per_gpu / 64);
  EXPECT_NEAR(static_cast<double>(per_peer) / 1e6, 3.63, 0.01);
  const TrafficMatrix uniform{64, std::vector<std::uint64_t>(64 * 64, per_peer)};
  const auto gb300 = shipped("gb300-nvl72");
  // EP64 inside one rack: 63 peers over NVLink, 63 x 3.63 MB / 900 GB/s = 254 us.
  const auto inside = estimate_from_traffic(gb300, uniform, rpd(64, 64));
  expect_rel(inside.estimate.bound_time_us, 63.0 * static_cast<double>(per_peer) / 900e9 * 1e6);
  EXPECT_EQ(inside.traffic.bytes_off_domain, 0u);
  // The same EP group split over two racks: half the peers are behind a 100 GB/s NIC, 4.5x slower.
  const auto across = estimate_from_traffic(gb300, uniform, rpd(64, 32));
  expect_rel(across.estimate.bound_time_us, 32.0 * static_cast<double>(per_peer) / 100e9 * 1e6);
  EXPECT_GT(across.estimate.bound_time_us, 4.0 * inside.estimate.bound_time_us);
}

// ---- properties ------------------------------------------------------------------------------------

namespace {

std::vector<SystemProfile> all_profiles() {
  std::vector<SystemProfile> out;
  for (const char* name : {"gb300-nvl72", "gb200-nvl72", "h100-hgx", "h200-hgx"}) out.push_back(shipped(name));
  out.push_back(cpu_profile());
  return out;
}

std::vector<Placement> placements_for(const SystemProfile& s) {
  const int m = s.scale_up.domain_size > 0 ? s.scale_up.domain_size : 8;
  std::vector<Placement> out{rpd(2, 2), rpd(m, m), rpd(4 * m, m), rpd(3 * m + m / 2, m)};
  if (m >= 64) {
    for (const int n : {256, 512, 1024}) {
      out.push_back(rpd(n, 64));
      out.push_back(rpd(n, 72));
    }
  }
  return out;
}

}  // namespace

TEST(ModelProperties, ExpectedNeverBeatsBoundAndBoundGrowsWithBytes) {
  const std::vector<std::string> algos{"auto", "flat",     "ring",         "tree",
                                       "nvls", "nvlstree", "hierarchical", "cb-multimem"};
  const std::vector<std::uint64_t> sizes{0, 8, 4096, 1 << 20, 64 << 20, 1ULL << 30, 16ULL << 30};
  int modelled = 0;
  for (const auto& s : all_profiles()) {
    for (const auto& coll : modelled_collectives()) {
      for (const auto& algo : algos) {
        for (const auto& p : placements_for(s)) {
          for (const Scope scope : {Scope::global, Scope::domain}) {
            double previous_bound = -1.0;
            for (const auto bytes : sizes) {
              const auto e = estimate(s, geometry(coll, algo, bytes, p, scope, Dtype::bfloat16));
              if (!e) continue;
              ++modelled;
              const std::string what = s.name + " " + coll + " " + algo + " n=" + std::to_string(p.num_ranks()) +
                                       " bytes=" + std::to_string(bytes);
              EXPECT_GE(e->expected_time_us, e->bound_time_us * (1 - 1e-12)) << what;
              EXPECT_LE(e->expected_busbw_gbps, e->bound_busbw_gbps * (1 + 1e-12)) << what;
              EXPECT_GE(e->bound_time_us, previous_bound) << what;
              EXPECT_TRUE(std::isfinite(e->bound_time_us) && std::isfinite(e->expected_time_us)) << what;
              previous_bound = e->bound_time_us;
            }
          }
        }
      }
    }
  }
  EXPECT_GT(modelled, 2000);
}

TEST(ModelProperties, PerGpuAlltoallBoundDoesNotRiseFrom256To1024) {
  for (const char* name : {"gb300-nvl72", "gb200-nvl72"}) {
    const auto s = shipped(name);
    for (const int per_rack : {64, 72}) {
      double previous = std::numeric_limits<double>::infinity();
      for (const int n : {256, 512, 1024}) {
        const auto e = must_estimate(s, geometry("alltoall", "flat", 256ULL << 20, rpd(n, per_rack)));
        EXPECT_LE(e.bound_algbw_gbps, previous) << name << " n=" << n << " per rack " << per_rack;
        previous = e.bound_algbw_gbps;
      }
    }
  }
}
