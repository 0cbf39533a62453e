// The depth of the cb-multimem kernels (backend/nccl/multimem_plan.hpp): how many bytes one GPU
// keeps in flight through the switch, as a plan parameter (`max_blocks`, the largest grid and
// the LSA barriers requested) with an NCCL-like default of about 4 MiB; grids never exceed the
// depth they are given, and a grid-stride walk at any depth still visits every unit exactly once.
// CPU only; every build.
#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include "collbench/backend/nccl/multimem_plan.hpp"

namespace {

namespace mm = collbench::backend::nccl::mm;

TEST(MultimemDepth, DefaultKeepsAboutFourMiBInFlightLikeNccl) {
  EXPECT_EQ(mm::kBlockInflightBytes, 32u * 1024u);  // 512 threads x 4 vectors x 16 B
  EXPECT_EQ(mm::kMaxBlocks, 128u);
  EXPECT_EQ(mm::inflight_bytes(mm::kMaxBlocks), std::uint64_t{4} << 20);
  EXPECT_EQ(mm::inflight_bytes(mm::kMaxBlocks), mm::kDefaultInflightBytes);
  // The former depth: 32 blocks, 1 MiB.
  EXPECT_EQ(mm::blocks_for_inflight(std::uint64_t{1} << 20), 32u);
  EXPECT_EQ(mm::inflight_bytes(32), std::uint64_t{1} << 20);
}

TEST(MultimemDepth, BlocksForInflightRoundsUpAndClamps) {
  EXPECT_EQ(mm::blocks_for_inflight(0), 1u);
  EXPECT_EQ(mm::blocks_for_inflight(1), 1u);
  EXPECT_EQ(mm::blocks_for_inflight(mm::kBlockInflightBytes), 1u);
  EXPECT_EQ(mm::blocks_for_inflight(mm::kBlockInflightBytes + 1), 2u);
  EXPECT_EQ(mm::blocks_for_inflight(std::uint64_t{8} << 20), 256u);
  EXPECT_EQ(mm::blocks_for_inflight(std::uint64_t{1} << 40), mm::kBlockLimit);
  for (std::uint32_t b : {1u, 7u, 32u, 128u, 1024u}) EXPECT_EQ(mm::blocks_for_inflight(mm::inflight_bytes(b)), b);
}

TEST(MultimemDepth, GridsRespectTheDepthTheyAreGiven) {
  const std::uint64_t huge = std::uint64_t{1} << 40;
  for (std::uint32_t depth : {1u, 16u, 32u, 128u, 1024u}) {
    EXPECT_EQ(mm::grid_blocks(huge, depth), depth);
    EXPECT_EQ(mm::allreduce_grid(std::uint64_t{4} << 30, 2, 8, depth), depth);
    EXPECT_EQ(mm::chunk_grid(std::uint64_t{1} << 30, 4, depth), depth);
    // Small buffers do not grow with the depth: one thread per 16-byte unit.
    EXPECT_EQ(mm::grid_blocks(513, depth), depth < 2 ? depth : 2u);
  }
  EXPECT_EQ(mm::grid_blocks(huge, 0), 1u);  // a depth of 0 counts as 1
  // 64 MiB float32 all-reduce on 8 GPUs: 8 MiB (512 Ki units) per rank, 1,024 blocks' worth.
  EXPECT_EQ(mm::allreduce_grid(std::uint64_t{16} << 20, 4, 8), mm::kMaxBlocks);
  EXPECT_EQ(mm::allreduce_grid(std::uint64_t{16} << 20, 4, 8, 32), 32u);
  // 2 MiB bfloat16 on 8 GPUs: 16 Ki units per rank, 32 blocks, below either depth.
  EXPECT_EQ(mm::allreduce_grid(std::uint64_t{1} << 20, 2, 8), 32u);
  EXPECT_EQ(mm::allreduce_grid(std::uint64_t{1} << 20, 2, 8, 32), 32u);
}

// Every unit of `units` is visited exactly once by the kernels' walk (kUnroll batches of a
// grid-stride loop) at the grid the plan gives for depth `depth`.
void expect_covered_once(std::uint64_t units, std::uint32_t depth) {
  const std::uint32_t grid = mm::grid_blocks(units, depth);
  ASSERT_LE(grid, depth < 1 ? 1u : depth);
  std::vector<int> seen(units, 0);
  for (std::uint32_t b = 0; b < grid; ++b) {
    for (std::uint32_t t = 0; t < mm::kThreads; ++t) {
      const mm::Cursor c = mm::cursor(mm::Range{0, units}, b, t, grid, mm::kThreads);
      for (std::uint64_t base = c.first; base < c.end; base += mm::kUnroll * c.stride) {
        for (std::uint32_t k = 0; k < mm::kUnroll; ++k) {
          const std::uint64_t i = base + k * c.stride;
          if (i < c.end) ++seen[i];
        }
      }
    }
  }
  for (std::uint64_t i = 0; i < units; ++i) ASSERT_EQ(seen[i], 1) << "unit " << i << " at depth " << depth;
}

TEST(MultimemDepth, EveryDepthCoversEveryUnitOnce) {
  for (std::uint32_t depth : {1u, 32u, mm::kMaxBlocks}) {
    for (std::uint64_t units :
         {std::uint64_t{1}, std::uint64_t{511}, std::uint64_t{513}, std::uint64_t{70000}, std::uint64_t{300001}}) {
      expect_covered_once(units, depth);
    }
  }
}

}  // namespace
