// The size classes of shared simulation buffers (backend/mpi/simulation.hpp shared_class): sizes
// in one sixteenth of a power of two share a block, a key never names two sizes, nothing shrinks.
#include <gtest/gtest.h>

#include <cstddef>
#include <map>

#include "collbench/backend/mpi/simulation.hpp"

using collbench::backend::sim::shared_class;

TEST(SimSharedClass, SmallSizesStepBy64Bytes) {
  // 100 B -> padded 192 (64-byte lines plus one) -> power 256, step 64: 3 steps; key 32 x 8 + 3.
  const auto c = shared_class(100);
  EXPECT_EQ(c.bytes, 192u);
  EXPECT_EQ(c.key, 259);
  EXPECT_EQ(shared_class(0).bytes, 64u);  // never null: one line
}

TEST(SimSharedClass, NearbyMoeBuffersShareOneBlock) {
  // Two ranks' dispatch buffers, 7,500,000 and 7,400,000 B: padded 7,500,096 and 7,400,064, both
  // under 2^23 with step 2^23/16 = 524,288: 15 steps = 7,864,320 B, key 32 x 23 + 15 = 751.
  const auto a = shared_class(7'500'000);
  const auto b = shared_class(7'400'000);
  EXPECT_EQ(a.bytes, 7'864'320u);
  EXPECT_EQ(a.key, 751);
  EXPECT_EQ(b.bytes, a.bytes);
  EXPECT_EQ(b.key, a.key);
  // 7,000,000 B (padded 7,000,064): 14 steps, its own block.
  EXPECT_EQ(shared_class(7'000'000).bytes, 7'340'032u);
  EXPECT_EQ(shared_class(7'000'000).key, 750);
}

TEST(SimSharedClass, EveryKeyNamesOneSizeAndNothingShrinks) {
  std::map<int, std::size_t> size_of_key;
  for (std::size_t bytes = 0; bytes < (std::size_t{1} << 26); bytes = bytes * 5 / 4 + 37) {
    const auto c = shared_class(bytes);
    EXPECT_GE(c.bytes, bytes + 64) << bytes;             // room for the padding line
    EXPECT_LE(c.bytes, (bytes + 128) * 9 / 8) << bytes;  // one step (power/16 < size/8) at most
    const auto [it, inserted] = size_of_key.emplace(c.key, c.bytes);
    EXPECT_EQ(it->second, c.bytes) << "key " << c.key << " names two sizes";
  }
}
