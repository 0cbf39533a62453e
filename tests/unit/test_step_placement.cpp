// EP placement on scale-up domains (docs/step.md, "EP placement"): placements computed by hand for
// 256 and 1,024 GPUs on 72- and 64-GPU domains.
#include <gtest/gtest.h>

#include "collbench/core/error.hpp"
#include "collbench/step/ep_placement.hpp"

namespace collbench::step {
namespace {

TEST(StepPlacement, Ep32On72RackMajorStraddlesThreeOfEight) {
  // Domains [0,72) [72,144) [144,216) [216,256): groups [64,96) 8+24, [128,160) 16+16,
  // [192,224) 24+8 straddle; the other five do not.
  const EpPlacement p = place_ep_groups(256, 32, 72, Packing::rack_major);
  EXPECT_EQ(p.used_per_domain, 72);
  EXPECT_EQ(p.domains, 4);
  EXPECT_EQ(p.groups, 8);
  EXPECT_EQ(p.straddling, 3);
  EXPECT_TRUE(p.fits);
  EXPECT_EQ(describe(p),
            "8 EP32 groups (rack-major) in 4 domains of 72 of 72 GPUs: 3 of 8 EP groups straddle two domains and "
            "their EP phases cross the network (--packing ep-aligned keeps them inside)");
}

TEST(StepPlacement, Ep32On72AlignedUses64PerRack) {
  // floor(72 / 32) x 32 = 64 GPUs per rack, 8 idle: 256 / 64 = 4 racks, two whole groups each.
  const EpPlacement p = place_ep_groups(256, 32, 72, Packing::ep_aligned);
  EXPECT_EQ(p.used_per_domain, 64);
  EXPECT_EQ(p.idle_per_domain(), 8);
  EXPECT_EQ(p.domains, 4);
  EXPECT_EQ(p.straddling, 0);
  EXPECT_EQ(describe(p),
            "8 EP32 groups (ep-aligned) in 4 domains of 64 of 72 GPUs, 8 idle per domain, every EP group inside one "
            "domain");
}

TEST(StepPlacement, Ep64On72) {
  // Rack-major: [64,128) 8+56, [128,192) 16+48, [192,256) 24+40 straddle. Aligned: one group per rack.
  const EpPlacement packed = place_ep_groups(256, 64, 72, Packing::rack_major);
  EXPECT_EQ(packed.straddling, 3);
  EXPECT_EQ(packed.groups, 4);
  const EpPlacement aligned = place_ep_groups(256, 64, 72, Packing::ep_aligned);
  EXPECT_EQ(aligned.used_per_domain, 64);
  EXPECT_EQ(aligned.domains, 4);
  EXPECT_EQ(aligned.straddling, 0);
}

TEST(StepPlacement, Ep32At1024On72And64) {
  // Rack-major on 72: the 14 rack edges 72k (k = 1..14) below 1,024 cut a group unless 72k is a
  // multiple of 32, i.e. k = 4, 8, 12 (288, 576, 864): 11 of 32 groups straddle; 15 racks (14 x 72 + 16).
  const EpPlacement packed = place_ep_groups(1024, 32, 72, Packing::rack_major);
  EXPECT_EQ(packed.groups, 32);
  EXPECT_EQ(packed.straddling, 11);
  EXPECT_EQ(packed.domains, 15);
  const EpPlacement aligned = place_ep_groups(1024, 32, 72, Packing::ep_aligned);
  EXPECT_EQ(aligned.used_per_domain, 64);
  EXPECT_EQ(aligned.domains, 16);
  EXPECT_EQ(aligned.straddling, 0);
  // 64-GPU domains hold two EP32 groups either way.
  for (const Packing k : {Packing::rack_major, Packing::ep_aligned}) {
    const EpPlacement p = place_ep_groups(1024, 32, 64, k);
    EXPECT_EQ(p.used_per_domain, 64);
    EXPECT_EQ(p.domains, 16);
    EXPECT_EQ(p.straddling, 0);
  }
}

TEST(StepPlacement, Ep256CannotFitA72GpuDomain) {
  // The largest divisor of 256 that is <= 72 is 64: every EP256 group spans 4 domains of 64.
  const EpPlacement p = place_ep_groups(1024, 256, 72, Packing::ep_aligned);
  EXPECT_FALSE(p.fits);
  EXPECT_EQ(p.used_per_domain, 64);
  EXPECT_EQ(p.domains, 16);
  EXPECT_EQ(p.straddling, 4);
  EXPECT_EQ(describe(p),
            "4 EP256 groups (ep-aligned) in 16 domains of 64 of 72 GPUs, 8 idle per domain: EP256 does not fit a "
            "72-GPU domain, every group spans 4 domains and its EP phases cross the network");
}

TEST(StepPlacement, OneDomainAndErrors) {
  const EpPlacement p = place_ep_groups(64, 16, 0, Packing::ep_aligned);
  EXPECT_EQ(p.domain_size, 64);
  EXPECT_EQ(p.domains, 1);
  EXPECT_EQ(p.straddling, 0);
  EXPECT_THROW(place_ep_groups(100, 32, 72, Packing::ep_aligned), InputError);
  EXPECT_EQ(parse_packing("rack-major"), Packing::rack_major);
  try {
    (void)parse_packing("even");
    FAIL();
  } catch (const InputError& e) {
    EXPECT_STREQ(e.what(), "--packing 'even': accepted: ep-aligned, rack-major");
  }
}

}  // namespace
}  // namespace collbench::step
