// NVLink SHARP decisions of the NCCL backend (backend/nccl/nvls_host.hpp): NCCL's node grouping
// (hosts, or NVLink cliques under MNNVL), the waivers of nvls / nvlstree / cb-multimem from
// capability probes (multicast unsupported, domain too small, LSA team, device-communicator
// failure, dtype, NCCL version, environment), the waived path over the shipped NVLS sweep files
// as the runner sees it, and the record accounting (accumulation type, wire bytes, busbw note).
// CPU only; runs in every build.
#include <gtest/gtest.h>

#include <string>
#include <tuple>
#include <vector>

#include "collbench/backend/nccl/nccl_host.hpp"
#include "collbench/backend/nccl/nvls_host.hpp"
#include "collbench/plan/sweep.hpp"

namespace {

using namespace collbench;
using namespace collbench::backend::nccl;

const int kV2289 = nccl_version_code(2, 28, 9);

// `n` ranks with GPUs of compute capability `cc` and multicast `mc`, `per_node` ranks per node.
InSwitchProbe probe(int n, int per_node, int mc = 1, int cc = 10) {
  InSwitchProbe p;
  p.nccl_version = kV2289;
  for (int r = 0; r < n; ++r) p.ranks.push_back({mc, cc, "node " + std::to_string(r / per_node)});
  return p;
}

bool contains(const std::optional<std::string>& s, const std::string& needle) {
  return s && s->find(needle) != std::string::npos;
}

TEST(NvlsHost, NcclNodesAreHostsOrCliques) {
  std::vector<RankPlacementFacts> hosts{{"a", "", "", "", ""}, {"a", "", "", "", ""}, {"b", "", "", "", ""}};
  EXPECT_EQ(nccl_nodes(hosts, ""), (std::vector<std::string>{"host a", "host a", "host b"}));
  // An NVL72 rack: 18 hosts of 4 GPUs in one clique is one NCCL node under MNNVL.
  std::vector<RankPlacementFacts> rack;
  for (int r = 0; r < 72; ++r) rack.push_back({"tray" + std::to_string(r / 4), "completed", "u1", "7", "1"});
  auto nodes = nccl_nodes(rack, "");
  EXPECT_EQ(nodes.front(), "clique u1/7");
  EXPECT_EQ(nodes.back(), "clique u1/7");
  // Two racks: two cliques.
  auto two = rack;
  for (auto& f : two) f.fabric_cluster_uuid = "u2";
  two.insert(two.begin(), rack.begin(), rack.end());
  nodes = nccl_nodes(two, "");
  EXPECT_EQ(nodes[0], "clique u1/7");
  EXPECT_EQ(nodes[72], "clique u2/7");
  // MNNVL off (environment), or one rank without fabric handles: hosts.
  EXPECT_EQ(nccl_nodes(rack, "0")[5], "host tray1");
  rack[3].fabric_handle_support = "0";
  EXPECT_EQ(nccl_nodes(rack, "")[5], "host tray1");
}

// An HGX host whose NVML reports its fabric "completed" with a zero cluster UUID (NVSwitch
// systems without multi-node NVLink): NCCL turns MNNVL off (mnnvl.cc), so its nodes are hosts.
TEST(NvlsHost, ZeroClusterUuidIsNoFabric) {
  const std::string zero(32, '0');
  std::vector<RankPlacementFacts> hgx;
  for (int r = 0; r < 16; ++r) hgx.push_back({"node" + std::to_string(r / 8), "completed", zero, "0", "1"});
  const auto nodes = nccl_nodes(hgx, "");
  EXPECT_EQ(nodes[0], "host node0");
  EXPECT_EQ(nodes[15], "host node1");
  EXPECT_TRUE(zero_cluster_uuid(zero));
  EXPECT_TRUE(zero_cluster_uuid(""));
  EXPECT_FALSE(zero_cluster_uuid("00000000000000000000000000000001"));
}

TEST(NvlsHost, OnlyInSwitchAlgorithmsAreJudged) {
  const auto pcie = probe(2, 2, /*mc=*/0);
  for (const char* algo : {"auto", "ring", "tree", "symmetric", "pat", "hierarchical"}) {
    EXPECT_FALSE(in_switch_waiver(algo, "allreduce", Dtype::float32, Redop::sum, pcie)) << algo;
  }
  EXPECT_TRUE(is_in_switch_algo("cb-multimem"));
  EXPECT_FALSE(is_in_switch_algo("symmetric"));
}

TEST(NvlsHost, MulticastUnsupportedWaivesEveryInSwitchAlgorithm) {
  auto p = probe(8, 8, /*mc=*/1);
  p.ranks[5].multicast = 0;
  for (const char* algo : {"nvls", "cb-multimem"}) {
    const auto why = in_switch_waiver(algo, "allreduce", Dtype::bfloat16, Redop::sum, p);
    EXPECT_TRUE(contains(why, "multicast unsupported")) << algo << ": " << why.value_or("");
    EXPECT_TRUE(contains(why, "rank 5")) << why.value_or("");
  }
  auto two_nodes = probe(8, 4, 1);
  two_nodes.ranks[0].multicast = 0;
  EXPECT_TRUE(contains(in_switch_waiver("nvlstree", "allreduce", Dtype::float32, Redop::sum, two_nodes),
                       "multicast unsupported"));
  // Not readable (no driver entry point): waived too, saying so.
  auto unknown = probe(8, 8, -1);
  EXPECT_TRUE(contains(in_switch_waiver("nvls", "allreduce", Dtype::float32, Redop::sum, unknown),
                       "multicast support unknown"));
  // Older GPU generation.
  EXPECT_TRUE(
      contains(in_switch_waiver("cb-multimem", "allreduce", Dtype::float32, Redop::sum, probe(4, 4, 1, 8)), "sm_90"));
}

TEST(NvlsHost, DomainTooSmall) {
  // One H200 on its own: nothing to reduce with.
  const auto one = probe(1, 1, 1, 9);
  for (const char* algo : {"nvls", "cb-multimem"}) {
    EXPECT_TRUE(contains(in_switch_waiver(algo, "allreduce", Dtype::float32, Redop::sum, one), "domain too small"))
        << algo;
  }
  // 3 hosts of 1 GPU each for nvlstree: each node has one GPU.
  EXPECT_TRUE(
      contains(in_switch_waiver("nvlstree", "allreduce", Dtype::float32, Redop::sum, probe(3, 1)), "domain too small"));
  // NCCL's LSA team smaller than 2.
  auto p = probe(8, 8);
  p.lsa_ranks = 1;
  EXPECT_TRUE(
      contains(in_switch_waiver("cb-multimem", "allreduce", Dtype::float32, Redop::sum, p), "domain too small"));
}

TEST(NvlsHost, NodeRulesOfNcclTuning) {
  const auto hgx = probe(8, 8);
  EXPECT_FALSE(in_switch_waiver("nvls", "allreduce", Dtype::bfloat16, Redop::sum, hgx));
  EXPECT_TRUE(contains(in_switch_waiver("nvlstree", "allreduce", Dtype::bfloat16, Redop::sum, hgx), "single node"));
  const auto two = probe(16, 8);
  EXPECT_TRUE(contains(in_switch_waiver("nvls", "allreduce", Dtype::bfloat16, Redop::sum, two), "use nvlstree"));
  EXPECT_FALSE(in_switch_waiver("nvlstree", "allreduce", Dtype::bfloat16, Redop::sum, two));
  // NVL72: all-reduce fine; NVLS reduce-scatter / all-gather skipped above 32 local ranks.
  const auto rack = probe(72, 72);
  EXPECT_FALSE(in_switch_waiver("nvls", "allreduce", Dtype::bfloat16, Redop::sum, rack));
  const auto rs = in_switch_waiver("nvls", "reducescatter", Dtype::bfloat16, Redop::sum, rack);
  EXPECT_TRUE(contains(rs, "32")) << rs.value_or("");
  EXPECT_TRUE(contains(in_switch_waiver("nvls", "allgather", Dtype::bfloat16, Redop::sum, rack), "72"));
  EXPECT_FALSE(in_switch_waiver("nvls", "reducescatter", Dtype::bfloat16, Redop::sum, probe(32, 32)));
  // cb-multimem has no such limit.
  EXPECT_FALSE(in_switch_waiver("cb-multimem", "reducescatter", Dtype::bfloat16, Redop::sum, rack));
}

// NVML (hosts, fabric facts) and NCCL (its LSA team) disagree: NCCL's grouping decides, since
// NCCL is what runs or refuses the case.
TEST(NvlsHost, NcclsGroupingDecidesWhereNvmlDisagrees) {
  // An NVL72 tray pair whose fabric facts NVML did not report: NVML sees 2 hosts of 4, NCCL one
  // clique of 8 (its LSA team is all 8).
  auto cliq = probe(8, 4);
  cliq.lsa_ranks = 8;
  const InSwitchGrouping g1 = in_switch_grouping(cliq);
  EXPECT_EQ(std::make_tuple(g1.domains, g1.smallest, g1.largest, g1.source), std::make_tuple(1, 8, 8, kGroupingNccl));
  EXPECT_FALSE(in_switch_waiver("nvls", "allreduce", Dtype::bfloat16, Redop::sum, cliq));
  EXPECT_EQ(in_switch_waiver("nvlstree", "allreduce", Dtype::bfloat16, Redop::sum, cliq).value_or(""),
            "NCCL disables NVLSTree on a single node or NVLink clique (tuning.cc); this communicator is one (by NCCL's "
            "LSA team): use nvls");
  // NVML sees one clique of 8, NCCL two nodes of 4 (NCCL_MNNVL_ENABLE=0 for NCCL, or IMEX down).
  auto split = probe(8, 8);
  split.lsa_ranks = 4;
  EXPECT_EQ(
      in_switch_waiver("nvls", "allreduce", Dtype::bfloat16, Redop::sum, split).value_or(""),
      "NCCL runs NVLS inside one node or NVLink clique (tuning.cc disables it across nodes without CollNet); this "
      "communicator spans 2 nodes (by NCCL's LSA team): use nvlstree, or --scope domain");
  EXPECT_FALSE(in_switch_waiver("nvlstree", "allreduce", Dtype::bfloat16, Redop::sum, split));
  // A rack NVML calls one clique of 72 that NCCL runs as 18 trays of 4: no arity rule, two nodes.
  auto rack = probe(72, 72);
  rack.lsa_ranks = 4;
  EXPECT_TRUE(contains(in_switch_waiver("nvls", "reducescatter", Dtype::bfloat16, Redop::sum, rack), "spans 18 nodes"));
  EXPECT_FALSE(in_switch_waiver("nvlstree", "allreduce", Dtype::bfloat16, Redop::sum, rack));
  // Hosts of 8 and 4 GPUs: NCCL's LSA team is gcd(8, 4) = 4, three teams.
  auto uneven = probe(12, 8);
  uneven.lsa_ranks = 4;
  const InSwitchGrouping g2 = in_switch_grouping(uneven);
  EXPECT_EQ(std::make_tuple(g2.domains, g2.smallest, g2.largest), std::make_tuple(3, 4, 4));
  // NCCL could not say (ncclTeamLsa failed or absent): NVML's nodes, and the reason says so.
  auto unknown = probe(16, 8);
  unknown.lsa_ranks = -1;
  const InSwitchGrouping g3 = in_switch_grouping(unknown);
  EXPECT_EQ(std::make_tuple(g3.domains, g3.smallest, g3.largest, g3.source), std::make_tuple(2, 8, 8, kGroupingNvml));
  EXPECT_TRUE(contains(in_switch_waiver("nvls", "allreduce", Dtype::bfloat16, Redop::sum, unknown),
                       "spans 2 nodes (by NVML's host and fabric facts; NCCL's LSA team unknown)"));
  // One GPU per node as NCCL sees it, though NVML put 2 on each host.
  auto lone = probe(4, 2);
  lone.lsa_ranks = 1;
  EXPECT_EQ(in_switch_waiver("nvlstree", "allreduce", Dtype::float32, Redop::sum, lone).value_or(""),
            "domain too small: 1 GPU(s) of this communicator share an NVSwitch domain (4 rank(s) in 4 domain(s), by "
            "NCCL's LSA team); in-switch reduction needs at least 2");
}

TEST(NvlsHost, DtypeAndReduction) {
  const auto hgx = probe(8, 8);
  // cb-multimem: float32, bfloat16, float16 with sum; all-gather moves anything.
  for (Dtype d : {Dtype::float32, Dtype::bfloat16, Dtype::float16}) {
    EXPECT_FALSE(in_switch_waiver("cb-multimem", "allreduce", d, Redop::sum, hgx)) << to_string(d);
  }
  for (Dtype d : {Dtype::int32, Dtype::int64, Dtype::float64, Dtype::float8e4m3}) {
    EXPECT_TRUE(contains(in_switch_waiver("cb-multimem", "allreduce", d, Redop::sum, hgx), "dtype unsupported"))
        << to_string(d);
    EXPECT_FALSE(in_switch_waiver("cb-multimem", "allgather", d, Redop::sum, hgx)) << to_string(d);
  }
  EXPECT_TRUE(contains(in_switch_waiver("cb-multimem", "allreduce", Dtype::float32, Redop::max, hgx), "sum only"));
  EXPECT_TRUE(contains(in_switch_waiver("cb-multimem", "broadcast", Dtype::float32, Redop::sum, hgx),
                       "allreduce, reducescatter and allgather"));
  // NCCL's NVLS (ncclNvlsSupported).
  EXPECT_TRUE(nccl_nvls_reduces(Dtype::bfloat16, Redop::max));
  EXPECT_TRUE(nccl_nvls_reduces(Dtype::int64, Redop::min));
  EXPECT_TRUE(nccl_nvls_reduces(Dtype::float64, Redop::sum));
  EXPECT_FALSE(nccl_nvls_reduces(Dtype::float32, Redop::max));
  EXPECT_FALSE(nccl_nvls_reduces(Dtype::float16, Redop::prod));
  EXPECT_FALSE(nccl_nvls_reduces(Dtype::float8e5m2, Redop::sum));
  EXPECT_TRUE(contains(in_switch_waiver("nvls", "allreduce", Dtype::float32, Redop::prod, hgx), "does not reduce"));
  EXPECT_FALSE(in_switch_waiver("nvls", "allgather", Dtype::float8e4m3, Redop::prod, hgx));
}

TEST(NvlsHost, LibraryEnvironmentAndDeviceCommunicator) {
  auto p = probe(8, 8);
  p.nvls_enable = "0";
  EXPECT_TRUE(contains(in_switch_waiver("nvls", "allreduce", Dtype::float32, Redop::sum, p), "NCCL_NVLS_ENABLE=0"));
  p.nvls_enable = "1";
  EXPECT_FALSE(in_switch_waiver("nvls", "allreduce", Dtype::float32, Redop::sum, p));
  p.nccl_version = nccl_version_code(2, 27, 7);
  EXPECT_TRUE(contains(in_switch_waiver("cb-multimem", "allreduce", Dtype::float32, Redop::sum, p), "2.28"));
  EXPECT_FALSE(in_switch_waiver("nvls", "allreduce", Dtype::float32, Redop::sum, p));
  // Stage 2 of cb-multimem: NCCL's LSA team must be the whole communicator.
  auto q = probe(16, 16);
  q.lsa_ranks = 8;
  const auto lsa = in_switch_waiver("cb-multimem", "allreduce", Dtype::float32, Redop::sum, q);
  EXPECT_TRUE(contains(lsa, "LSA team")) << lsa.value_or("");
  EXPECT_TRUE(contains(lsa, "--scope domain")) << lsa.value_or("");
  q.lsa_ranks = -1;  // ncclTeamLsa failed
  EXPECT_TRUE(
      contains(in_switch_waiver("cb-multimem", "allreduce", Dtype::float32, Redop::sum, q), "NCCL_CUMEM_ENABLE"));
  q.lsa_ranks = 16;
  EXPECT_FALSE(in_switch_waiver("cb-multimem", "allreduce", Dtype::float32, Redop::sum, q));
  q.devcomm_error = "invalid usage (Multicast support requested for team but none available on system.)";
  const auto dev = in_switch_waiver("cb-multimem", "allgather", Dtype::float32, Redop::sum, q);
  EXPECT_TRUE(contains(dev, "ncclDevCommCreate")) << dev.value_or("");
  EXPECT_TRUE(contains(dev, "none available")) << dev.value_or("");
}

// The waived path as the runner takes it (algo_waiver, then the capability probe) over every case
// of the shipped NVLS sweeps: on a machine whose GPUs have no multicast, every in-switch case is
// waived with that reason and every ring/tree case still runs; on a single GPU, the in-switch cases
// are waived as "domain too small".
TEST(NvlsHost, ShippedSweepsWaiveInSwitchCasesWithTheProbeReason) {
  for (const char* name : {"nvls-gb300.yaml", "nvls-hgx.yaml"}) {
    const auto sweep = plan::load_sweep_file(std::string(COLLBENCH_SOURCE_DIR) + "/profiles/sweeps/" + name);
    ASSERT_FALSE(sweep.cases.empty()) << name;
    int in_switch = 0;
    int other = 0;
    for (const auto& c : sweep.cases) {
      EXPECT_EQ(c.backend, "nccl") << name;
      EXPECT_GE(c.bytes, 64u << 10) << name;
      EXPECT_LE(c.bytes, 8ull << 30) << name;
      for (const auto& [p, needle] : std::vector<std::pair<InSwitchProbe, std::string>>{
               {probe(8, 8, /*mc=*/0, 9), "multicast unsupported"}, {probe(1, 1, 1, 9), "domain too small"}}) {
        std::optional<std::string> why = nccl_algo_waiver(c.algo, c.collective);
        if (!why) why = in_switch_waiver(c.algo, c.collective, c.dtype, c.redop, p);
        if (is_in_switch_algo(c.algo)) {
          EXPECT_TRUE(contains(why, needle))
              << name << " " << c.algo << " " << c.collective << ": " << why.value_or("");
        } else {
          EXPECT_FALSE(why) << name << " " << c.algo << " " << c.collective << ": " << why.value_or("");
        }
      }
      (is_in_switch_algo(c.algo) ? in_switch : other) += 1;
      // Buffers: the sweep leaves them to the runner, which gives window buffers to the
      // algorithms that need them and plain memory to NCCL's forced algorithms.
      EXPECT_EQ(c.buffers, "host") << name;
      const std::string buffers = default_nccl_buffers(c.algo);
      EXPECT_EQ(buffers, c.algo == "symmetric" || c.algo == "cb-multimem" ? "symmetric" : "plain");
      EXPECT_NO_THROW((void)parse_buffer_kind_for_nccl(buffers, algo_settings(c.algo, kV2289))) << c.algo;
    }
    EXPECT_GT(in_switch, 0) << name;
    EXPECT_GT(other, 0) << name;
  }
}

TEST(NvlsHost, RecordAccounting) {
  // cb-multimem all-reduce of 1 MB on 8 GPUs: (1 + 1/8) x 1 MB per GPU and direction, float32
  // accumulation, the busbw note.
  auto a = in_switch_accounting("cb-multimem", "allreduce", Dtype::bfloat16, 1e6, 8);
  ASSERT_TRUE(a.accumulation_dtype);
  EXPECT_EQ(*a.accumulation_dtype, "float32");
  ASSERT_TRUE(a.wire_bytes_per_gpu);
  EXPECT_DOUBLE_EQ(*a.wire_bytes_per_gpu, 1.125e6);
  ASSERT_TRUE(a.busbw_note);
  EXPECT_NE(a.busbw_note->find("exceed"), std::string::npos);
  // 72 GPUs: (1 + 1/72) S.
  a = in_switch_accounting("nvls", "allreduce", Dtype::bfloat16, 72e6, 72);
  EXPECT_FALSE(a.accumulation_dtype);  // NCCL does not say
  EXPECT_DOUBLE_EQ(*a.wire_bytes_per_gpu, 73e6);
  // Reduce-scatter / all-gather: S; no busbw note (busbw cannot beat the link there).
  a = in_switch_accounting("cb-multimem", "reducescatter", Dtype::float16, 4e6, 4);
  EXPECT_EQ(a.accumulation_dtype.value_or(""), "float32");
  EXPECT_DOUBLE_EQ(*a.wire_bytes_per_gpu, 4e6);
  EXPECT_FALSE(a.busbw_note);
  a = in_switch_accounting("cb-multimem", "allgather", Dtype::bfloat16, 4e6, 4);
  EXPECT_FALSE(a.accumulation_dtype);  // no reduction
  EXPECT_DOUBLE_EQ(*a.wire_bytes_per_gpu, 4e6);
  // NVLSTree spans domains: the model (system profile) has its wire bytes; the note stays.
  a = in_switch_accounting("nvlstree", "allreduce", Dtype::bfloat16, 1e6, 144);
  EXPECT_FALSE(a.wire_bytes_per_gpu);
  EXPECT_TRUE(a.busbw_note);
  // Other algorithms: nothing.
  a = in_switch_accounting("ring", "allreduce", Dtype::bfloat16, 1e6, 8);
  EXPECT_FALSE(a.accumulation_dtype || a.wire_bytes_per_gpu || a.busbw_note);
}

}  // namespace
