// Host decisions of the NCCL backend that the first H200 run (2026-12-04) and its review found
// missing: communicators created in blocking mode whatever NCCL_COMM_BLOCKING says
// (nccl_host.hpp comm_creation_env), and --algo pat waived where NCCL disables PAT
// (nvls_host.hpp pat_waiver: NCCL 2.28.9 src/graph/tuning.cc ncclPatEnable) instead of ending
// the sweep with ncclInvalidUsage. CPU only; runs in every build.
#include <gtest/gtest.h>

#include <optional>
#include <string>

#include "collbench/backend/nccl/nccl_host.hpp"
#include "collbench/backend/nccl/nvls_host.hpp"

namespace {

using namespace collbench;
using namespace collbench::backend::nccl;

const int kV2289 = nccl_version_code(2, 28, 9);

// `n` ranks of compute capability `cc`, `per_node` of them on each NCCL node.
InSwitchProbe probe(int n, int per_node, int cc = 9) {
  InSwitchProbe p;
  p.nccl_version = kV2289;
  for (int r = 0; r < n; ++r) p.ranks.push_back({0, cc, "host " + std::to_string(r / per_node)});
  return p;
}

bool contains(const std::optional<std::string>& s, const std::string& needle) {
  return s && s->find(needle) != std::string::npos;
}

TEST(NcclHostSetup, CommunicatorsAreCreatedBlockingWhateverTheEnvironmentSays) {
  for (const char* algo : {"auto", "ring", "pat", "collnet", "nvls", "symmetric", "cb-multimem"}) {
    const AlgoSettings s = algo_settings(algo, kV2289);
    const auto env = comm_creation_env(s);
    // The algorithm's own settings first, unchanged ...
    const auto own = algo_env(s);
    ASSERT_EQ(env.size(), own.size() + 1) << algo;
    for (std::size_t i = 0; i < own.size(); ++i) {
      EXPECT_EQ(env[i].name, own[i].name) << algo;
      EXPECT_EQ(env[i].value, own[i].value) << algo;
    }
    // ... then blocking mode, which NCCL would otherwise take from a user's NCCL_COMM_BLOCKING=0.
    EXPECT_EQ(env.back().name, "NCCL_COMM_BLOCKING") << algo;
    EXPECT_EQ(env.back().value, "1") << algo;
  }
}

TEST(NcclHostSetup, PatNeedsOneGpuPerNode) {
  // One GPU per node (the first H200 run: one rank), and 8 nodes of one GPU: NCCL runs PAT.
  EXPECT_FALSE(pat_waiver("reducescatter", probe(1, 1)));
  EXPECT_FALSE(pat_waiver("allgather", probe(8, 1)));
  // An 8-GPU node, or 2 nodes of 4: NCCL disables PAT and a forced PAT has no algorithm left.
  const auto one_node = pat_waiver("allgather", probe(8, 8));
  EXPECT_TRUE(contains(one_node, "one GPU per node")) << one_node.value_or("runs");
  EXPECT_TRUE(contains(one_node, "8 ranks on 1 node(s), up to 8 on one")) << one_node.value_or("runs");
  EXPECT_TRUE(contains(pat_waiver("reducescatter", probe(8, 4)), "2 node(s)"));
  // Uneven: one node with two ranks is enough for NCCL (nNodes != nRanks).
  auto uneven = probe(3, 1);
  uneven.ranks[2].node = uneven.ranks[1].node;
  EXPECT_TRUE(pat_waiver("allgather", uneven));
}

TEST(NcclHostSetup, PatFollowsNcclPatEnableAndTheGpuGeneration) {
  auto p = probe(8, 8);
  p.pat_enable = "1";  // NCCL_PAT_ENABLE=1 forces it on, several GPUs per node or not
  EXPECT_FALSE(pat_waiver("allgather", p));
  p = probe(4, 1);
  p.pat_enable = "0";
  EXPECT_TRUE(contains(pat_waiver("allgather", p), "NCCL_PAT_ENABLE=0"));
  p.pat_enable = "2";  // NCCL's default: its own rule
  EXPECT_FALSE(pat_waiver("allgather", p));
  // sm_60 or newer on every rank, whatever the environment says.
  p = probe(2, 1, 5);
  p.pat_enable = "1";
  EXPECT_TRUE(contains(pat_waiver("reducescatter", p), "sm_60"));
}

TEST(NcclHostSetup, PatWaiverJudgesOnlyItsCollectives) {
  // The other collectives are nccl_algo_waiver's (NCCL implements PAT for RS and AG only).
  for (const char* coll : {"allreduce", "broadcast", "alltoall", "moe-dispatch"}) {
    EXPECT_FALSE(pat_waiver(coll, probe(8, 8))) << coll;
    EXPECT_TRUE(nccl_algo_waiver("pat", coll)) << coll;
  }
  EXPECT_FALSE(nccl_algo_waiver("pat", "reducescatter"));
}

}  // namespace

// Splits share their parent's resources where the loaded NCCL knows ncclConfig_t.splitShare.
TEST(NcclHostSetup, SplitsShareResourcesFromNccl218) {
  EXPECT_FALSE(nccl_split_share(nccl_version_code(2, 17, 1)));
  EXPECT_TRUE(nccl_split_share(nccl_version_code(2, 18, 1)));
  EXPECT_TRUE(nccl_split_share(kV2289));
  EXPECT_FALSE(nccl_split_share(0));  // not loaded
}
