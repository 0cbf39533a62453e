// Index math of the cb-multimem kernels (backend/nccl/multimem_plan.hpp): slices, the 16-byte
// alignment split, grids and thread cursors, with exact expectations at m = 2, 4, 8, 72 and
// awkward sizes; then a host emulation of every rank, block and thread of the all-reduce,
// reduce-scatter and all-gather kernels (the loops of multimem_kernels.cu over the same
// functions): every vector address is 16-byte aligned, every element is reduced by exactly one
// rank and written once to every rank, and the results equal the sums. CPU only; every build.
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "collbench/backend/nccl/multimem_plan.hpp"

namespace {

namespace mm = collbench::backend::nccl::mm;

::testing::AssertionResult tiles(std::uint64_t total, std::uint32_t parts) {
  std::uint64_t next = 0;
  for (std::uint32_t i = 0; i < parts; ++i) {
    const mm::Range r = mm::slice(total, parts, i);
    if (r.begin != next) return ::testing::AssertionFailure() << "part " << i << " starts at " << r.begin;
    if (r.end < r.begin) return ::testing::AssertionFailure() << "part " << i << " is reversed";
    const std::uint64_t q = total / parts;
    if (r.size() != q && r.size() != q + 1) return ::testing::AssertionFailure() << "part " << i << " unbalanced";
    next = r.end;
  }
  if (next != total) return ::testing::AssertionFailure() << "parts end at " << next << " of " << total;
  return ::testing::AssertionSuccess();
}

TEST(MultimemPlan, SlicesAreContiguousBalancedAndExact) {
  EXPECT_EQ(mm::slice(10, 4, 0).begin, 0u);
  EXPECT_EQ(mm::slice(10, 4, 0).end, 3u);
  EXPECT_EQ(mm::slice(10, 4, 1).begin, 3u);
  EXPECT_EQ(mm::slice(10, 4, 1).end, 6u);
  EXPECT_EQ(mm::slice(10, 4, 2).begin, 6u);
  EXPECT_EQ(mm::slice(10, 4, 2).end, 8u);
  EXPECT_EQ(mm::slice(10, 4, 3).begin, 8u);
  EXPECT_EQ(mm::slice(10, 4, 3).end, 10u);
  // Fewer units than ranks (a buffer smaller than m x 16 B): the first ranks get one, the rest none.
  EXPECT_EQ(mm::slice(2, 72, 0).size(), 1u);
  EXPECT_EQ(mm::slice(2, 72, 1).begin, 1u);
  EXPECT_EQ(mm::slice(2, 72, 2).size(), 0u);
  EXPECT_EQ(mm::slice(2, 72, 71).begin, 2u);
  EXPECT_EQ(mm::slice(0, 8, 5).size(), 0u);
  // 1 MiB of float32 on 72 GPUs: 65,536 vectors = 72 x 910 + 16.
  EXPECT_EQ(mm::slice(65536, 72, 15).size(), 911u);
  EXPECT_EQ(mm::slice(65536, 72, 16).size(), 910u);
  EXPECT_EQ(mm::slice(65536, 72, 71).begin, 64626u);
  EXPECT_EQ(mm::slice(65536, 72, 71).end, 65536u);
  // Out-of-range parts are empty, never overlapping.
  EXPECT_EQ(mm::slice(10, 4, 4).size(), 0u);
  EXPECT_EQ(mm::slice(10, 0, 0).size(), 0u);
  for (std::uint32_t m : {2u, 4u, 8u, 72u}) {
    for (std::uint64_t total : {0ull, 1ull, 7ull, 71ull, 72ull, 73ull, 1000ull, 65536ull, (1ull << 29) + 5}) {
      EXPECT_TRUE(tiles(total, m)) << "m=" << m << " total=" << total;
    }
  }
}

TEST(MultimemPlan, AlignmentSplit) {
  // float32, aligned: 37 elements = 9 vectors + 1 tail element.
  auto l = mm::split(37, 4, 0, 0);
  EXPECT_EQ(l.head_elems, 0u);
  EXPECT_EQ(l.body_vecs, 9u);
  EXPECT_EQ(l.tail_elems, 1u);
  EXPECT_EQ(l.elems_per_vec(), 4u);
  // Both at 4 mod 16: 3 head elements reach the boundary, 8 vectors, 2 tail.
  l = mm::split(37, 4, 4, 4 + 4096);
  EXPECT_EQ(l.head_elems, 3u);
  EXPECT_EQ(l.body_vecs, 8u);
  EXPECT_EQ(l.tail_elems, 2u);
  EXPECT_EQ(mm::vector_element(l, 0), 3u);
  EXPECT_EQ(mm::scalar_element(l, 2), 2u);
  EXPECT_EQ(mm::scalar_element(l, 3), 35u);
  EXPECT_EQ(mm::scalar_element(l, 4), 36u);
  // Source and destination misaligned against each other: no vector serves both.
  l = mm::split(37, 4, 4, 8);
  EXPECT_EQ(l.head_elems, 37u);
  EXPECT_EQ(l.body_vecs, 0u);
  EXPECT_EQ(l.tail_elems, 0u);
  // Smaller than one vector (12 B of float32; 14 B of bfloat16).
  l = mm::split(3, 4, 0, 0);
  EXPECT_EQ(l.body_vecs, 0u);
  EXPECT_EQ(l.tail_elems, 3u);
  l = mm::split(7, 2, 0, 0);
  EXPECT_EQ(l.body_vecs, 0u);
  EXPECT_EQ(l.scalar_elems(), 7u);
  // bfloat16 at 6 mod 16: 5 head, 11 vectors (88 elements), 7 tail = 100.
  l = mm::split(100, 2, 6, 6);
  EXPECT_EQ(l.head_elems, 5u);
  EXPECT_EQ(l.body_vecs, 11u);
  EXPECT_EQ(l.tail_elems, 7u);
  // The head alone covers a short buffer.
  l = mm::split(5, 2, 2, 2);
  EXPECT_EQ(l.head_elems, 5u);
  EXPECT_EQ(l.body_vecs, 0u);
  EXPECT_EQ(l.tail_elems, 0u);
  // An offset that is not a multiple of the element: every element on the scalar path.
  l = mm::split(10, 4, 2, 2);
  EXPECT_EQ(l.head_elems, 10u);
  EXPECT_EQ(l.body_vecs, 0u);
  // 8-byte and 1-byte elements.
  l = mm::split(9, 8, 8, 8);
  EXPECT_EQ(l.head_elems, 1u);
  EXPECT_EQ(l.body_vecs, 4u);
  EXPECT_EQ(l.tail_elems, 0u);
  l = mm::split(33, 1, 0, 0);
  EXPECT_EQ(l.body_vecs, 2u);
  EXPECT_EQ(l.tail_elems, 1u);
  // Empty.
  l = mm::split(0, 4, 4, 4);
  EXPECT_EQ(l.head_elems + l.body_vecs + l.tail_elems, 0u);
}

TEST(MultimemPlan, AllreduceWorkPerRank) {
  // 1000 float32 on 8 ranks: 250 vectors = 8 x 31 + 2.
  const auto l = mm::split(1000, 4, 0, 0);
  ASSERT_EQ(l.body_vecs, 250u);
  EXPECT_EQ(mm::allreduce_work(l, 8, 0).vecs.size(), 32u);
  EXPECT_EQ(mm::allreduce_work(l, 8, 1).vecs.size(), 32u);
  EXPECT_EQ(mm::allreduce_work(l, 8, 2).vecs.begin, 64u);
  EXPECT_EQ(mm::allreduce_work(l, 8, 7).vecs.end, 250u);
  EXPECT_EQ(mm::allreduce_work(l, 8, 3).scalars.size(), 0u);
  // 20 float32 (80 B < 8 x 16 B) on 8 ranks: 5 vectors, ranks 5..7 idle.
  const auto s = mm::split(20, 4, 0, 0);
  EXPECT_EQ(mm::allreduce_work(s, 8, 4).vecs.size(), 1u);
  EXPECT_EQ(mm::allreduce_work(s, 8, 5).vecs.size(), 0u);
  // 7 float16 (14 B) on 4 ranks: scalars only, 2 + 2 + 2 + 1.
  const auto h = mm::split(7, 2, 0, 0);
  EXPECT_EQ(mm::allreduce_work(h, 4, 0).scalars.size(), 2u);
  EXPECT_EQ(mm::allreduce_work(h, 4, 3).scalars.begin, 6u);
  EXPECT_EQ(mm::allreduce_work(h, 4, 3).scalars.size(), 1u);
  // Reduce-scatter / all-gather: the whole chunk.
  EXPECT_EQ(mm::whole_work(l).vecs.size(), 250u);
  EXPECT_EQ(mm::chunk_offset(4096, 100, 2, 3), 4096u + 600u);
}

TEST(MultimemPlan, Grids) {
  EXPECT_EQ(mm::grid_blocks(0), 1u);
  EXPECT_EQ(mm::grid_blocks(512), 1u);
  EXPECT_EQ(mm::grid_blocks(513), 2u);
  EXPECT_EQ(mm::grid_blocks(1ull << 40), mm::kMaxBlocks);
  EXPECT_EQ(mm::allreduce_grid(0, 4, 8), 1u);
  // 32 KiB on 2 ranks: 2,048 vectors, 1,024 per rank: 2 blocks of 512 threads.
  EXPECT_EQ(mm::allreduce_grid(8192, 4, 2), 2u);
  // One more element: 2,049 units, the larger share 1,025: 3 blocks (the same on both ranks).
  EXPECT_EQ(mm::allreduce_grid(8192 + 1, 4, 2), 3u);
  // 3 x 512 x 2 units exactly: 3 blocks.
  EXPECT_EQ(mm::allreduce_grid(3 * 512 * 2 * 4, 4, 2), 3u);
  // 8 GiB of bfloat16 on 72 GPUs: the cap.
  EXPECT_EQ(mm::allreduce_grid(4ull << 30, 2, 72), mm::kMaxBlocks);
  EXPECT_EQ(mm::chunk_grid(1024, 2), 1u);                    // 2 KiB = 128 vectors
  EXPECT_EQ(mm::chunk_grid(1ull << 20, 4), mm::kMaxBlocks);  // 4 MiB chunk: the default depth's cap
  EXPECT_EQ(mm::chunk_grid(1ull << 20, 4, 32), 32u);         // at the former 1 MiB depth
  const auto c = mm::cursor(mm::Range{10, 100}, 2, 5, 4, 512);
  EXPECT_EQ(c.first, 10u + 2 * 512 + 5);
  EXPECT_EQ(c.stride, 4u * 512);
  EXPECT_EQ(c.end, 100u);
}

// ---- emulation of multimem_kernels.cu on the host ------------------------------------------------

struct Checks {
  std::vector<std::string> errors;
  void fail(const std::string& e) {
    if (errors.size() < 5) errors.push_back(e);
  }
};

// The loop of every kernel over `r` with grid `grid`: kUnroll-step batches of a grid-stride walk;
// `visit(i)` is called for each unit i the kernel touches, in the kernel's order.
template <class Visit>
void each_unit(const mm::Range& r, std::uint32_t grid, Visit&& visit) {
  for (std::uint32_t b = 0; b < grid; ++b) {
    for (std::uint32_t t = 0; t < mm::kThreads; ++t) {
      const mm::Cursor c = mm::cursor(r, b, t, grid, mm::kThreads);
      for (std::uint64_t base = c.first; base < c.end; base += mm::kUnroll * c.stride) {
        for (std::uint32_t k = 0; k < mm::kUnroll; ++k) {
          const std::uint64_t i = base + k * c.stride;
          if (i < c.end) visit(i);
        }
      }
    }
  }
}

using Buffers = std::vector<std::vector<double>>;  // [rank][element]

Buffers inputs(std::uint32_t m, std::uint64_t elems) {
  Buffers in(m, std::vector<double>(elems));
  for (std::uint32_t r = 0; r < m; ++r) {
    for (std::uint64_t e = 0; e < elems; ++e) in[r][e] = static_cast<double>((e * 7 + r * 3) % 11);
  }
  return in;
}

// all-reduce: rank r ld_reduce's its vectors through the switch (sum over ranks) and multimem.st's
// them to every rank; its scalars go through LSA pointers.
Checks emulate_allreduce(std::uint32_t m, std::uint64_t count, std::uint32_t elem, std::uint64_t in_off,
                         std::uint64_t out_off) {
  Checks ck;
  const Buffers in = inputs(m, count);
  Buffers out(m, std::vector<double>(count, -1.0));
  std::vector<int> reduced(count, 0);
  const mm::Layout l = mm::split(count, elem, in_off, out_off);
  if (l.head_elems + l.body_elems() + l.tail_elems != count) ck.fail("layout does not cover the buffer");
  const std::uint32_t grid = mm::allreduce_grid(count, elem, m);
  if (grid < 1 || grid > mm::kMaxBlocks) ck.fail("grid outside the barrier count");
  auto reduce_elem = [&](std::uint64_t e) {
    if (e >= count) {
      ck.fail("element out of bounds");
      return;
    }
    double sum = 0;
    for (std::uint32_t p = 0; p < m; ++p) sum += in[p][e];
    for (std::uint32_t p = 0; p < m; ++p) out[p][e] = sum;
    ++reduced[e];
  };
  for (std::uint32_t r = 0; r < m; ++r) {
    const mm::Work w = mm::allreduce_work(l, m, r);
    each_unit(w.vecs, grid, [&](std::uint64_t v) {
      const std::uint64_t e0 = mm::vector_element(l, v);
      if ((in_off + e0 * elem) % 16 != 0 || (out_off + e0 * elem) % 16 != 0) ck.fail("unaligned vector");
      for (std::uint32_t j = 0; j < l.elems_per_vec(); ++j) reduce_elem(e0 + j);
    });
    each_unit(w.scalars, grid, [&](std::uint64_t i) { reduce_elem(mm::scalar_element(l, i)); });
  }
  for (std::uint64_t e = 0; e < count; ++e) {
    if (reduced[e] != 1) ck.fail("element " + std::to_string(e) + " reduced " + std::to_string(reduced[e]) + " times");
    double sum = 0;
    for (std::uint32_t p = 0; p < m; ++p) sum += in[p][e];
    for (std::uint32_t p = 0; p < m; ++p) {
      if (out[p][e] != sum) ck.fail("wrong sum at rank " + std::to_string(p) + " element " + std::to_string(e));
    }
  }
  return ck;
}

// reduce-scatter: rank r reduces chunk r of every rank's input into its own output.
Checks emulate_reduce_scatter(std::uint32_t m, std::uint64_t recvcount, std::uint32_t elem, std::uint64_t in_off,
                              std::uint64_t out_addr) {
  Checks ck;
  const Buffers in = inputs(m, recvcount * m);
  Buffers out(m, std::vector<double>(recvcount, -1.0));
  std::vector<int> written(recvcount * m, 0);
  const std::uint32_t grid = mm::chunk_grid(recvcount, elem);
  for (std::uint32_t r = 0; r < m; ++r) {
    const std::uint64_t chunk = mm::chunk_offset(in_off, recvcount, elem, r);
    const mm::Layout l = mm::split(recvcount, elem, chunk, out_addr);
    auto one = [&](std::uint64_t e) {
      double sum = 0;
      for (std::uint32_t p = 0; p < m; ++p) sum += in[p][r * recvcount + e];
      out[r][e] = sum;
      ++written[r * recvcount + e];
    };
    const mm::Work w = mm::whole_work(l);
    each_unit(w.vecs, grid, [&](std::uint64_t v) {
      const std::uint64_t e0 = mm::vector_element(l, v);
      if ((chunk + e0 * elem) % 16 != 0 || (out_addr + e0 * elem) % 16 != 0) ck.fail("unaligned vector");
      for (std::uint32_t j = 0; j < l.elems_per_vec(); ++j) one(e0 + j);
    });
    each_unit(w.scalars, grid, [&](std::uint64_t i) { one(mm::scalar_element(l, i)); });
  }
  for (std::uint64_t e = 0; e < recvcount * m; ++e) {
    if (written[e] != 1) ck.fail("element " + std::to_string(e) + " written " + std::to_string(written[e]) + " times");
  }
  for (std::uint32_t r = 0; r < m; ++r) {
    for (std::uint64_t e = 0; e < recvcount; ++e) {
      double sum = 0;
      for (std::uint32_t p = 0; p < m; ++p) sum += in[p][r * recvcount + e];
      if (out[r][e] != sum) ck.fail("wrong reduce-scatter result");
    }
  }
  return ck;
}

// all-gather: rank r multimem.st's its input into chunk r of every rank's output.
Checks emulate_allgather(std::uint32_t m, std::uint64_t sendcount, std::uint32_t elem, std::uint64_t in_addr,
                         std::uint64_t out_off) {
  Checks ck;
  const Buffers in = inputs(m, sendcount);
  Buffers out(m, std::vector<double>(sendcount * m, -1.0));
  std::vector<int> written(sendcount * m, 0);
  const std::uint32_t grid = mm::chunk_grid(sendcount, elem);
  for (std::uint32_t r = 0; r < m; ++r) {
    const std::uint64_t chunk = mm::chunk_offset(out_off, sendcount, elem, r);
    const mm::Layout l = mm::split(sendcount, elem, in_addr, chunk);
    auto one = [&](std::uint64_t e) {
      for (std::uint32_t p = 0; p < m; ++p) out[p][r * sendcount + e] = in[r][e];
      ++written[r * sendcount + e];
    };
    const mm::Work w = mm::whole_work(l);
    each_unit(w.vecs, grid, [&](std::uint64_t v) {
      const std::uint64_t e0 = mm::vector_element(l, v);
      if ((in_addr + e0 * elem) % 16 != 0 || (chunk + e0 * elem) % 16 != 0) ck.fail("unaligned vector");
      for (std::uint32_t j = 0; j < l.elems_per_vec(); ++j) one(e0 + j);
    });
    each_unit(w.scalars, grid, [&](std::uint64_t i) { one(mm::scalar_element(l, i)); });
  }
  for (std::uint64_t e = 0; e < sendcount * m; ++e) {
    if (written[e] != 1) ck.fail("element " + std::to_string(e) + " written " + std::to_string(written[e]) + " times");
  }
  for (std::uint32_t p = 0; p < m; ++p) {
    for (std::uint32_t r = 0; r < m; ++r) {
      for (std::uint64_t e = 0; e < sendcount; ++e) {
        if (out[p][r * sendcount + e] != in[r][e]) ck.fail("wrong all-gather result");
      }
    }
  }
  return ck;
}

std::string label(const char* what, std::uint32_t m, std::uint64_t count, std::uint32_t elem, std::uint64_t a,
                  std::uint64_t b) {
  return std::string(what) + " m=" + std::to_string(m) + " count=" + std::to_string(count) +
         " elem=" + std::to_string(elem) + " offsets=" + std::to_string(a) + "," + std::to_string(b);
}

std::string first_errors(const Checks& ck) {
  std::string s;
  for (const auto& e : ck.errors) s += e + "; ";
  return s;
}

// Awkward sizes: not multiples of 16 B, smaller than m x 16 B, one element, around vector edges.
const std::vector<std::uint64_t> kCounts{0, 1, 2, 3, 7, 8, 9, 15, 16, 17, 31, 33, 100, 257, 1000, 4099};

TEST(MultimemEmulation, AllreduceReducesEveryElementExactlyOnce) {
  for (std::uint32_t m : {2u, 4u, 8u, 72u}) {
    for (std::uint32_t elem : {4u, 2u}) {
      for (std::uint64_t count : kCounts) {
        for (auto [a, b] : std::vector<std::pair<std::uint64_t, std::uint64_t>>{
                 {0, 0}, {4, 4}, {elem, elem + 4096}, {12, 28}, {4, 8}, {0, 2}}) {
          if (a % elem != 0 || b % elem != 0) continue;
          const Checks ck = emulate_allreduce(m, count, elem, a, b);
          EXPECT_TRUE(ck.errors.empty()) << label("allreduce", m, count, elem, a, b) << ": " << first_errors(ck);
        }
      }
    }
  }
}

TEST(MultimemEmulation, AllreduceWithSeveralBlocks) {
  // Grids of 2, 3 and the 32-block cap (2 ranks keep the host emulation small).
  for (std::uint64_t count : {8192ull, 8192ull + 13, 3ull * 512 * 8 + 5, 32ull * 512 * 8 * 3 + 7}) {
    const std::uint32_t grid = mm::allreduce_grid(count, 4, 2);
    EXPECT_GE(grid, 2u);
    const Checks ck = emulate_allreduce(2, count, 4, 4, 4);
    EXPECT_TRUE(ck.errors.empty()) << label("allreduce", 2, count, 4, 4, 4) << " grid " << grid << ": "
                                   << first_errors(ck);
  }
}

TEST(MultimemEmulation, ReduceScatterAndAllgatherCoverEveryChunk) {
  for (std::uint32_t m : {2u, 4u, 8u, 72u}) {
    for (std::uint32_t elem : {4u, 2u}) {
      for (std::uint64_t count : {0ull, 1ull, 3ull, 7ull, 9ull, 17ull, 100ull, 1001ull}) {
        for (auto [a, b] : std::vector<std::pair<std::uint64_t, std::uint64_t>>{{0, 0}, {4, 20}, {2, 6}, {0, 4}}) {
          if (a % elem != 0 || b % elem != 0) continue;
          Checks rs = emulate_reduce_scatter(m, count, elem, a, b);
          EXPECT_TRUE(rs.errors.empty()) << label("reducescatter", m, count, elem, a, b) << ": " << first_errors(rs);
          Checks ag = emulate_allgather(m, count, elem, a, b);
          EXPECT_TRUE(ag.errors.empty()) << label("allgather", m, count, elem, a, b) << ": " << first_errors(ag);
        }
      }
    }
  }
  // Several blocks per chunk.
  const Checks rs = emulate_reduce_scatter(2, 40000, 4, 0, 0);
  EXPECT_TRUE(rs.errors.empty()) << first_errors(rs);
  const Checks ag = emulate_allgather(2, 40001, 2, 6, 6);
  EXPECT_TRUE(ag.errors.empty()) << first_errors(ag);
}

}  // namespace
