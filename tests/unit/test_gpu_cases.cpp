// The host-side setup of every GPU test (tests/gpu/gpu_cases.hpp), built on the CPU: each case's
// shape on every rank the GPU tests can run it on, its device plans, and the host fill that
// gpu_verify.hpp's run_and_verify_host uploads. A collective, routing or workload change that
// breaks a GPU test's setup fails here (label unit) instead of first on a GPU, as the first H200
// run's DevicePatternsTest did (a routing that refused ep_size 3 for 256 experts).
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <set>
#include <string>
#include <vector>

#include "../gpu/gpu_cases.hpp"
#include "collbench/coll/collective.hpp"
#include "collbench/coll/device_plan.hpp"

namespace {

using namespace collbench;
namespace nccl = collbench::backend::nccl;
using gpu_test::CommCase;

// World sizes of the GPU tests (COLLBENCH_GPU_TEST_RANKS, one rank per GPU): one GPU, a few GPUs
// of a node, an odd count, two 8-GPU nodes, an NVL72 rack.
constexpr int kGpuWorldSizes[] = {1, 2, 3, 4, 8, 16, 72};

// What run_and_verify_host does on the host before the launch: the shape and the filled input.
void build_on_host(const CommCase& cc, int rank, int n) {
  coll::CaseContext ctx = cc.ctx;
  ctx.rank = rank;
  ctx.num_ranks = n;
  const coll::Shape s = gpu_test::host_shape(cc, rank, n);
  const std::size_t elem = dtype_size(ctx.dtype);
  const std::size_t input = ctx.in_place ? s.in_place_elems() : s.send_elems;
  std::vector<unsigned char> host(std::max<std::size_t>(input * elem, 1), 0);
  const std::size_t offset = ctx.in_place ? cc.collective->in_place_input_offset(s, ctx) : 0;
  cc.collective->fill(host.data() + offset * elem, s, ctx);
}

// Every case's shape on the first and last rank of n; the input of the first case of each
// family and size is filled (MoE: the routing of the case's token count).
void build_cases(const std::vector<CommCase>& cases, int n) {
  std::set<std::string> filled;
  for (const auto& cc : cases) {
    for (int rank : std::set<int>{0, n - 1}) {
      ASSERT_NO_THROW((void)gpu_test::host_shape(cc, rank, n)) << cc.where << " on rank " << rank << " of " << n;
    }
    const std::string key = std::string(cc.collective->name()) + "/" + std::to_string(cc.bytes);
    if (filled.insert(key).second) {
      ASSERT_NO_THROW(build_on_host(cc, n - 1, n)) << cc.where << " on rank " << n - 1 << " of " << n;
    }
  }
}

TEST(GpuCases, DevicePatternCasesBuildAndTheirPlansReproduceTheHostFill) {
  int mismatches = 0;
  const int cases = gpu_test::for_each_pattern_case([&](const gpu_test::PatternCase& pc) {
    const auto& s = pc.shape;
    const std::size_t elem = dtype_size(pc.ctx.dtype);
    std::vector<unsigned char> by_plan(std::max<std::size_t>(s.send_elems * elem, 1), 0);
    std::vector<unsigned char> by_family(by_plan.size(), 0);
    nccl::apply_plan_host(by_plan.data(), nccl::pattern_params(pc.ctx), pc.fill);
    pc.collective->fill(by_family.data(), s, pc.ctx);
    if (by_plan != by_family && ++mismatches < 5) ADD_FAILURE() << pc.where;
  });
  EXPECT_EQ(mismatches, 0);
  EXPECT_GT(cases, 300);  // what KernelsMatchHostFillAndVerify expects
  // Every family with a device plan takes part at every simulated rank count.
  for (const auto& c : coll::collective_registry()) {
    if (!gpu_test::has_device_plan(*c)) continue;
    for (int n : gpu_test::kPatternRankCounts) {
      EXPECT_TRUE(gpu_test::pattern_case(*c, Dtype::float32, Redop::sum, n, 0, 1000).has_value())
          << c->name() << " n=" << n;
    }
  }
}

TEST(GpuCases, LargeBufferCasesBuild) {
  for (Dtype d : {Dtype::float32, Dtype::bfloat16, Dtype::float8e4m3}) {
    const auto pc = gpu_test::large_buffer_case(d);
    EXPECT_GT(pc.shape.send_elems * dtype_size(d), std::size_t{1} << 31) << to_string(d);  // 2^31+ byte offsets
    ASSERT_EQ(pc.fill.size(), 1u);
    EXPECT_EQ(pc.fill[0].count, pc.shape.send_elems);
  }
}

TEST(GpuCases, EveryCollectiveCasesBuildOnEveryGpuWorldSize) {
  for (int n : kGpuWorldSizes) {
    gpu_test::Waived waived;
    const auto cases = gpu_test::every_collective_cases(n, &waived);
    ASSERT_FALSE(cases.empty()) << n;
    build_cases(cases, n);
    // Only families the runner itself would waive are left out, with its reason; the regular
    // families always run.
    for (const auto& [family, why] : waived) {
      EXPECT_EQ(family.rfind("moe-", 0), 0u) << family << " waived on " << n << " ranks: " << why;
      EXPECT_FALSE(why.empty());
    }
    const bool moe_fits = 256 % n == 0;  // the default workload: DeepSeek-V3, 256 experts
    EXPECT_EQ(waived.empty(), moe_fits) << n << " ranks";
  }
}

TEST(GpuCases, SplitAndFastPathCasesBuild) {
  for (int n : kGpuWorldSizes) {
    for (int half : std::set<int>{std::max(1, n / 2), (n + 1) / 2}) build_cases(gpu_test::split_cases(half), half);
    const auto fast = gpu_test::device_fast_path_cases();
    ASSERT_FALSE(fast.empty());
    for (const auto& cc : fast) {
      coll::CaseContext ctx = cc.ctx;
      ctx.rank = n - 1;
      ctx.num_ranks = n;
      const coll::Shape s = gpu_test::host_shape(cc, n - 1, n);
      EXPECT_TRUE(nccl::fill_plan(cc.collective->name(), s, ctx).has_value()) << cc.where;
      EXPECT_TRUE(nccl::verify_plan(cc.collective->name(), s, ctx).has_value()) << cc.where;
    }
  }
}

TEST(GpuCases, MultimemCasesBuild) {
  for (int m : kGpuWorldSizes) build_cases(gpu_test::multimem_cases(m), m);
}

}  // namespace
