// Collective traits: nccl-tests byte conventions, rounding, busbw factors against hand-computed
// numbers, and the exact-verification patterns simulated on the host for every dtype.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <numeric>

#include "collbench/coll/collective.hpp"
#include "collbench/coll/pattern.hpp"
#include "collbench/core/error.hpp"

using namespace collbench;
using coll::find_collective;

TEST(BusbwFactor, HandComputed) {
  const auto& ar = find_collective("allreduce");
  const auto& rs = find_collective("reducescatter");
  const auto& ag = find_collective("allgather");
  const auto& a2a = find_collective("alltoall");
  const auto& a2av = find_collective("alltoallv");
  // 2(n-1)/n: n=2 -> 1, n=8 -> 1.75, n=72 -> 142/72, n=1024 -> 2046/1024
  EXPECT_DOUBLE_EQ(ar.busbw_factor(2), 1.0);
  EXPECT_DOUBLE_EQ(ar.busbw_factor(8), 1.75);
  EXPECT_DOUBLE_EQ(ar.busbw_factor(72), 142.0 / 72.0);
  EXPECT_DOUBLE_EQ(ar.busbw_factor(1024), 1.998046875);
  // (n-1)/n
  for (const auto* c : {&rs, &ag, &a2a, &a2av}) {
    EXPECT_DOUBLE_EQ(c->busbw_factor(2), 0.5);
    EXPECT_DOUBLE_EQ(c->busbw_factor(8), 0.875);
    EXPECT_DOUBLE_EQ(c->busbw_factor(72), 71.0 / 72.0);
    EXPECT_DOUBLE_EQ(c->busbw_factor(1024), 0.9990234375);
  }
  EXPECT_DOUBLE_EQ(find_collective("broadcast").busbw_factor(8), 1.0);
  EXPECT_DOUBLE_EQ(find_collective("sendrecv").busbw_factor(1024), 1.0);
}

TEST(Shape, AllreduceRoundsToWholeElements) {
  const auto s = find_collective("allreduce").shape(1001, Dtype::float32, 0, 8);
  EXPECT_EQ(s.count, 250u);
  EXPECT_EQ(s.bytes, 1000u);
  EXPECT_EQ(s.send_elems, 250u);
  EXPECT_EQ(s.recv_elems, 250u);
}

TEST(Shape, ReduceScatterMatchesNcclTestsLog) {
  // From the real 8xH100 log: requested 8..64 B round to size 0; 128 B -> count 4; 1024 -> 32.
  const auto& rs = find_collective("reducescatter");
  for (std::uint64_t b : {8u, 16u, 32u, 64u}) {
    const auto s = rs.shape(b, Dtype::float32, 3, 8);
    EXPECT_EQ(s.bytes, 0u);
    EXPECT_EQ(s.count, 0u);
  }
  const auto s = rs.shape(128, Dtype::float32, 3, 8);
  EXPECT_EQ(s.count, 4u);
  EXPECT_EQ(s.bytes, 128u);
  EXPECT_EQ(s.send_elems, 32u);
  EXPECT_EQ(s.recv_elems, 4u);
  EXPECT_EQ(rs.shape(1024, Dtype::float32, 0, 8).count, 32u);
  // 1000 B on 3 ranks, float32: 250 elements -> 83 per rank -> 80 (16-byte units) -> 960 B.
  const auto u = rs.shape(1000, Dtype::float32, 0, 3);
  EXPECT_EQ(u.count, 80u);
  EXPECT_EQ(u.bytes, 960u);
  EXPECT_EQ(u.bytes_per_rank_recv, 320u);
  // fp8: 16 elements per 16-byte unit; bfloat16: 8.
  EXPECT_EQ(rs.shape(1000, Dtype::float8e4m3, 0, 3).count, 320u);
  EXPECT_EQ(rs.shape(1000, Dtype::bfloat16, 0, 3).count, 160u);
}

