// `collbench calibrate`'s measurement: concurrent memcpy and a two-rank MPI ping-pong.
#include "collbench/run/host_calibration.hpp"

#include <mpi.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <thread>

#include "collbench/backend/mpi/mpi_backend.hpp"
#include "collbench/backend/mpi/mpi_check.hpp"
#include "collbench/core/error.hpp"
#include "collbench/stats/compare.hpp"

namespace collbench::run {

namespace {

constexpr std::size_t kCopyBytes = 64u << 20;  // well beyond last-level caches per rank
constexpr std::size_t kLatencyBytes = 8;
constexpr int kLatencyIters = 1000;
constexpr double kMaxMargin = 10.0;
const std::size_t kBandwidthSizes[] = {64u << 10, 1u << 20, 4u << 20, 16u << 20};

// Ranks that take no part in a measurement wait here without spinning, so on a host with fewer
// cores than ranks they do not steal the measuring ranks' cores (docs/interfaces.md section 7).
void quiet_barrier(MPI_Comm comm) {
  MPI_Request req = MPI_REQUEST_NULL;
  CB_CHECK_MPI(MPI_Ibarrier(comm, &req));
  int done = 0;
  while (done == 0) {
    CB_CHECK_MPI(MPI_Test(&req, &done, MPI_STATUS_IGNORE));
    if (done == 0) std::this_thread::sleep_for(std::chrono::microseconds(200));
  }
}

// Per-rank memcpy rate with every local rank copying at the same time, best over the
// repetitions: the rate one rank can expect while all ranks move data through the same memory
// system. The slowest rank's best is returned on every rank: every rank of a collective must make
// progress at once.
double measure_copy(MPI_Comm local, int repetitions) {
  std::vector<char> src(kCopyBytes, 1);
  std::vector<char> dst(kCopyBytes, 0);
  std::memcpy(dst.data(), src.data(), kCopyBytes);  // fault the pages in before timing
  double best_s = 1e30;
  for (int rep = 0; rep < repetitions; ++rep) {
    CB_CHECK_MPI(MPI_Barrier(local));
    const double t0 = MPI_Wtime();
    std::memcpy(dst.data(), src.data(), kCopyBytes);
    best_s = std::min(best_s, MPI_Wtime() - t0);
    src[static_cast<std::size_t>(rep) % kCopyBytes] = dst[0];  // keep the copy observable
  }
  double mine = static_cast<double>(kCopyBytes) / best_s;
  double slowest = 0.0;
  CB_CHECK_MPI(MPI_Allreduce(&mine, &slowest, 1, MPI_DOUBLE, MPI_MIN, local));
  return slowest;
}

// `n` round trips of `buf` between ranks 0 and 1 of `pair`, rank 0 sending first.
void round_trips(MPI_Comm pair, int rank, std::vector<char>& buf, int n) {
  const int count = static_cast<int>(buf.size());
  const int peer = 1 - rank;
  for (int i = 0; i < n; ++i) {
    if (rank == 0) {
      CB_CHECK_MPI(MPI_Send(buf.data(), count, MPI_BYTE, peer, 0, pair));
      CB_CHECK_MPI(MPI_Recv(buf.data(), count, MPI_BYTE, peer, 0, pair, MPI_STATUS_IGNORE));
    } else {
      CB_CHECK_MPI(MPI_Recv(buf.data(), count, MPI_BYTE, peer, 0, pair, MPI_STATUS_IGNORE));
      CB_CHECK_MPI(MPI_Send(buf.data(), count, MPI_BYTE, peer, 0, pair));
    }
  }
}

// One-way time of `bytes` between ranks 0 and 1 of `pair`: round trip / 2, best and median over
// the repetitions, as rank 0 timed them (on both ranks).
PingPongTime ping_pong(MPI_Comm pair, int rank, std::size_t bytes, int iters, int repetitions) {
  std::vector<char> buf(bytes, 0);
  round_trips(pair, rank, buf, std::max(2, iters / 10));  // warm-up: connections, page faults
  std::vector<double> one_way;
  double best = 1e30;
  for (int rep = 0; rep < repetitions; ++rep) {
    CB_CHECK_MPI(MPI_Barrier(pair));
    const double t0 = MPI_Wtime();
    round_trips(pair, rank, buf, iters);
    one_way.push_back((MPI_Wtime() - t0) / (2.0 * iters));
    best = std::min(best, one_way.back());
  }
  double times[2] = {best, stats::median(one_way)};
  CB_CHECK_MPI(MPI_Bcast(times, 2, MPI_DOUBLE, 0, pair));
  return {bytes, times[0], times[1]};
}

// Latency (8-byte messages) and bandwidth (the sizes of kBandwidthSizes) between ranks 0 and 1
// of `pair`.
PointToPoint measure_point_to_point(MPI_Comm pair, int rank, int repetitions) {
  const PingPongTime latency = ping_pong(pair, rank, kLatencyBytes, kLatencyIters, repetitions);
  std::vector<PingPongTime> bandwidth;
  for (const std::size_t bytes : kBandwidthSizes) {
    // About 64 MiB per repetition, at least 4 round trips.
    const int iters = static_cast<int>(std::max<std::size_t>(4, (64u << 20) / bytes));
    bandwidth.push_back(ping_pong(pair, rank, bytes, iters, repetitions));
  }
  return summarize_point_to_point(latency, bandwidth);
}

// The ranks sharing this rank's host, and whether rank 0 is among them.
struct HostGroup {
  backend::MpiCommHandle local;
  int local_rank = 0;
  bool with_rank0 = false;
  int rank0_local_size = 0;  // ranks on rank 0's host, on every rank
};

HostGroup host_group(int world_rank) {
  HostGroup g;
  MPI_Comm local = MPI_COMM_NULL;
  CB_CHECK_MPI(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &local));
  g.local = backend::MpiCommHandle(local);
  int host_of_rank0 = world_rank == 0 ? 1 : 0;
  int in_rank0_host = 0;
  CB_CHECK_MPI(MPI_Allreduce(&host_of_rank0, &in_rank0_host, 1, MPI_INT, MPI_MAX, local));
  g.with_rank0 = in_rank0_host != 0;
  int local_size = 0;
  CB_CHECK_MPI(MPI_Comm_rank(local, &g.local_rank));
  CB_CHECK_MPI(MPI_Comm_size(local, &local_size));
  g.rank0_local_size = local_size;
  CB_CHECK_MPI(MPI_Bcast(&g.rank0_local_size, 1, MPI_INT, 0, MPI_COMM_WORLD));
  return g;
}

// Rank 0's host measures: all its ranks copy, local ranks 0 and 1 ping-pong, the others wait.
void measure_on_rank0_host(const HostGroup& g, int repetitions, HostCalibration& out) {
  out.copy_bytes_per_s = measure_copy(g.local.get(), repetitions);
  MPI_Comm pair = MPI_COMM_NULL;
  CB_CHECK_MPI(MPI_Comm_split(g.local.get(), g.local_rank < 2 ? 0 : MPI_UNDEFINED, g.local_rank, &pair));
  if (pair != MPI_COMM_NULL) {
    const backend::MpiCommHandle pair_owner(pair);
    out.p2p = measure_point_to_point(pair, g.local_rank, repetitions);
  }
  quiet_barrier(g.local.get());
}

}  // namespace

