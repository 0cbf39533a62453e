// `collbench simulate platform`: a SimGrid platform and host file generated from a system profile,
// for running collbench itself at 72-1,024 simulated ranks under SMPI (scripts/simulate,
// docs/simulation.md). Writes files only: no MPI, no SimGrid needed.
#include <fmt/format.h>
#include <sys/stat.h>

#include <cstdio>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "cli/common_options.hpp"
#include "cli/out_dir.hpp"
#include "cli/subcommand.hpp"
#include "collbench/core/error.hpp"
#include "collbench/model/system_profile.hpp"
#include "collbench/sim/platform.hpp"

namespace collbench::cli {
namespace {

struct PlatformFlags {
  std::string system;
  int gpus = 0;
  int ranks_per_domain = 0;
  std::vector<std::string> degrade;
  std::string out;
  std::optional<std::string> hostfile;
  bool force = false;
};

void refuse_existing(const std::string& path, bool force) {
  struct stat st {};
  if (!force && ::stat(path.c_str(), &st) == 0) {
    throw InputError(fmt::format("output file '{}' exists; pass --force to replace it, or choose another path", path));
  }
}

int run_platform(const PlatformFlags& f) {
  sim::PlatformSpec spec;
  spec.gpus = f.gpus;
  spec.ranks_per_domain = f.ranks_per_domain;
  for (const auto& d : f.degrade) {
    const auto [link, factor] = sim::parse_degrade(d);
    if (!spec.degrade.emplace(link, factor).second) throw InputError(fmt::format("--degrade {}: given twice", link));
  }
  const model::SystemProfile profile = model::load_system_profile(f.system);
  const sim::Platform pl = sim::make_platform(profile, spec);
  const std::string hostfile = f.hostfile.value_or(f.out + ".hosts");
  refuse_existing(f.out, f.force);
  refuse_existing(hostfile, f.force);
  write_file_atomic(f.out, pl.xml);
  write_file_atomic(hostfile, pl.hostfile);
  std::printf("# simulated platform: %s, %d GPUs in %zu domain(s) of up to %d (last %d)\n", pl.system.c_str(), pl.gpus,
              pl.domain_sizes.size(), pl.ranks_per_domain, pl.domain_sizes.back());
  std::printf("# per direction: nvl-G %.1f GB/s, nic-G %.1f GB/s, uplink-0 %.1f GB/s\n",
              profile.scale_up.bytes_per_s / 1e9,
              profile.scale_out.nics_per_gpu * profile.scale_out.nic_bytes_per_s / 1e9,
              pl.links[3 * static_cast<std::size_t>(pl.gpus)].bytes_per_s / 1e9);
  for (const auto& [link, factor] : spec.degrade) std::printf("# degraded: %s x %g\n", link.c_str(), factor);
  std::printf("# wrote %s and %s (rank r runs on host gpu-r)\n", f.out.c_str(), hostfile.c_str());
  return 0;
}

Action setup_simulate(CLI::App& app) {
  app.require_subcommand(1);
  CLI::App* plat = app.add_subcommand("platform", "Write a SimGrid platform (XML) and host file for a system profile");
  auto f = std::make_shared<PlatformFlags>();
  add_system_option(*plat, f->system, "System profile to simulate, e.g. gb300-nvl72")->required();
  plat->add_option("--gpus", f->gpus, "Simulated GPUs (= MPI ranks), e.g. 1024")->required();
  plat->add_option("--ranks-per-domain", f->ranks_per_domain,
                   "GPUs per scale-up domain (default: the profile's domain size; the last domain may be partial)");
  plat->add_option("--degrade", f->degrade,
                   "LINK=FACTOR: scale one link's bandwidth, e.g. nic-17=0.25 (nvl-G, nic-G, uplink-D); repeatable");
  plat->add_option("--out,-o", f->out, "Platform file to write (XML)")->required();
  plat->add_option("--hostfile", f->hostfile, "Host file to write (default: OUT.hosts)");
  plat->add_flag("--force", f->force, "Replace existing output files");
  plat->footer(
      "Each domain a non-blocking NVLink crossbar (one port per GPU at the profile's rate), each GPU its NICs\n"
      "into its domain's leaf, each leaf one uplink to a non-blocking spine at GPUs x NIC rate / oversubscription.\n"
      "docs/simulation.md says what is and is not modelled. Run collbench on it with scripts/simulate.\n"
      "Examples:\n"
      "  collbench simulate platform --system gb300-nvl72 --gpus 1024 --out plat.xml\n"
      "  collbench simulate platform --system gb300-nvl72 --gpus 256 --degrade nic-17=0.25 --out slow.xml");
  return [f]() -> int { return run_platform(*f); };
}

}  // namespace

CB_REGISTER_SUBCOMMAND(Subcommand{"simulate", "Simulation inputs for SimGrid SMPI (platforms from system profiles)", 80,
                                  &setup_simulate, false});

}  // namespace collbench::cli
