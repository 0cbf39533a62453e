// The hierarchical all-to-all's stage packing (backend/hierarchical.hpp transpose_blocks): a block
// transposition issued as min(a, b) strided copies, each row by row here (Comm's default), checked
// against the block-by-block transposition for every shape up to 9 x 9 and a rack-sized one.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <vector>

#include "collbench/backend/hierarchical.hpp"

namespace {

using collbench::backend::RowCopy;
using collbench::backend::transpose_blocks;

struct Copies {
  int calls = 0;
  RowCopy fn() {
    return [this](void* dst, std::size_t dst_pitch, const void* src, std::size_t src_pitch, std::size_t width,
                  std::size_t rows) {
      ++calls;
      ASSERT_GE(dst_pitch, width);
      ASSERT_GE(src_pitch, width);
      for (std::size_t r = 0; r < rows; ++r) {
        std::memcpy(static_cast<char*>(dst) + r * dst_pitch, static_cast<const char*>(src) + r * src_pitch, width);
      }
    };
  }
};

void expect_transposed(std::size_t a, std::size_t b, std::size_t block) {
  // Every block starts with its own index (and the bytes after it differ), so no block can stand
  // in for another.
  std::vector<unsigned char> src(a * b * block);
  for (std::size_t k = 0; k < a * b; ++k) {
    const auto index = static_cast<std::uint32_t>(k);
    for (std::size_t x = 0; x < block; ++x)
      src[k * block + x] = static_cast<unsigned char>((index >> (8 * (x % 4))) + x);
  }
  std::vector<unsigned char> dst(src.size(), 0);
  Copies copies;
  transpose_blocks(copies.fn(), dst.data(), src.data(), a, b, block);
  for (std::size_t i = 0; i < a; ++i) {
    for (std::size_t j = 0; j < b; ++j) {
      ASSERT_EQ(std::memcmp(&dst[(j * a + i) * block], &src[(i * b + j) * block], block), 0)
          << a << "x" << b << " block " << block << " at " << i << "," << j;
    }
  }
  EXPECT_EQ(copies.calls, static_cast<int>(std::min(a, b))) << a << "x" << b;
}

TEST(TransposeBlocks, EveryShapeMatchesTheBlockByBlockTransposition) {
  for (std::size_t a = 1; a <= 9; ++a) {
    for (std::size_t b = 1; b <= 9; ++b) {
      for (std::size_t block : {1U, 3U, 8U}) expect_transposed(a, b, block);
    }
  }
  expect_transposed(2, 72, 16);  // two NVL72 racks: 2 strided copies per stage instead of 144
  expect_transposed(72, 2, 16);
  expect_transposed(16, 64, 4);  // 1,024 blocks: the index's high byte varies too
}

TEST(TransposeBlocks, NothingToCopy) {
  Copies copies;
  transpose_blocks(copies.fn(), nullptr, nullptr, 4, 4, 0);
  transpose_blocks(copies.fn(), nullptr, nullptr, 0, 4, 8);
  EXPECT_EQ(copies.calls, 0);
}

}  // namespace
