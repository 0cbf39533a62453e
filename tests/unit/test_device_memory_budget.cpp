// The GPU memory check's arithmetic (run/memory_budget.hpp): a rank's device need over the cases
// whose buffers are on the device, and the refusal naming the case and its size, the need and
// the GPU's free memory. The cudaMemGetInfo read itself needs a GPU (backend/nccl/device_memory).
#include <gtest/gtest.h>

#include "collbench/core/placement.hpp"
#include "collbench/plan/sweep.hpp"
#include "collbench/run/memory_budget.hpp"

using namespace collbench;

namespace {

plan::Case device_case(const std::string& collective, std::uint64_t bytes, const std::string& backend,
                       const std::string& buffers, bool in_place = false) {
  plan::Case c;
  c.collective = collective;
  c.bytes = bytes;
  c.backend = backend;
  c.buffers = buffers;
  c.in_place = in_place;
  return c;
}

plan::Sweep sweep_of(std::vector<plan::Case> cases) {
  plan::Sweep s;
  s.name = "t";
  s.source = "<command line>";
  s.cases = std::move(cases);
  return s;
}

}  // namespace

TEST(DeviceMemoryBudget, NeedCountsOnlyTheBackendsDeviceBuffers) {
  const Placement two = placement_from_sizes(2, {2});
  const auto sweep = sweep_of({device_case("allreduce", 1u << 20, "nccl", "plain"),
                               device_case("allreduce", 4u << 20, "nccl", "symmetric", true),
                               device_case("allreduce", 64u << 20, "mpi", "host"),
                               device_case("allreduce", 32u << 20, "nccl", "host")});
  const auto need = run::sweep_device_need(sweep, two, 0, "nccl");
  EXPECT_EQ(need.per_rank, 4u << 20);  // in place: one 4 MiB buffer, beats 2 x 1 MiB
  EXPECT_EQ(need.case_label, "allreduce 4MiB float32 in place");
  EXPECT_EQ(run::sweep_device_need(sweep, two, 0, "mpi").per_rank, 0u);
  const auto out =
      run::sweep_device_need(sweep_of({device_case("allgather", 1u << 20, "nccl", "plain")}), two, 1, "nccl");
  EXPECT_EQ(out.per_rank, (1u << 20) + (1u << 19));  // 512 KiB chunk sent + 1 MiB gathered
}

TEST(DeviceMemoryBudget, RefusalNamesCaseNeedAndFree) {
  run::MemoryNeed need{3ull << 30, "allreduce 3GiB float32 in place"};
  const backend::DeviceMemory gpu{1, 2ull << 30, 80ull << 30, "cudaMemGetInfo"};
  EXPECT_EQ(run::device_memory_refusal(need, gpu, 5, "node-a"),
            "not enough GPU memory for allreduce 3GiB float32 in place: its device buffers need 3GiB per rank, and "
            "GPU 1 of rank 5 on host 'node-a' has 2GiB free of 80GiB (cudaMemGetInfo); use smaller sizes (-b/-e, "
            "--tokens), or free the GPU");
  need.per_rank = 2ull << 30;  // exactly the free memory fits
  EXPECT_EQ(run::device_memory_refusal(need, gpu, 5, "node-a"), std::nullopt);
  EXPECT_EQ(run::device_buffer_bytes(coll::Shape{}, Dtype::float32, false), 0u);
}
