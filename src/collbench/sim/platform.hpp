// SimGrid platforms generated from a system profile (docs/simulation.md): the fabric that
// `scripts/simulate` gives SMPI so that collbench itself runs at 72 to 1,024 simulated ranks.
// Pure C++ (no SimGrid needed to generate or test a platform).
//
// What is modelled, per GPU and per direction (SPLITDUPLEX links: each direction its own capacity):
//   - each scale-up domain a non-blocking crossbar: every GPU has one NVLink port `nvl-G` at the
//     profile's per-GPU rate; a message inside a domain crosses the sender's port up and the
//     receiver's port down, half the profile's hop latency each;
//   - each GPU its NICs as one link `nic-G` (nics_per_gpu x NIC rate) into its domain's leaf; each
//     leaf one uplink `uplink-D` to a non-blocking spine at (GPUs in the domain x per-GPU NIC rate
//     / oversubscription); a message between domains crosses nic up, uplink up, uplink down, nic
//     down, half the profile's network hop latency on each NIC;
//   - a message to itself crosses `loop-G` (device memory; not a fabric).
// Not modelled: in-switch reduction (NVLS), rail-local paths below the taper, ECMP collisions,
// PCIe, congestion control. Names of hosts are gpu-G, G the global rank (rank-major).
#pragma once

#include <map>
#include <string>
#include <vector>

#include "collbench/model/system_profile.hpp"

namespace collbench::sim {

// The most GPUs a simulated platform may have (issue 37 item 4): its XML grows by about 1 KB a
// GPU and SimGrid runs one process per rank, so 65536 is far past what a simulation finishes; a
// larger --gpus is refused before anything is built.
inline constexpr int kMaxSimulatedGpus = 65536;

struct PlatformSpec {
  int gpus = 0;                           // simulated ranks, one per GPU
  int ranks_per_domain = 0;               // 0 = the profile's domain size
  std::map<std::string, double> degrade;  // link name -> factor in (0, 1] applied to its bandwidth
};

struct LinkSpec {
  std::string name;
  double bytes_per_s = 0.0;  // per direction
  double latency_s = 0.0;
};

struct Platform {
  std::string system;  // profile name
  int gpus = 0;
  int ranks_per_domain = 0;
  std::vector<int> domain_sizes;  // rank-major; the last may be partial
  std::vector<LinkSpec> links;    // every link, in declaration order, degradation applied
  std::string xml;                // SimGrid platform (version 4.1)
  std::string hostfile;           // one host per line: rank r runs on gpu-r
};

// Builds the platform. InputError (exit 2) for a rank count the profile cannot place, a profile
// without scale-out figures, or a --degrade naming a link that does not exist or a bad factor.
Platform make_platform(const model::SystemProfile& profile, const PlatformSpec& spec);

// Parses one --degrade value "LINK=FACTOR" (e.g. "nic-17=0.25"); InputError naming the text.
std::pair<std::string, double> parse_degrade(const std::string& text);

// SimGrid's spelling of a rate and a latency ("900000000000Bps", "0.3us"): exact integers of
// bytes per second and microseconds, so the file round-trips without rounding.
std::string simgrid_bandwidth(double bytes_per_s);
std::string simgrid_latency(double seconds);

}  // namespace collbench::sim
