// SimGrid platform generation (sim/platform): link rates and latencies from the profile computed by
// hand, exact routes, partial domains, degradation, and the messages for bad input.
#include <gtest/gtest.h>

#include <string>

#include "collbench/core/error.hpp"
#include "collbench/model/system_profile.hpp"
#include "collbench/sim/platform.hpp"

namespace collbench::sim {
namespace {

model::SystemProfile gb300() {
  return model::load_system_profile(std::string(COLLBENCH_SOURCE_DIR) + "/profiles/systems/gb300-nvl72.yaml");
}

const LinkSpec& link(const Platform& p, const std::string& name) {
  for (const auto& l : p.links) {
    if (l.name == name) return l;
  }
  throw std::runtime_error("no link " + name);
}

std::string error_of(const model::SystemProfile& prof, const PlatformSpec& spec) {
  try {
    (void)make_platform(prof, spec);
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

TEST(SimPlatformTest, RatesAndLatenciesFromTheProfile) {
  // GB300 NVL72: 1.8 TB/s bidirectional NVLink = 900e9 B/s per direction, hop 0.6 us (0.3 per port);
  // 1 x 800 Gb/s NIC = 100e9 B/s, network hop 2.7 us (1.35 per NIC); uplink of a 2-GPU domain
  // = 2 x 100e9 / oversubscription 1.
  const Platform p = make_platform(gb300(), {4, 2, {}});
  EXPECT_EQ(p.domain_sizes, (std::vector<int>{2, 2}));
  EXPECT_DOUBLE_EQ(link(p, "nvl-3").bytes_per_s, 900e9);
  EXPECT_DOUBLE_EQ(link(p, "nvl-3").latency_s, 0.3e-6);
  EXPECT_DOUBLE_EQ(link(p, "nic-0").bytes_per_s, 100e9);
  EXPECT_DOUBLE_EQ(link(p, "nic-0").latency_s, 1.35e-6);
  EXPECT_DOUBLE_EQ(link(p, "uplink-1").bytes_per_s, 200e9);
  EXPECT_EQ(p.links.size(), 4u * 3 + 2);
  EXPECT_EQ(p.hostfile, "gpu-0\ngpu-1\ngpu-2\ngpu-3\n");
}

TEST(SimPlatformTest, RoutesInsideAndAcrossDomains) {
  const Platform p = make_platform(gb300(), {4, 2, {}});
  EXPECT_NE(
      p.xml.find("<link id=\"nvl-1\" bandwidth=\"900000000000Bps\" latency=\"0.3us\" sharing_policy=\"SPLITDUPLEX\"/>"),
      std::string::npos);
  EXPECT_NE(p.xml.find("<route src=\"gpu-0\" dst=\"gpu-1\" symmetrical=\"NO\"><link_ctn id=\"nvl-0\" direction=\"UP\"/>"
                       "<link_ctn id=\"nvl-1\" direction=\"DOWN\"/></route>"),
            std::string::npos);
  EXPECT_NE(p.xml.find("<route src=\"gpu-2\" dst=\"domain-1-gw\" symmetrical=\"NO\"><link_ctn id=\"nic-2\" "
                       "direction=\"UP\"/></route>"),
            std::string::npos);
  EXPECT_NE(p.xml.find("<zoneRoute src=\"domain-1\" dst=\"domain-0\" gw_src=\"domain-1-gw\" gw_dst=\"domain-0-gw\" "
                       "symmetrical=\"NO\"><link_ctn id=\"uplink-1\" direction=\"UP\"/><link_ctn id=\"uplink-0\" "
                       "direction=\"DOWN\"/></zoneRoute>"),
            std::string::npos);
  // No NVLink route between domains: gpu-1 and gpu-2 are in different zones.
  EXPECT_EQ(p.xml.find("<route src=\"gpu-1\" dst=\"gpu-2\""), std::string::npos);
}

TEST(SimPlatformTest, PartialLastDomainAndProfileDefault) {
  const Platform p = make_platform(gb300(), {1024, 0, {}});
  ASSERT_EQ(p.domain_sizes.size(), 15u);  // 14 x 72 + 16
  EXPECT_EQ(p.domain_sizes.back(), 16);
  EXPECT_DOUBLE_EQ(link(p, "uplink-0").bytes_per_s, 72 * 100e9);
  EXPECT_DOUBLE_EQ(link(p, "uplink-14").bytes_per_s, 16 * 100e9);
}

TEST(SimPlatformTest, OversubscriptionTapersTheUplink) {
  model::SystemProfile prof = gb300();
  prof.scale_out.oversubscription = 2;
  const Platform p = make_platform(prof, {8, 4, {}});
  EXPECT_DOUBLE_EQ(link(p, "uplink-0").bytes_per_s, 4 * 100e9 / 2);
  EXPECT_DOUBLE_EQ(link(p, "nic-0").bytes_per_s, 100e9);  // the NIC itself is not tapered
}

TEST(SimPlatformTest, DegradeScalesOneLink) {
  const Platform p = make_platform(gb300(), {4, 2, {{"nic-3", 0.25}, {"uplink-0", 0.5}}});
  EXPECT_DOUBLE_EQ(link(p, "nic-3").bytes_per_s, 25e9);
  EXPECT_DOUBLE_EQ(link(p, "nic-2").bytes_per_s, 100e9);
  EXPECT_DOUBLE_EQ(link(p, "uplink-0").bytes_per_s, 100e9);
  EXPECT_NE(p.xml.find("<link id=\"nic-3\" bandwidth=\"25000000000Bps\""), std::string::npos);
}

TEST(SimPlatformTest, BadInputNamesTheProblem) {
  EXPECT_EQ(error_of(gb300(), {4, 2, {{"nic-9", 0.5}}}),
            "--degrade nic-9: no such link; accepted: nvl-G or nic-G with G in 0..3, uplink-D with D in 0..1");
  EXPECT_EQ(error_of(gb300(), {256, 80, {}}),
            "--ranks-per-domain 80: system 'gb300-nvl72' has 72 GPUs per scale-up domain; accepted: 1 to 72");
  EXPECT_EQ(error_of(gb300(), {1, 0, {}}), "--gpus 1: a simulated platform needs at least 2 GPUs");
  // Issue 37 item 4: 10,000,000 GPUs grew to 20 GiB before; refused before anything is built.
  EXPECT_EQ(error_of(gb300(), {10000000, 0, {}}),
            "--gpus 10000000: a simulated platform takes at most 65536 GPUs; accepted: 2 to 65536");
  EXPECT_EQ(error_of(gb300(), {65537, 0, {}}),
            "--gpus 65537: a simulated platform takes at most 65536 GPUs; accepted: 2 to 65536");
  model::SystemProfile cpu = gb300();
  cpu.name = "cpu-x";
  cpu.scale_up.domain_size = 0;
  EXPECT_EQ(error_of(cpu, {8, 0, {}}),
            "system 'cpu-x' fixes no scale-up domain size (scale_up.domain_size); pass --ranks-per-domain");
}

TEST(SimPlatformTest, ParseDegrade) {
  EXPECT_EQ(parse_degrade("nic-17=0.25"), (std::pair<std::string, double>{"nic-17", 0.25}));
  const auto message = [](const std::string& text) {
    try {
      (void)parse_degrade(text);
    } catch (const InputError& e) {
      return std::string(e.what());
    }
    return std::string();
  };
  EXPECT_NE(message("nic-17").find("--degrade 'nic-17': no LINK=FACTOR"), std::string::npos);
  EXPECT_NE(message("nic-17=abc").find("the factor is not a number"), std::string::npos);
  EXPECT_NE(message("nic-17=0.5x").find("the factor is not a number"), std::string::npos);
  EXPECT_NE(message("nic-17=1.5").find("the factor is outside (0, 1]"), std::string::npos);
  EXPECT_NE(message("nic-17=0").find("the factor is outside (0, 1]"), std::string::npos);
}

TEST(SimPlatformTest, SimgridSpellings) {
  EXPECT_EQ(simgrid_bandwidth(900e9), "900000000000Bps");
  EXPECT_EQ(simgrid_latency(0.3e-6), "0.3us");
  EXPECT_EQ(simgrid_latency(1.35e-6), "1.35us");
  EXPECT_EQ(simgrid_latency(0), "0us");
}

}  // namespace
}  // namespace collbench::sim