TEST(Shape, AllgatherAndAlltoallRoundDownPerPeer) {
  const auto ag = find_collective("allgather").shape(1000, Dtype::float64, 1, 3);
  EXPECT_EQ(ag.count, 40u);  // 125 elements / 3 ranks = 41 -> 40 (2 float64 per 16 B)
  EXPECT_EQ(ag.bytes, 960u);
  EXPECT_EQ(ag.send_elems, 40u);
  EXPECT_EQ(ag.recv_elems, 120u);
  const auto a2a = find_collective("alltoall").shape(1000, Dtype::float64, 1, 3);
  EXPECT_EQ(a2a.count, 120u);  // 40 per peer x 3
  EXPECT_EQ(a2a.bytes, 960u);
  EXPECT_EQ(a2a.bytes_per_rank_send, 960u);
}

// nccl-tests' reduce.cu, gather.cu and scatter.cu: reduce moves the whole buffer (busbw factor 1);
// gather and scatter round the per-rank chunk down to 16-byte units and count n chunks as the
// size, with busbw = algbw x (n-1)/n.
TEST(Shape, ReduceGatherAndScatterAsNcclTests) {
  const auto& reduce = find_collective("reduce");
  const auto r = reduce.shape(1001, Dtype::float32, 2, 4);
  EXPECT_EQ(r.count, 250u);
  EXPECT_EQ(r.bytes, 1000u);
  EXPECT_EQ(r.send_elems, 250u);
  EXPECT_EQ(r.recv_elems, 250u);
  EXPECT_DOUBLE_EQ(reduce.busbw_factor(8), 1.0);
  // 1000 B of float32 on 4 ranks: 250 elements -> 62 per rank -> 60 (4 per 16 B) -> 960 B.
  const auto& gather = find_collective("gather");
  const auto g = gather.shape(1000, Dtype::float32, 1, 4);
  EXPECT_EQ(g.count, 60u);
  EXPECT_EQ(g.bytes, 960u);
  EXPECT_EQ(g.send_elems, 60u);
  EXPECT_EQ(g.recv_elems, 240u);
  EXPECT_EQ(g.bytes_per_rank_send, 240u);
  const auto& scatter = find_collective("scatter");
  const auto sc = scatter.shape(1000, Dtype::float32, 1, 4);
  EXPECT_EQ(sc.count, 60u);
  EXPECT_EQ(sc.bytes, 960u);
  EXPECT_EQ(sc.send_elems, 240u);
  EXPECT_EQ(sc.recv_elems, 60u);
  EXPECT_EQ(sc.bytes_per_rank_recv, 240u);
  EXPECT_DOUBLE_EQ(gather.busbw_factor(4), 0.75);
  EXPECT_DOUBLE_EQ(scatter.busbw_factor(8), 0.875);
  // In place, NCCL's conventions: gather's input sits at rank x chunk of the output; scatter's
  // output lands at rank x chunk of the input.
  coll::CaseContext ctx;
  ctx.rank = 3;
  ctx.num_ranks = 4;
  EXPECT_EQ(gather.in_place_input_offset(g, ctx), 180u);
  EXPECT_EQ(scatter.in_place_input_offset(sc, ctx), 0u);
}

TEST(Shape, AlltoallvBytesMaxRankAndLogicalTotal) {
  // n = 2: w(s,d) = 1 + (s + 2d) mod 3: w(0,0)=1 w(0,1)=3 w(1,0)=2 w(1,1)=1 (mod 3 of 3 is 0 -> 1)
  // send totals: rank0 1+3=4, rank1 2+1=3; recv totals: rank0 1+2=3, rank1 3+1=4 -> max 4.
  const auto& c = find_collective("alltoallv");
  const auto s0 = c.shape(4 * 4 * 10, Dtype::int32, 0, 2);  // 10 elements per unit
  EXPECT_EQ(s0.bytes, 160u);
  EXPECT_EQ(s0.bytes_max_rank.value(), 160u);
  EXPECT_EQ(s0.bytes_logical_total.value(), (4u + 3u) * 10u * 4u);
  EXPECT_EQ(s0.send_counts, (std::vector<std::size_t>{10, 30}));
  EXPECT_EQ(s0.recv_counts, (std::vector<std::size_t>{10, 20}));
  EXPECT_EQ(s0.send_displs, (std::vector<std::size_t>{0, 10}));
  const auto s1 = c.shape(160, Dtype::int32, 1, 2);
  EXPECT_EQ(s1.send_counts, (std::vector<std::size_t>{20, 10}));
  EXPECT_EQ(s1.recv_counts, (std::vector<std::size_t>{30, 10}));
}

