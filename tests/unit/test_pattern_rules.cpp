// The verification pattern's rules (core/pattern_rules.hpp): the closed form of every reduction
// against the reduction of every rank's input, computed the slow way in the dtype, for every
// dtype x redop x rank count from 1 to 1,024; the direct encodings against the host codecs; the
// stepping cursor against a fresh one; and the detection power of the moved values.
#include <gtest/gtest.h>

#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "collbench/coll/pattern.hpp"
#include "collbench/core/dtype.hpp"
#include "collbench/core/pattern_rules.hpp"

namespace {

using namespace collbench;

constexpr Redop kRedops[] = {Redop::sum, Redop::prod, Redop::min, Redop::max};

// The dtype's bits of double v as the host codec stores it (little endian, low bytes).
std::uint64_t stored_bits(Dtype dtype, double v) {
  unsigned char buf[8] = {};
  store_element(buf, 0, dtype, v);
  std::uint64_t bits = 0;
  std::memcpy(&bits, buf, dtype_size(dtype));
  return bits;
}

// v survives the dtype's storage unchanged.
bool exact_in(Dtype dtype, double v) {
  unsigned char buf[8] = {};
  store_element(buf, 0, dtype, v);
  return load_element(buf, 0, dtype) == v;
}

std::vector<std::uint64_t> probe_elements(int n) {
  const auto un = static_cast<std::uint64_t>(n);
  return {0, 1, un - 1, un, 2 * un + 3, 12345, (1ULL << 32) - 1, (1ULL << 33) + 7 * un};
}

// The reduction over all n ranks of coll::reduce_input, in rank order, each partial result checked
// to be exact in the dtype (as a library computing in the dtype would hold it).
::testing::AssertionResult reduce_slowly(Dtype dtype, Redop redop, int n, std::uint64_t i, double& out) {
  const coll::ReducePattern p = coll::reduce_pattern(redop, dtype, n);
  double acc = coll::reduce_input(p, redop, 0, n, i);
  for (int r = 1; r < n; ++r) {
    const double next = apply_redop(redop, acc, coll::reduce_input(p, redop, r, n, i));
    if (next != acc && !exact_in(dtype, next)) {
      return ::testing::AssertionFailure() << "partial result " << next << " after rank " << r << " is not exact";
    }
    acc = next;
  }
  out = acc;
  return ::testing::AssertionSuccess();
}

TEST(PatternRules, ClosedFormEqualsTheReductionForEveryDtypeRedopAndRankCountTo1024) {
  std::uint64_t checked = 0;
  for (const auto& info : all_dtypes()) {
    for (Redop redop : kRedops) {
      for (int n = 1; n <= 1024; ++n) {
        const coll::ReducePattern p = coll::reduce_pattern(redop, info.dtype, n);
        for (std::uint64_t i : probe_elements(n)) {
          double slow = 0.0;
          ASSERT_TRUE(reduce_slowly(info.dtype, redop, n, i, slow));
          const double closed = coll::reduce_expected(p, redop, n, i);
          const std::string where = std::string(info.name) + " " + std::string(to_string(redop)) +
                                    " n=" + std::to_string(n) + " i=" + std::to_string(i);
          ASSERT_EQ(closed, slow) << where;
          ASSERT_EQ(pattern::encode_bits(info.dtype, static_cast<std::uint32_t>(closed)), stored_bits(info.dtype, slow))
              << where;
          ++checked;
        }
      }
    }
  }
  EXPECT_EQ(checked, 8u * 4u * 1024u * 8u);
}

TEST(PatternRules, RulesKeepEveryValueExactAndTheIdentityOutside) {
  for (const auto& info : all_dtypes()) {
    const std::int64_t budget = pattern::exact_budget(info.dtype);
    for (Redop redop : kRedops) {
      for (int n = 1; n <= 1024; ++n) {
        const auto r = pattern::reduce_rule(redop, info.dtype, n);
        const std::string where =
            std::string(info.name) + " " + std::string(to_string(redop)) + " n=" + std::to_string(n);
        ASSERT_GE(r.contributors, 1) << where;
        ASSERT_LE(r.contributors, std::min(n, pattern::contributor_cap(info.dtype))) << where;
        ASSERT_GE(r.base_range, 1) << where;
        ASSERT_LT(r.max_value, 1 << 23) << where;
        const std::int64_t k = r.contributors;
        switch (redop) {
          case Redop::sum:  // the largest sum: k bases at the top of the range
            ASSERT_LE(k * r.base_range + k * (k - 1) / 2, budget - 1) << where;
            ASSERT_EQ(r.identity, 0) << where;
            break;
          case Redop::prod:
            ASSERT_LE(std::int64_t{1} << k, budget) << where;
            ASSERT_EQ(r.max_value, 2) << where;
            ASSERT_EQ(r.identity, 1) << where;
            break;
          case Redop::min:
            ASSERT_EQ(r.identity, r.max_value + 1) << where;
            ASSERT_LE(r.identity, budget) << where;
            break;
          case Redop::max:
            ASSERT_EQ(r.identity, 0) << where;
            ASSERT_LE(r.max_value, budget - 1) << where;
            break;
        }
      }
    }
  }
  // Hand-computed: float32 sum on 72 ranks: k = 16, base range min(1000, (2^24 - 1 - 120) / 16).
  const auto f32 = pattern::reduce_rule(Redop::sum, Dtype::float32, 72);
  EXPECT_EQ(f32.contributors, 16);
  EXPECT_EQ(f32.base_range, 1000);
  EXPECT_EQ(f32.max_value, 1015);
  // e4m3 sum: k = 2, base range (16 - 1 - 1) / 2 = 7; e5m2 min: k = 2, range 8 - 2 = 6, identity 8.
  EXPECT_EQ(pattern::reduce_rule(Redop::sum, Dtype::float8e4m3, 72).base_range, 7);
  const auto e5 = pattern::reduce_rule(Redop::min, Dtype::float8e5m2, 72);
  EXPECT_EQ(e5.base_range, 6);
  EXPECT_EQ(e5.identity, 8);
  // bfloat16 prod: k = min(72, 8, log2 256) = 8; float32 prod: min(72, 16, 24) = 16.
  EXPECT_EQ(pattern::reduce_rule(Redop::prod, Dtype::bfloat16, 72).contributors, 8);
  EXPECT_EQ(pattern::reduce_rule(Redop::prod, Dtype::float32, 72).contributors, 16);
}

TEST(PatternRules, ContributorsHoldBasePlusOffsetAndClosedFormsAreHandComputed) {
  const auto r = pattern::reduce_rule(Redop::sum, Dtype::float32, 8);  // k = 8
  const std::uint64_t h = pattern::weyl(pattern::kReduceKey, 5);
  const std::uint32_t base = 1 + pattern::scaled(h, static_cast<std::uint32_t>(r.base_range));
  for (std::uint32_t j = 0; j < 8; ++j) EXPECT_EQ(pattern::contributor_int(Redop::sum, r, h, j), base + j);
  EXPECT_EQ(pattern::reduced_int(Redop::sum, r, h), 8 * base + 28);
  EXPECT_EQ(pattern::reduced_int(Redop::min, r, h), base);
  EXPECT_EQ(pattern::reduced_int(Redop::max, r, h), base + 7);
  const auto rp = pattern::reduce_rule(Redop::prod, Dtype::float32, 8);
  std::uint32_t twos = 0;
  for (std::uint32_t j = 0; j < 8; ++j) twos += pattern::contributor_int(Redop::prod, rp, h, j) == 2 ? 1 : 0;
  EXPECT_EQ(pattern::reduced_int(Redop::prod, rp, h), 1u << twos);
}

TEST(PatternRules, DirectEncodingEqualsTheHostCodecForEverySmallInteger) {
  for (const auto& info : all_dtypes()) {
    const std::int64_t top = std::min<std::int64_t>(pattern::exact_budget(info.dtype), 70000);
    for (std::int64_t v = 0; v <= top; ++v) {
      ASSERT_EQ(pattern::encode_bits(info.dtype, static_cast<std::uint32_t>(v)),
                stored_bits(info.dtype, static_cast<double>(v)))
          << info.name << " " << v;
    }
    if (pattern::exact_budget(info.dtype) >= (1 << 23)) {
      for (std::uint32_t v = (1u << 23) - 5000; v < (1u << 23); ++v) {
        ASSERT_EQ(pattern::encode_bits(info.dtype, v), stored_bits(info.dtype, v)) << info.name << " " << v;
      }
    }
  }
}

TEST(PatternRules, SteppedCursorEqualsAFreshOne) {
  std::mt19937_64 rng(11);
  for (int n : {1, 2, 3, 7, 72, 1024}) {
    for (pattern::SegmentKind kind : {pattern::SegmentKind::reduce_input, pattern::SegmentKind::move}) {
      const auto p = pattern::pattern_params(Dtype::float32, Redop::sum, n);
      pattern::Segment s;
      s.kind = kind;
      s.src = n - 1;
      s.dst = n / 2;
      const std::uint64_t starts[] = {0, (1ULL << 32) - 3, static_cast<std::uint64_t>(rng())};
      for (std::uint64_t start : starts) {
        pattern::Cursor c = pattern::cursor_at(p, s, start);
        for (std::uint64_t k = 1; k <= 300; ++k) {
          pattern::next(c, p);
          const pattern::Cursor fresh = pattern::cursor_at(p, s, start + k);
          ASSERT_EQ(c.h, fresh.h) << n << " " << k;
          if (kind == pattern::SegmentKind::reduce_input) {
            ASSERT_EQ(c.j, fresh.j) << n << " " << k;
          }
        }
        for (std::uint64_t step : {std::uint64_t{1}, std::uint64_t{1024}, std::uint64_t{4096 * 256 * 16 + 5}}) {
          pattern::Cursor a = pattern::cursor_at(p, s, start);
          pattern::advance(a, p, step, static_cast<std::uint32_t>(step % static_cast<std::uint64_t>(n)));
          const pattern::Cursor fresh = pattern::cursor_at(p, s, start + step);
          ASSERT_EQ(a.h, fresh.h) << n << " step " << step;
          if (kind == pattern::SegmentKind::reduce_input) {
            ASSERT_EQ(a.j, fresh.j) << n << " step " << step;
          }
        }
      }
    }
  }
}

// A block from the wrong peer, or shifted by a few elements, differs in many of its elements in
// every dtype (the narrowest: e5m2, values in [1, 8], where a random value matches 1 time in 8).
TEST(PatternRules, MovedValuesTellPeersAndOffsetsApart) {
  constexpr int kElems = 256;
  for (const auto& info : all_dtypes()) {
    auto block = [&](int src, int dst, std::uint64_t first) {
      std::vector<double> v;
      for (int i = 0; i < kElems; ++i) v.push_back(coll::move_value(info.dtype, src, dst, first + i));
      return v;
    };
    auto differing = [](const std::vector<double>& a, const std::vector<double>& b) {
      int d = 0;
      for (std::size_t i = 0; i < a.size(); ++i) d += a[i] != b[i] ? 1 : 0;
      return d;
    };
    for (int src = 0; src < 12; ++src) {
      for (int dst = 0; dst < 12; ++dst) {
        const auto ref = block(src, dst, 0);
        for (int src2 = 0; src2 < 12; ++src2) {
          if (src2 == src) continue;
          EXPECT_GE(differing(ref, block(src2, dst, 0)), kElems / 2) << info.name << " " << src << "->" << dst;
        }
        for (std::uint64_t shift = 1; shift <= 32; ++shift) {
          EXPECT_GE(differing(ref, block(src, dst, shift)), kElems / 2) << info.name << " shift " << shift;
        }
      }
    }
  }
}

}  // namespace
