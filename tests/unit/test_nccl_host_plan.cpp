// Device fill/verify plans (coll/device_plan.hpp) against every collective family's own
// fill() and verify(): the plan, run by the host reference executor (what the kernels do),
// must write the family's input byte for byte, and its expected result must pass the
// family's verify() with zero wrong elements, count one corrupted element as one, and cover
// the result exactly once. A family whose layout changes without its plan fails here.
// CPU only; runs in every build.
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "collbench/coll/collective.hpp"
#include "collbench/coll/device_plan.hpp"
#include "collbench/coll/pattern.hpp"
#include "collbench/coll/sendrecv.hpp"
#include "collbench/core/pairing.hpp"
#include "collbench/core/placement.hpp"

namespace {

using namespace collbench;
using backend::nccl::apply_plan_host;
using backend::nccl::count_wrong_host;
using backend::nccl::fill_plan;
using backend::nccl::pattern_params;
using backend::nccl::verify_plan;
namespace hd = collbench::backend::nccl::hd;

const std::set<std::string> kPlanned{"allreduce", "reducescatter", "allgather", "alltoall",
                                     "alltoallv", "broadcast",     "sendrecv"};

constexpr std::uint64_t kSizes[] = {0, 1, 7, 64, 1000, 4096 + 24};

std::vector<Redop> redops_for(const coll::Collective& c) {
  if (!c.has_redop()) return {Redop::sum};
  return {Redop::sum, Redop::prod, Redop::min, Redop::max};
}

// Segments cover [0, elems) exactly once.
::testing::AssertionResult partitions(std::vector<hd::Segment> segs, std::uint64_t elems) {
  std::sort(segs.begin(), segs.end(), [](const auto& a, const auto& b) { return a.offset_elems < b.offset_elems; });
  std::uint64_t next = 0;
  for (const auto& s : segs) {
    if (s.count == 0) continue;
    if (s.offset_elems != next) {
      return ::testing::AssertionFailure()
             << "gap or overlap at element " << next << " (segment at " << s.offset_elems << ")";
    }
    next += s.count;
  }
  if (next != elems) return ::testing::AssertionFailure() << "covers " << next << " of " << elems << " elements";
  return ::testing::AssertionSuccess();
}

TEST(NcclHostPlan, EveryRegisteredFamilyWithAPlanIsKnown) {
  for (const auto& c : coll::collective_registry()) {
    coll::CaseContext ctx;
    const auto shape = c->shape(1024, Dtype::float32, 0, 1);
    const bool has_plan = fill_plan(c->name(), shape, ctx).has_value();
    EXPECT_EQ(has_plan, kPlanned.count(std::string(c->name())) > 0) << c->name();
    EXPECT_EQ(has_plan, verify_plan(c->name(), shape, ctx).has_value()) << c->name();
  }
  for (const auto& name : kPlanned) EXPECT_NO_THROW(coll::find_collective(name)) << name;
}

TEST(NcclHostPlan, PlansReproduceFillAndVerifyOfEveryFamily) {
  int checked = 0;
  for (const auto& c : coll::collective_registry()) {
    if (kPlanned.count(std::string(c->name())) == 0) continue;
    for (const auto& info : all_dtypes()) {
      const std::size_t elem = info.size_bytes;
      for (Redop redop : redops_for(*c)) {
        for (int n : {1, 2, 3, 5, 8}) {
          for (int rank : std::set<int>{0, n / 2, n - 1}) {
            for (int root : {0, n - 1}) {
              if (root != 0 && c->name() != "broadcast") continue;
              for (std::uint64_t bytes : kSizes) {
                coll::CaseContext ctx;
                ctx.dtype = info.dtype;
                ctx.redop = redop;
                ctx.rank = rank;
                ctx.num_ranks = n;
                ctx.root = root;
                const coll::Shape s = c->shape(bytes, info.dtype, rank, n);
                const auto params = pattern_params(ctx);
                const std::string where = std::string(c->name()) + " " + std::string(info.name) + " " +
                                          std::string(to_string(redop)) + " n=" + std::to_string(n) + " rank " +
                                          std::to_string(rank) + " root " + std::to_string(root) + " bytes " +
                                          std::to_string(bytes);

                // Input: plan == family fill, byte for byte (both on a zeroed buffer).
                const auto fplan = fill_plan(c->name(), s, ctx);
                ASSERT_TRUE(fplan) << where;
                for (const auto& seg : *fplan) ASSERT_LE(seg.offset_elems + seg.count, s.send_elems) << where;
                std::vector<unsigned char> host(std::max<std::size_t>(s.send_elems * elem, 1), 0);
                std::vector<unsigned char> planned(host.size(), 0);
                c->fill(host.data(), s, ctx);
                apply_plan_host(planned.data(), params, *fplan);
                ASSERT_EQ(host, planned) << where;

                // In place: the input sits at the family's offset in a zeroed buffer of
                // in_place_elems; shifting the plan by that offset reproduces it.
                if (c->supports_in_place()) {
                  const std::size_t off = c->in_place_input_offset(s, ctx);
                  std::vector<unsigned char> ip_host(std::max<std::size_t>(s.in_place_elems() * elem, 1), 0);
                  std::vector<unsigned char> ip_plan(ip_host.size(), 0);
                  c->fill(ip_host.data() + off * elem, s, ctx);
                  auto shifted = *fplan;
                  for (auto& seg : shifted) seg.offset_elems += off;
                  apply_plan_host(ip_plan.data(), params, shifted);
                  ASSERT_EQ(ip_host, ip_plan) << where << " in place";
                }

                // Expected result: passes verify(), covers the result once, and one corrupted
                // element counts as one wrong element on both sides.
                const auto vplan = verify_plan(c->name(), s, ctx);
                ASSERT_TRUE(vplan) << where;
                ASSERT_TRUE(partitions(*vplan, s.recv_elems)) << where;
                std::vector<unsigned char> expected(std::max<std::size_t>(s.recv_elems * elem, 1), 0xff);
                EXPECT_EQ(count_wrong_host(expected.data(), params, *vplan), s.recv_elems) << where << " poison";
                EXPECT_EQ(c->verify(expected.data(), s, ctx), s.recv_elems) << where << " poison";
                apply_plan_host(expected.data(), params, *vplan);
                ASSERT_EQ(c->verify(expected.data(), s, ctx), 0u) << where;
                ASSERT_EQ(count_wrong_host(expected.data(), params, *vplan), 0u) << where;
                if (s.recv_elems > 0) {
                  const std::size_t victim = s.recv_elems / 2;
                  store_element(expected.data(), victim, info.dtype,
                                coll::corrupted(load_element(expected.data(), victim, info.dtype)));
                  EXPECT_EQ(c->verify(expected.data(), s, ctx), 1u) << where;
                  EXPECT_EQ(count_wrong_host(expected.data(), params, *vplan), 1u) << where;
                }
                ++checked;
              }
            }
          }
        }
      }
    }
  }
  EXPECT_GT(checked, 1000);
}

// sendrecv with each pairing (ring; every round of round-robin; every round of rail over even and
// uneven domains, where a rank off its rail exchanges with itself): each rank's fill plan writes
// the family's fill, and the buffer its recv_from peer's plan writes is exactly what this rank's
// expected-result plan and the family's verify() accept. The ring is the only pairing the
// family-wide test above reaches (no params).
TEST(NcclHostPlan, SendrecvPlansFollowEveryPairing) {
  const coll::Collective& c = coll::find_collective("sendrecv");
  struct Pairing {
    int n;
    std::vector<int> domains;  // empty: one domain
    std::map<std::string, std::string> params;
  };
  std::vector<Pairing> pairings;
  for (int n : {1, 2, 3, 5, 8}) {
    pairings.push_back({n, {}, {}});
    for (int round = 0; round < round_robin_rounds(n); ++round) {
      pairings.push_back({n, {}, {{"pairing", "round-robin"}, {"round", std::to_string(round)}}});
    }
  }
  for (const auto& sizes : std::vector<std::vector<int>>{{1, 1}, {2, 1}, {3, 2}, {2, 2, 2, 2}, {4, 4}}) {
    int n = 0;
    for (int size : sizes) n += size;
    for (int round = 0; round < round_robin_rounds(static_cast<int>(sizes.size())); ++round) {
      pairings.push_back({n, sizes, {{"pairing", "rail"}, {"round", std::to_string(round)}}});
    }
  }
  int checked = 0;
  for (const auto& pairing : pairings) {
    for (Dtype dtype : {Dtype::float32, Dtype::bfloat16, Dtype::float8e4m3}) {
      const std::size_t elem = dtype_size(dtype);
      coll::CaseContext ctx;
      ctx.dtype = dtype;
      ctx.num_ranks = pairing.n;
      ctx.params = &pairing.params;
      if (!pairing.domains.empty()) ctx.placement = placement_from_sizes(pairing.n, pairing.domains);
      for (int rank = 0; rank < pairing.n; ++rank) {
        ctx.rank = rank;
        const std::string where = fmt::format("{} n={} domains {} rank {}", fmt::join(pairing.params, ","), pairing.n,
                                              fmt::join(pairing.domains, ","), rank);
        const coll::Shape s = c.shape(1000, dtype, rank, pairing.n);
        const auto fplan = fill_plan(c.name(), s, ctx);
        ASSERT_TRUE(fplan) << where;
        std::vector<unsigned char> family(s.send_elems * elem, 0), planned(family.size(), 0);
        c.fill(family.data(), s, ctx);
        apply_plan_host(planned.data(), pattern_params(ctx), *fplan);
        ASSERT_EQ(family, planned) << where << ": fill";

        // What arrives: the recv_from peer's input, written by that peer's plan.
        coll::CaseContext peer = ctx;
        peer.rank = coll::sendrecv_peers(ctx).recv_from;
        ASSERT_EQ(coll::sendrecv_peers(peer).send_to, rank) << where << ": the peer sends elsewhere";
        std::vector<unsigned char> arrived(s.recv_elems * elem, 0);
        apply_plan_host(arrived.data(), pattern_params(peer), *fill_plan(c.name(), s, peer));
        const auto vplan = verify_plan(c.name(), s, ctx);
        ASSERT_TRUE(vplan) << where;
        EXPECT_EQ(count_wrong_host(arrived.data(), pattern_params(ctx), *vplan), 0u) << where << ": device check";
        EXPECT_EQ(c.verify(arrived.data(), s, ctx), 0u) << where << ": family verify";
        ++checked;
      }
    }
  }
  EXPECT_GT(checked, 400);
}

TEST(NcclHostPlan, MaxSegmentCount) {
  std::vector<hd::Segment> segs(3);
  segs[0].count = 5;
  segs[1].count = 17;
  segs[2].count = 2;
  EXPECT_EQ(backend::nccl::max_segment_count(segs), 17u);
  EXPECT_EQ(backend::nccl::max_segment_count({}), 0u);
}

}  // namespace