TEST(CollectiveRegistry, UnknownNameSuggests) {
  try {
    find_collective("allreduc");
    FAIL();
  } catch (const InputError& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find("allreduc"), std::string::npos);
    EXPECT_NE(m.find("did you mean 'allreduce'"), std::string::npos);
    EXPECT_NE(m.find("alltoall"), std::string::npos);
  }
}

// Simulates a reduction on the host in the dtype itself (each partial result rounded to the
// dtype), in two different orders, and checks both against the exact expectation.
class PatternExactness : public ::testing::TestWithParam<std::tuple<Dtype, Redop, int>> {};

TEST_P(PatternExactness, EveryOrderGivesTheExactResult) {
  const auto [dtype, redop, n] = GetParam();
  const auto p = coll::reduce_pattern(redop, dtype, n);
  std::vector<unsigned char> acc(dtype_size(dtype));
  for (std::uint64_t i = 0; i < 257; ++i) {
    const double expected = coll::reduce_expected(p, redop, n, i);
    EXPECT_LT(std::abs(expected), static_cast<double>(dtype_info(dtype).exact_limit) + 1);
    for (bool reverse : {false, true}) {
      std::vector<int> order(static_cast<std::size_t>(n));
      std::iota(order.begin(), order.end(), 0);
      if (reverse) std::reverse(order.begin(), order.end());
      store_element(acc.data(), 0, dtype, coll::reduce_input(p, redop, order[0], n, i));
      for (std::size_t k = 1; k < order.size(); ++k) {
        const double v = coll::reduce_input(p, redop, order[k], n, i);
        store_element(acc.data(), 0, dtype, apply_redop(redop, load_element(acc.data(), 0, dtype), v));
      }
      ASSERT_EQ(load_element(acc.data(), 0, dtype), expected)
          << to_string(dtype) << " " << to_string(redop) << " n=" << n << " i=" << i;
    }
  }
}

INSTANTIATE_TEST_SUITE_P(AllDtypes, PatternExactness,
                         ::testing::Combine(::testing::Values(Dtype::int32, Dtype::int64, Dtype::float32,
                                                              Dtype::float64, Dtype::float16, Dtype::bfloat16,
                                                              Dtype::float8e4m3, Dtype::float8e5m2),
                                            ::testing::Values(Redop::sum, Redop::prod, Redop::min, Redop::max),
                                            ::testing::Values(1, 2, 3, 8, 72, 1024)));

TEST(Pattern, EveryRankContributesSomewhere) {
  // Rotation: over n consecutive elements every rank is a contributor at least once.
  const int n = 72;
  const auto p = coll::reduce_pattern(Redop::sum, Dtype::bfloat16, n);
  std::vector<int> seen(n, 0);
  for (std::uint64_t i = 0; i < static_cast<std::uint64_t>(n); ++i) {
    for (int r = 0; r < n; ++r) {
      if (coll::reduce_input(p, Redop::sum, r, n, i) != 0.0) ++seen[static_cast<std::size_t>(r)];
    }
  }
  for (int r = 0; r < n; ++r) EXPECT_EQ(seen[static_cast<std::size_t>(r)], p.contributors) << r;
  EXPECT_EQ(p.contributors, 8);
}

TEST(Pattern, MoveValuesAreExactAndDistinguishPeers) {
  for (const auto& d : all_dtypes()) {
    std::vector<unsigned char> cell(d.size_bytes);
    int differing = 0;
    for (std::uint64_t i = 0; i < 64; ++i) {
      const double v = coll::move_value(d.dtype, 3, 5, i);
      store_element(cell.data(), 0, d.dtype, v);
      EXPECT_EQ(load_element(cell.data(), 0, d.dtype), v) << d.name;
      if (v != coll::move_value(d.dtype, 4, 5, i)) ++differing;
      // corrupted() never round-trips to the original value
      store_element(cell.data(), 0, d.dtype, coll::corrupted(v));
      EXPECT_NE(load_element(cell.data(), 0, d.dtype), v) << d.name;
    }
    EXPECT_GT(differing, 32) << d.name;  // a block from the wrong peer is mostly wrong
  }
}
