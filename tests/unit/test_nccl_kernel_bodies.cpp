// The fill and check kernels' bodies (backend/nccl/pattern_kernels_hd.hpp), run on the CPU for
// every thread index of a small grid: their writes must equal the host reference executor
// (coll/device_plan.hpp apply_plan_host) byte for byte, including the scalar head and tail at
// every misalignment, without touching the elements around the segment, and their counts must
// equal count_wrong_host on correct and on corrupted buffers. This is the kernels' own code; on the
// device only the 16-byte access differs (uint4 instead of memcpy).
#include <gtest/gtest.h>

#include <cstring>
#include <set>
#include <string>
#include <vector>

#include "collbench/backend/nccl/pattern_kernels_hd.hpp"
#include "collbench/coll/device_plan.hpp"

namespace {

using namespace collbench;
namespace hd = collbench::backend::nccl::hd;
using pattern::SegmentKind;

struct alignas(16) Block {
  unsigned char b[16];
};

// 16-byte aligned scratch memory, filled with `byte`.
struct Scratch {
  explicit Scratch(std::size_t bytes, unsigned char byte) : blocks(bytes / 16 + 2) {
    std::memset(blocks.data(), byte, blocks.size() * 16);
  }
  unsigned char* data() { return blocks.front().b; }
  std::vector<Block> blocks;
};

// The table a kernel block builds (1-byte dtypes), built the way the block's threads build it.
template <Dtype D>
std::vector<typename pattern::Storage<D>::type> lut_of() {
  std::vector<typename pattern::Storage<D>::type> lut(hd::kLutEntries);
  for (std::uint32_t t = 0; t < 3; ++t) hd::fill_lut<D>(lut.data(), t, 3);
  return lut;
}

template <Dtype D, SegmentKind K>
void fill_all_threads(void* dst, const pattern::PatternParams& p, const pattern::Segment& s, std::uint64_t threads) {
  const auto lut = lut_of<D>();
  for (std::uint64_t t = 0; t < threads; ++t) hd::fill_part<D, K>(dst, p, s, t, threads, lut.data());
}

template <Dtype D, SegmentKind K>
std::uint64_t count_all_threads(const void* src, const pattern::PatternParams& p, const pattern::Segment& s,
                                std::uint64_t threads) {
  const auto lut = lut_of<D>();
  std::uint64_t wrong = 0;
  for (std::uint64_t t = 0; t < threads; ++t) wrong += hd::count_part<D, K>(src, p, s, t, threads, lut.data());
  return wrong;
}

template <Dtype D, SegmentKind K>
void check_kind(Redop redop, int n) {
  const std::size_t elem = dtype_size(D);
  const auto p = pattern::pattern_params(D, redop, n);
  for (std::uint64_t offset = 0; offset <= 16 / elem; ++offset) {
    for (std::uint64_t count : {0, 1, 5, 16, 17, 100, 1000}) {
      for (std::uint64_t threads : {1, 3, 64}) {
        pattern::Segment s;
        s.kind = K;
        s.offset_elems = offset + 1;
        s.count = count;
        s.first_elem = (1ULL << 32) - 40;  // crosses a 2^32 boundary of the pattern index
        s.src = n - 1;
        s.dst = n / 2;
        const std::size_t bytes = (offset + count + 40) * elem;
        const std::string where = std::string(to_string(D)) + " kind " + std::to_string(static_cast<int>(K)) +
                                  " n=" + std::to_string(n) + " offset " + std::to_string(offset) + " count " +
                                  std::to_string(count) + " threads " + std::to_string(threads);
        Scratch ref(bytes, 0xa5), got(bytes, 0xa5);
        backend::nccl::apply_plan_host(ref.data(), p, {&s, 1});
        fill_all_threads<D, K>(got.data(), p, s, threads);
        ASSERT_EQ(std::memcmp(ref.data(), got.data(), bytes), 0) << where;
        const std::uint64_t clean = count_all_threads<D, K>(got.data(), p, s, threads);
        ASSERT_EQ(clean, 0u) << where;
        // Corrupt a few elements (first, middle, last): both counters see each one.
        std::set<std::uint64_t> victims;
        if (count > 0) victims = {0, count / 2, count - 1};
        for (std::uint64_t i : victims) got.data()[(s.offset_elems + i) * elem] ^= 0x40;
        const std::uint64_t corrupted = victims.size();
        const std::uint64_t counted = count_all_threads<D, K>(got.data(), p, s, threads);
        EXPECT_EQ(counted, corrupted) << where;
        EXPECT_EQ(backend::nccl::count_wrong_host(got.data(), p, {&s, 1}), corrupted) << where;
      }
    }
  }
}

template <Dtype D>
void check_dtype() {
  for (int n : {1, 3, 72}) {
    for (Redop r : {Redop::sum, Redop::prod, Redop::min, Redop::max}) {
      check_kind<D, SegmentKind::reduce_input>(r, n);
      check_kind<D, SegmentKind::reduce_expected>(r, n);
    }
    check_kind<D, SegmentKind::move>(Redop::sum, n);
    check_kind<D, SegmentKind::zero>(Redop::sum, n);
  }
}

TEST(NcclKernelBodies, FillAndCountEqualTheHostReferenceForEveryDtypeKindAndAlignment) {
  check_dtype<Dtype::int32>();
  check_dtype<Dtype::int64>();
  check_dtype<Dtype::float32>();
  check_dtype<Dtype::float64>();
  check_dtype<Dtype::float16>();
  check_dtype<Dtype::bfloat16>();
  check_dtype<Dtype::float8e4m3>();
  check_dtype<Dtype::float8e5m2>();
}

// The 1-byte dtypes' table covers every value their patterns use, with the direct encodings.
TEST(NcclKernelBodies, OneByteTablesHoldTheEncodingOfEveryValueInUse) {
  for (Dtype d : {Dtype::float8e4m3, Dtype::float8e5m2}) {
    ASSERT_LT(pattern::exact_budget(d), static_cast<std::int64_t>(hd::kLutEntries)) << to_string(d);
    for (int n : {1, 2, 72, 1024}) {
      for (Redop r : {Redop::sum, Redop::prod, Redop::min, Redop::max}) {
        const auto rule = pattern::reduce_rule(r, d, n);
        EXPECT_LE(rule.max_value + 1, pattern::exact_budget(d)) << to_string(d);
        EXPECT_LE(rule.identity, pattern::exact_budget(d)) << to_string(d);
      }
    }
    EXPECT_LE(pattern::move_range(d), pattern::exact_budget(d));
  }
  const auto e4 = lut_of<Dtype::float8e4m3>();
  for (std::uint32_t v = 0; v <= 16; ++v) EXPECT_EQ(e4[v], pattern::encode_as<Dtype::float8e4m3>(v)) << v;
  EXPECT_EQ(e4[16], 0x58);  // 16 = 1.0 x 2^4: exponent 4 + 7
}

TEST(NcclKernelBodies, VectorSplitCoversTheSegmentAtSixteenByteBoundaries) {
  // float32 at byte address 4: 3 head elements to address 16, then 4 per vector.
  const hd::VectorSplit a = hd::vector_split(4, 20, 4);
  EXPECT_EQ(a.head, 3u);
  EXPECT_EQ(a.vectors, 4u);
  EXPECT_EQ(a.tail, 1u);
  // Aligned fp8: no head, 16 per vector.
  const hd::VectorSplit b = hd::vector_split(32, 40, 1);
  EXPECT_EQ(b.head, 0u);
  EXPECT_EQ(b.vectors, 2u);
  EXPECT_EQ(b.tail, 8u);
  // Shorter than the head: all head.
  const hd::VectorSplit c = hd::vector_split(2, 3, 2);
  EXPECT_EQ(c.head, 3u);
  EXPECT_EQ(c.vectors, 0u);
  EXPECT_EQ(c.tail, 0u);
}

TEST(NcclKernelBodies, LanesPackLittleEndian) {
  std::uint32_t w[4] = {0, 0, 0, 0};
  for (int e = 0; e < 16; ++e) hd::put_lane<std::uint8_t>(w, e, static_cast<std::uint8_t>(e + 1));
  unsigned char bytes[16];
  std::memcpy(bytes, w, 16);
  for (int e = 0; e < 16; ++e) EXPECT_EQ(bytes[e], e + 1);
  for (int e = 0; e < 16; ++e) EXPECT_EQ(hd::get_lane<std::uint8_t>(w, e), e + 1);
  std::uint32_t q[4] = {0, 0, 0, 0};
  hd::put_lane<std::uint64_t>(q, 1, 0x1122334455667788ULL);
  EXPECT_EQ(q[2], 0x55667788u);
  EXPECT_EQ(q[3], 0x11223344u);
  EXPECT_EQ(hd::get_lane<std::uint64_t>(q, 1), 0x1122334455667788ULL);
}

}  // namespace
