// Device fill and check kernels (backend/nccl/device_kernels.cu) against the host path, on a GPU:
// for every collective family with a device plan, every dtype and reduction, several rank
// counts and ranks (simulated: a plan for rank r of n is just data), the fill kernel must write
// exactly the bytes of the family's fill(), and the check kernel must count what the family's
// verify() counts (0 on the expected result, 1 after one corruption, all on poison).
// Needs one GPU per rank (label `gpu`).
#include <gtest/gtest.h>
#include <mpi.h>

#include <algorithm>
#include <memory>
#include <string>
#include <vector>

#include "collbench/backend/nccl/nccl_backend.hpp"
#include "collbench/backend/registry.hpp"
#include "collbench/coll/collective.hpp"
#include "collbench/coll/device_plan.hpp"
#include "collbench/coll/pattern.hpp"
#include "gpu_cases.hpp"

namespace {

using namespace collbench;
namespace nccl = collbench::backend::nccl;

class DevicePatternsTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    backend::BackendOptions o;
    o.buffers = "plain";
    backend_ = backend::make_nccl_backend(o).release();
  }
  static void TearDownTestSuite() {
    delete backend_;
    backend_ = nullptr;
  }
  static backend::Backend& be() { return *backend_; }
  static nccl::DevicePatterns& dp() { return *nccl::device_patterns(*backend_); }

 private:
  static backend::Backend* backend_;
};
backend::Backend* DevicePatternsTest::backend_ = nullptr;

TEST_F(DevicePatternsTest, OnlyTheNcclBackendOffersThem) {
  ASSERT_NE(nccl::device_patterns(be()), nullptr);
  backend::BackendOptions o;
  auto mpi = backend::make_backend("mpi", o);
  EXPECT_EQ(nccl::device_patterns(*mpi), nullptr);
}

// The cases (rank counts, sizes, plans) come from gpu_cases.hpp, which the CPU unit test
// tests/unit/test_gpu_cases.cpp also builds.
TEST_F(DevicePatternsTest, KernelsMatchHostFillAndVerify) {
  const int checked = gpu_test::for_each_pattern_case([](const gpu_test::PatternCase& pc) {
    if (::testing::Test::HasFatalFailure()) return;  // the first mismatch is enough
    const auto& c = *pc.collective;
    const auto& s = pc.shape;
    const auto& ctx = pc.ctx;
    const auto& where = pc.where;
    const std::size_t elem = dtype_size(ctx.dtype);
    const auto params = nccl::pattern_params(ctx);

    // Fill kernel == family fill().
    auto send = be().allocate(std::max<std::size_t>(s.send_elems * elem, 1));
    dp().fill(send->data(), s.send_elems, params, pc.fill);
    std::vector<unsigned char> device_fill(std::max<std::size_t>(s.send_elems * elem, 1), 0);
    std::vector<unsigned char> host_fill(device_fill.size(), 0);
    be().download(device_fill.data(), *send, s.send_elems * elem);
    c.fill(host_fill.data(), s, ctx);
    ASSERT_EQ(device_fill, host_fill) << where;

    // Check kernel on poison (fresh buffer), on the expected result, after a corruption.
    auto recv = be().allocate(std::max<std::size_t>(s.recv_elems * elem, 1));
    EXPECT_EQ(dp().count_wrong(recv->data(), params, pc.verify), s.recv_elems) << where << " poison";
    dp().fill(recv->data(), s.recv_elems, params, pc.verify);  // the expected result, by kernel
    std::vector<unsigned char> expected(std::max<std::size_t>(s.recv_elems * elem, 1), 0);
    be().download(expected.data(), *recv, s.recv_elems * elem);
    ASSERT_EQ(c.verify(expected.data(), s, ctx), 0u) << where;
    ASSERT_EQ(dp().count_wrong(recv->data(), params, pc.verify), 0u) << where;
    if (s.recv_elems > 0) {
      const std::size_t victim = s.recv_elems / 2;
      dp().write(recv->data(), victim, ctx.dtype, coll::corrupted(dp().read(recv->data(), victim, ctx.dtype)));
      EXPECT_EQ(dp().count_wrong(recv->data(), params, pc.verify), 1u) << where;
      be().download(expected.data(), *recv, s.recv_elems * elem);
      EXPECT_EQ(c.verify(expected.data(), s, ctx), 1u) << where;
    }
  });
  EXPECT_GT(checked, 300);
}

// Large buffers: more elements than one grid covers (grid-stride loops), 2^31+ bytes offsets.
TEST_F(DevicePatternsTest, LargeBuffers) {
  for (Dtype d : {Dtype::float32, Dtype::bfloat16, Dtype::float8e4m3}) {
    const gpu_test::PatternCase pc = gpu_test::large_buffer_case(d);
    const auto& ctx = pc.ctx;
    const auto& s = pc.shape;
    const auto params = nccl::pattern_params(ctx);
    auto buf = be().allocate(s.send_elems * dtype_size(d));
    dp().fill(buf->data(), s.send_elems, params, pc.fill);
    // Input check: the reduce_input plan read back by the check kernel.
    EXPECT_EQ(dp().count_wrong(buf->data(), params, pc.fill), 0u) << to_string(d);
    // Spot-check a few elements against the host rules, far into the buffer.
    const auto pattern = coll::reduce_pattern(ctx.redop, d, ctx.num_ranks);
    for (std::size_t i : {std::size_t{0}, s.send_elems / 3, s.send_elems - 1}) {
      EXPECT_EQ(dp().read(buf->data(), i, d), coll::reduce_input(pattern, ctx.redop, ctx.rank, ctx.num_ranks, i))
          << to_string(d) << " element " << i;
    }
  }
}

}  // namespace
