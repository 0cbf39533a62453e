// `collbench calibrate`: measures this host (memory-copy bandwidth per rank with all ranks
// copying at once, MPI point-to-point latency and bandwidth between two local ranks; several
// repetitions, best kept) and writes the `cpu-local` system profile to the user config folder
// (docs/interfaces.md section 4), so CPU runs get bounds. Runs under mpiexec with >= 2 ranks on one
// host; CPU only. Only rank 0 writes. The measurement is run::calibrate_host
// (collbench/run/host_calibration.cpp); this file parses the flags and writes its result.
#include <fmt/format.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <memory>
#include <string>

#include "cli/subcommand.hpp"
#include "collbench/core/checked_output.hpp"
#include "collbench/core/error.hpp"
#include "collbench/core/units.hpp"
#include "collbench/model/system_profile.hpp"
#include "collbench/run/host_calibration.hpp"
#include "collbench/run/session.hpp"

namespace collbench::cli {
namespace {

struct CalibrateFlags {
  std::string out;
  int repetitions = 10;
};

std::string host_name() {
  char buf[256] = {};
  if (gethostname(buf, sizeof buf - 1) != 0) return "unknown";
  return buf;
}

// The profile text; figures are written with their units so the file reads like the shipped ones.
std::string profile_yaml(const run::HostCalibration& m, const std::string& date, const std::string& host,
                         int repetitions) {
  const double bw_gbps = m.p2p.bandwidth_bytes_per_s / kBytesPerGB;
  const double lat_us = m.p2p.latency_s * 1e6;
  return fmt::format(
      R"(# cpu-local: this host, measured by `collbench calibrate` ({date}). Re-run it to refresh.
# Bounds on CPU: domains are simulated on one host, so both link classes are the measured MPI
# point-to-point path (shared memory). See docs/model.md, "What the bound means on CPU".
name: cpu-local
description: this host ({host}), {ranks} local MPI ranks, best of {reps} repetitions
kind: cpu
scale_up:
  bandwidth: {bw:.6g}GB/s per-direction   # best one-way MPI ping-pong rate ({msg} messages)
  hop_latency: {lat:.6g}us                # best one-way MPI ping-pong time, 8-byte messages
scale_out:
  nics_per_gpu: 1
  nic_bandwidth: {bw:.6g}GB/s per-direction
  hop_latency: {lat:.6g}us
  fabric: shared-memory
memory:
  copy_bandwidth: {copy:.6g}GB/s           # per rank, all {ranks} ranks copying at once (64 MiB)
in_switch:
  supported: false
efficiency:
  scale_up: 1.0                           # the figures above are already achieved rates
  scale_out: 1.0
calibrated:
  date: {date}
  host: {host}
  ranks: {ranks}
  repetitions: {reps}
  margin: {margin:.4f}                    # best vs median repetition: a run may beat a bound by this much
sources:
  - "collbench calibrate: MPI ping-pong between two local ranks and concurrent memcpy, best of {reps}"
)",
      fmt::arg("date", date), fmt::arg("host", host), fmt::arg("ranks", m.local_ranks), fmt::arg("reps", repetitions),
      fmt::arg("bw", bw_gbps), fmt::arg("lat", lat_us), fmt::arg("copy", m.copy_bytes_per_s / kBytesPerGB),
      fmt::arg("msg", format_bytes(m.p2p.bandwidth_message_bytes)), fmt::arg("margin", m.p2p.margin));
}

// Writes next to the target and renames, so a crash never leaves half a profile behind.
void write_atomically(const std::string& path, const std::string& text) {
  namespace fs = std::filesystem;
  const fs::path target(path);
  std::error_code ec;
  if (target.has_parent_path()) {
    fs::create_directories(target.parent_path(), ec);
    if (ec)
      throw InputError(
          fmt::format("--out {}: cannot create {}: {}", path, target.parent_path().string(), ec.message()));
  }
  write_file_atomic_checked(path, text, "--out");
}

// The summary on standard output (rank 0).
void print_summary(const run::HostCalibration& m, const std::string& host, int repetitions) {
  std::printf("collbench calibrate: host %s, %d local ranks, %d repetitions (best kept)\n", host.c_str(), m.local_ranks,
              repetitions);
  std::printf("  memory copy   %10.3f GB/s per rank (all ranks copying 64 MiB at once)\n", m.copy_bytes_per_s / 1e9);
  std::printf("  p2p latency   %10.3f us one-way (8 B ping-pong)\n", m.p2p.latency_s * 1e6);
  std::printf("  p2p bandwidth %10.3f GB/s per direction (best at %s)\n", m.p2p.bandwidth_bytes_per_s / 1e9,
              format_bytes(m.p2p.bandwidth_message_bytes).c_str());
  std::printf("  margin        %10.4f (best vs median repetition)\n", m.p2p.margin);
}

int run_calibration(const CalibrateFlags& f) {
  if (f.repetitions < 1) throw InputError(fmt::format("--repetitions {}: must be at least 1", f.repetitions));
  const std::string out_path = f.out.empty() ? model::cpu_local_profile_path() : f.out;
  const run::HostCalibration m = run::calibrate_host(f.repetitions);
  if (m.world_rank != 0) return 0;

  const std::string date = run::utc_now_iso8601();
  const std::string host = host_name();
  const std::string text = profile_yaml(m, date, host, f.repetitions);
  // Validate with the same loader every reader uses before anything is written.
  model::parse_system_profile(text, out_path);
  write_atomically(out_path, text);
  print_summary(m, host, f.repetitions);
  const bool is_default = f.out.empty() || out_path == model::cpu_local_profile_path();
  std::printf("wrote %s (use it with --system %s)\n", out_path.c_str(), is_default ? "cpu-local" : out_path.c_str());
  return 0;
}

Action setup_calibrate(CLI::App& app) {
  auto f = std::make_shared<CalibrateFlags>();
  app.add_option("--out", f->out, "Profile file to write (default: $XDG_CONFIG_HOME/collbench/cpu-local.yaml)");
  app.add_option("--repetitions", f->repetitions, "Repetitions per measurement; the best is kept")->default_str("10");
  app.footer(
      "See docs/model.md for what is measured and how it is used.\nExample:\n  mpiexec -n 2 collbench calibrate");
  return [f]() -> int { return run_calibration(*f); };
}

}  // namespace

CB_REGISTER_SUBCOMMAND(Subcommand{"calibrate",
                                  "Measure this host and write the cpu-local system profile (under mpiexec)", 80,
                                  &setup_calibrate, true, "no profile is written; run calibrate again"});

}  // namespace collbench::cli