PointToPoint summarize_point_to_point(const PingPongTime& latency, const std::vector<PingPongTime>& bandwidth) {
  PointToPoint p;
  p.latency_s = latency.best_s;
  double margin = latency.median_s / latency.best_s - 1.0;
  for (const PingPongTime& t : bandwidth) {
    const double rate = static_cast<double>(t.bytes) / t.best_s;
    if (rate > p.bandwidth_bytes_per_s) {
      p.bandwidth_bytes_per_s = rate;
      p.bandwidth_message_bytes = t.bytes;
      margin = std::max(margin, t.median_s / t.best_s - 1.0);
    }
  }
  p.margin = std::min(margin, kMaxMargin);
  return p;
}

HostCalibration calibrate_host(int repetitions) {
  int world_rank = 0;
  int world_size = 0;
  CB_CHECK_MPI(MPI_Comm_rank(MPI_COMM_WORLD, &world_rank));
  CB_CHECK_MPI(MPI_Comm_size(MPI_COMM_WORLD, &world_size));
  if (world_size < 2) {
    throw InputError("calibrate needs at least 2 MPI ranks on this host: mpiexec -n 2 collbench calibrate");
  }
  HostCalibration out;
  out.world_rank = world_rank;
  {
    const HostGroup g = host_group(world_rank);
    if (g.rank0_local_size < 2) {
      throw InputError("calibrate needs at least 2 MPI ranks on the host of rank 0 (it measures shared-memory MPI)");
    }
    out.local_ranks = g.rank0_local_size;
    if (g.with_rank0) measure_on_rank0_host(g, repetitions, out);
  }  // the host's communicator is freed before the world waits
  quiet_barrier(MPI_COMM_WORLD);
  return out;
}

}  // namespace collbench::run
