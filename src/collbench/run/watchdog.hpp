// The watchdog (issue 7): bounds every collective and barrier by a timeout. Each rank publishes
// where it is (case, iteration, phase) with two relaxed atomic stores; a thread per rank
// watches. When rank 0's deadline passes, its thread asks every rank where it is over a
// private communicator that the stuck collective does not use, names the case, the iteration
// and the ranks that did not arrive (or did not answer at all), and aborts the job with exit
// code 3 (docs/interfaces.md section 4). Needs MPI_THREAD_MULTIPLE; without it the watchdog is off
// and says so.
#pragma once

#include <mpi.h>

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "collbench/backend/mpi/mpi_backend.hpp"

namespace collbench::run {

enum class Phase : int {
  idle = 0,     // between cases
  host = 1,     // host-side work of a case (allocation, fill, verification compare)
  waiting = 2,  // inside a barrier or collective: waiting for the others is expected here
  fault = 3,    // an injected hang
};

// Where one rank is, as another rank learns it.
struct RankPosition {
  int rank = 0;
  bool answered = false;
  int case_index = -1;
  int iteration = -1;
  Phase phase = Phase::idle;
  double seconds_in_phase = 0.0;
};

// Pure: which ranks did not arrive. The front is the furthest (case, iteration) any rank has
// reached; a rank that is behind it, or at it but not waiting inside the collective, has not
// arrived. Ranks that did not answer are listed separately by the caller.
std::vector<int> ranks_not_arrived(const std::vector<RankPosition>& positions);

// "case 2 (allreduce 4096 B) iteration 3 exceeded the 5 s timeout; ranks that did not arrive:
//  1 (host h1: injected hang, 6.1 s); no answer from: none"
std::string watchdog_message(const std::vector<RankPosition>& positions, int case_index, const std::string& case_label,
                             double timeout_s, const std::vector<std::string>& hosts);

class Watchdog {
 public:
  // Collective: duplicates MPI_COMM_WORLD for its own traffic and starts the thread.
  explicit Watchdog(std::vector<std::string> hosts);
  Watchdog(const Watchdog&) = delete;
  Watchdog& operator=(const Watchdog&) = delete;
  ~Watchdog();

  [[nodiscard]] bool enabled() const { return enabled_; }

  // Hot path: where this rank is now, and until when the current step may take.
  void at(int case_index, int iteration, Phase phase, double timeout_s);
  void set_case_label(std::string label);

 private:
  void loop();
  void answer_queries();
  [[noreturn]] void fire();
  [[nodiscard]] RankPosition self_position() const;

  bool enabled_ = false;
  int rank_ = 0;
  int size_ = 1;
  std::vector<std::string> hosts_;
  backend::MpiCommHandle comm_;
  std::atomic<int> case_{-1};
  std::atomic<int> iteration_{-1};
  std::atomic<int> phase_{0};
  std::atomic<double> phase_since_{0.0};
  std::atomic<double> deadline_{0.0};  // MPI_Wtime seconds; 0 = none
  std::atomic<double> timeout_s_{0.0};
  std::mutex label_mutex_;
  std::string case_label_;
  MPI_Request query_ = MPI_REQUEST_NULL;
  int query_buf_ = 0;
  std::mutex stop_mutex_;
  std::condition_variable stop_cv_;
  bool stop_ = false;
  std::thread thread_;
};

// Default per-case timeout: generous, and growing with the bytes moved (5 minutes plus one
// second per 100 MB per rank), so a healthy 8 GiB case on a slow fabric is never cut.
double default_timeout_s(std::uint64_t bytes);

}  // namespace collbench::run
