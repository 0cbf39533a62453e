// `collbench calibrate`'s measurement (docs/model.md, "What the bound means on CPU"): memory-copy
// bandwidth per rank with every rank of rank 0's host copying at once, and MPI point-to-point
// latency and bandwidth between two ranks of that host; several repetitions, best kept. The CLI
// (src/cli/cmd_calibrate.cpp) parses the flags and writes the cpu-local profile from the result.
#pragma once

#include <cstddef>
#include <vector>

namespace collbench::run {

// One ping-pong message size: the one-way time (round trip / 2), best and median over the
// repetitions.
struct PingPongTime {
  std::size_t bytes = 0;
  double best_s = 0.0;
  double median_s = 0.0;
};

// The point-to-point figures of the profile.
struct PointToPoint {
  double latency_s = 0.0;              // best one-way time of the small (latency) message
  double bandwidth_bytes_per_s = 0.0;  // best bytes / best_s over the bandwidth sizes
  std::size_t bandwidth_message_bytes = 0;
  double margin = 0.0;  // best vs median repetition: how far a run may beat a bound
};

// Pure: the latency message's best time; the highest rate over `bandwidth` (the first size of
// equal rates wins); the margin, median/best - 1 of the latency message and of every size that
// raised the best rate so far (the largest of them), capped at 10.
PointToPoint summarize_point_to_point(const PingPongTime& latency, const std::vector<PingPongTime>& bandwidth);

struct HostCalibration {
  double copy_bytes_per_s = 0.0;  // per rank, every rank of rank 0's host copying at once
  PointToPoint p2p;
  int local_ranks = 0;  // ranks on rank 0's host: the ranks that took part
  int world_rank = 0;   // this rank in MPI_COMM_WORLD: only rank 0's result is complete
};

// Measures, collectively over MPI_COMM_WORLD (MPI initialised, as main does for `calibrate`):
// the ranks on rank 0's host measure, local ranks 0 and 1 ping-pong, the others (and the ranks on
// other hosts) wait without spinning. The result is complete on world rank 0. An MPI failure
// throws RuntimeFailure (CB_CHECK_MPI); fewer than 2 ranks in all, or on rank 0's host, InputError.
HostCalibration calibrate_host(int repetitions);

}  // namespace collbench::run
