// `collbench calibrate`: measures this host (memory-copy bandwidth per rank with all ranks
// copying at once, MPI point-to-point latency and bandwidth between two local ranks; several
// repetitions, best kept) and writes the `cpu-local` system profile to the user config folder
// (docs/interfaces.md section 4), so CPU runs get bounds. Runs under mpiexec with >= 2 ranks on one
// host; CPU only. Only rank 0 writes.
#include <fmt/format.h>
#include <mpi.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "cli/subcommand.hpp"
#include "collbench/core/checked_output.hpp"
#include "collbench/core/error.hpp"
#include "collbench/core/units.hpp"
#include "collbench/model/system_profile.hpp"

namespace collbench::cli {
namespace {

constexpr std::size_t kCopyBytes = 64u << 20;  // well beyond last-level caches per rank
constexpr std::size_t kLatencyBytes = 8;
constexpr int kLatencyIters = 1000;
const std::size_t kBandwidthSizes[] = {64u << 10, 1u << 20, 4u << 20, 16u << 20};

struct CalibrateFlags {
  std::string out;
  int repetitions = 10;
};

void check_mpi(int rc, const char* call) {
  if (rc != MPI_SUCCESS) throw RuntimeFailure(fmt::format("{} failed (MPI error {})", call, rc));
}

// Ranks that take no part in a measurement wait here without spinning, so on a host with fewer
// cores than ranks they do not steal the measuring ranks' cores (docs/interfaces.md section 7).
void quiet_barrier(MPI_Comm comm) {
  MPI_Request req = MPI_REQUEST_NULL;
  check_mpi(MPI_Ibarrier(comm, &req), "MPI_Ibarrier");
  int done = 0;
  while (done == 0) {
    check_mpi(MPI_Test(&req, &done, MPI_STATUS_IGNORE), "MPI_Test");
    if (done == 0) std::this_thread::sleep_for(std::chrono::microseconds(200));
  }
}

double median(std::vector<double> v) {
  if (v.empty()) return 0.0;
  std::sort(v.begin(), v.end());
  const std::size_t mid = v.size() / 2;
  return v.size() % 2 == 1 ? v[mid] : 0.5 * (v[mid - 1] + v[mid]);
}

// Best (and median) per-rank memcpy rate with every local rank copying at the same time: the
// rate one rank can expect while all ranks move data through the same memory system.
struct CopyResult {
  double best_bytes_per_s = 0.0;
};

CopyResult measure_copy(MPI_Comm local, int repetitions) {
  std::vector<char> src(kCopyBytes, 1);
  std::vector<char> dst(kCopyBytes, 0);
  std::memcpy(dst.data(), src.data(), kCopyBytes);  // fault the pages in before timing
  double best_s = 1e30;
  for (int rep = 0; rep < repetitions; ++rep) {
    check_mpi(MPI_Barrier(local), "MPI_Barrier");
    const double t0 = MPI_Wtime();
    std::memcpy(dst.data(), src.data(), kCopyBytes);
    best_s = std::min(best_s, MPI_Wtime() - t0);
    src[static_cast<std::size_t>(rep) % kCopyBytes] = dst[0];  // keep the copy observable
  }
  double mine = static_cast<double>(kCopyBytes) / best_s;
  double slowest = 0.0;
  // The slowest rank's best: every rank of a collective must make progress at once.
  check_mpi(MPI_Allreduce(&mine, &slowest, 1, MPI_DOUBLE, MPI_MIN, local), "MPI_Allreduce");
  return {slowest};
}

// One-way time of `bytes` between ranks 0 and 1 of `pair`: round trip / 2, best and median
// over the repetitions.
struct PingPong {
  double best_s = 0.0;
  double median_s = 0.0;
};

PingPong ping_pong(MPI_Comm pair, int rank, std::size_t bytes, int iters, int repetitions) {
  std::vector<char> buf(bytes, 0);
  const int count = static_cast<int>(bytes);
  const int peer = 1 - rank;
  const auto round_trips = [&](int n) {
    for (int i = 0; i < n; ++i) {
      if (rank == 0) {
        check_mpi(MPI_Send(buf.data(), count, MPI_BYTE, peer, 0, pair), "MPI_Send");
        check_mpi(MPI_Recv(buf.data(), count, MPI_BYTE, peer, 0, pair, MPI_STATUS_IGNORE), "MPI_Recv");
      } else {
        check_mpi(MPI_Recv(buf.data(), count, MPI_BYTE, peer, 0, pair, MPI_STATUS_IGNORE), "MPI_Recv");
        check_mpi(MPI_Send(buf.data(), count, MPI_BYTE, peer, 0, pair), "MPI_Send");
      }
    }
  };
  round_trips(std::max(2, iters / 10));  // warm-up: connections, page faults
  std::vector<double> one_way;
  double best = 1e30;
  for (int rep = 0; rep < repetitions; ++rep) {
    check_mpi(MPI_Barrier(pair), "MPI_Barrier");
    const double t0 = MPI_Wtime();
    round_trips(iters);
    one_way.push_back((MPI_Wtime() - t0) / (2.0 * iters));
    best = std::min(best, one_way.back());
  }
  // Rank 0 timed the full round trips; share its numbers.
  double stats[2] = {best, median(one_way)};
  check_mpi(MPI_Bcast(stats, 2, MPI_DOUBLE, 0, pair), "MPI_Bcast");
  return {stats[0], stats[1]};
}

struct Measured {
  double copy_bytes_per_s = 0.0;
  double latency_s = 0.0;
  double bandwidth_bytes_per_s = 0.0;
  std::size_t bandwidth_message_bytes = 0;
  double margin = 0.0;
  int local_ranks = 0;
};

std::string utc_now_iso8601() {
  const std::time_t now = std::chrono::system_clock::to_time_t(std::chrono::system_clock::now());
  std::tm tm{};
  gmtime_r(&now, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

std::string host_name() {
  char buf[256] = {};
  if (gethostname(buf, sizeof buf - 1) != 0) return "unknown";
  return buf;
}

// The profile text; figures are written with their units so the file reads like the shipped ones.
std::string profile_yaml(const Measured& m, const std::string& date, const std::string& host, int repetitions) {
  const double bw_gbps = m.bandwidth_bytes_per_s / kBytesPerGB;
  const double lat_us = m.latency_s * 1e6;
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
      fmt::arg("msg", format_bytes(m.bandwidth_message_bytes)), fmt::arg("margin", m.margin));
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

int run_calibration(const CalibrateFlags& f) {
  int initialized = 0;
  MPI_Initialized(&initialized);
  if (initialized == 0) check_mpi(MPI_Init(nullptr, nullptr), "MPI_Init");  // main normally did this

  int world_rank = 0;
  int world_size = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &world_rank);
  MPI_Comm_size(MPI_COMM_WORLD, &world_size);
  if (f.repetitions < 1) throw InputError(fmt::format("--repetitions {}: must be at least 1", f.repetitions));
  if (world_size < 2) {
    throw InputError("calibrate needs at least 2 MPI ranks on this host: mpiexec -n 2 collbench calibrate");
  }
  const std::string out_path = f.out.empty() ? model::cpu_local_profile_path() : f.out;

  // The ranks sharing rank 0's host take part; ranks on other hosts only wait.
  MPI_Comm local = MPI_COMM_NULL;
  check_mpi(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &local), "MPI_Comm_split_type");
  int host_of_rank0 = world_rank == 0 ? 1 : 0;
  int in_rank0_host = 0;
  check_mpi(MPI_Allreduce(&host_of_rank0, &in_rank0_host, 1, MPI_INT, MPI_MAX, local), "MPI_Allreduce");
  int local_rank = 0;
  int local_size = 0;
  MPI_Comm_rank(local, &local_rank);
  MPI_Comm_size(local, &local_size);
  int rank0_local_size = local_size;
  check_mpi(MPI_Bcast(&rank0_local_size, 1, MPI_INT, 0, MPI_COMM_WORLD), "MPI_Bcast");
  if (rank0_local_size < 2) {
    MPI_Comm_free(&local);
    throw InputError("calibrate needs at least 2 MPI ranks on the host of rank 0 (it measures shared-memory MPI)");
  }

  Measured m;
  m.local_ranks = rank0_local_size;
  if (in_rank0_host != 0) {
    m.copy_bytes_per_s = measure_copy(local, f.repetitions).best_bytes_per_s;
    // Point-to-point between local ranks 0 and 1; the others wait quietly.
    MPI_Comm pair = MPI_COMM_NULL;
    check_mpi(MPI_Comm_split(local, local_rank < 2 ? 0 : MPI_UNDEFINED, local_rank, &pair), "MPI_Comm_split");
    if (pair != MPI_COMM_NULL) {
      const PingPong lat = ping_pong(pair, local_rank, kLatencyBytes, kLatencyIters, f.repetitions);
      m.latency_s = lat.best_s;
      double margin = lat.median_s / lat.best_s - 1.0;
      for (const std::size_t bytes : kBandwidthSizes) {
        // About 64 MiB per repetition, at least 4 round trips.
        const int iters = static_cast<int>(std::max<std::size_t>(4, (64u << 20) / bytes));
        const PingPong pp = ping_pong(pair, local_rank, bytes, iters, f.repetitions);
        const double rate = static_cast<double>(bytes) / pp.best_s;
        if (rate > m.bandwidth_bytes_per_s) {
          m.bandwidth_bytes_per_s = rate;
          m.bandwidth_message_bytes = bytes;
          margin = std::max(margin, pp.median_s / pp.best_s - 1.0);
        }
      }
      m.margin = std::min(margin, 10.0);
      MPI_Comm_free(&pair);
    }
    quiet_barrier(local);
  }
  MPI_Comm_free(&local);
  quiet_barrier(MPI_COMM_WORLD);
  if (world_rank != 0) return 0;

  const std::string date = utc_now_iso8601();
  const std::string host = host_name();
  const std::string text = profile_yaml(m, date, host, f.repetitions);
  // Validate with the same loader every reader uses before anything is written.
  model::parse_system_profile(text, out_path);
  write_atomically(out_path, text);
  std::printf("collbench calibrate: host %s, %d local ranks, %d repetitions (best kept)\n", host.c_str(), m.local_ranks,
              f.repetitions);
  std::printf("  memory copy   %10.3f GB/s per rank (all ranks copying 64 MiB at once)\n", m.copy_bytes_per_s / 1e9);
  std::printf("  p2p latency   %10.3f us one-way (8 B ping-pong)\n", m.latency_s * 1e6);
  std::printf("  p2p bandwidth %10.3f GB/s per direction (best at %s)\n", m.bandwidth_bytes_per_s / 1e9,
              format_bytes(m.bandwidth_message_bytes).c_str());
  std::printf("  margin        %10.4f (best vs median repetition)\n", m.margin);
  const bool is_default = f.out.empty() || out_path == model::cpu_local_profile_path();
  std::printf("wrote %s (use it with --system %s)\n", out_path.c_str(), is_default ? "cpu-local" : out_path.c_str());
  return 0;
}

Action setup(CLI::App& app) {
  auto f = std::make_shared<CalibrateFlags>();
  app.add_option("--out", f->out, "Profile file to write (default: $XDG_CONFIG_HOME/collbench/cpu-local.yaml)");
  app.add_option("--repetitions", f->repetitions, "Repetitions per measurement; the best is kept")->default_str("10");
  app.footer(
      "See docs/model.md for what is measured and how it is used.\nExample:\n  mpiexec -n 2 collbench calibrate");
  return [f]() -> int { return run_calibration(*f); };
}

}  // namespace

CB_REGISTER_SUBCOMMAND(Subcommand{
    "calibrate", "Measure this host and write the cpu-local system profile (under mpiexec)", 80, &setup, true});

}  // namespace collbench::cli
