// The watchdog (issue 7): bounds every collective and barrier by a timeout. Each rank publishes
// where it is (case, stage, iteration, phase) with relaxed atomic stores; a thread per rank
// watches. When rank 0's deadline passes, its thread asks every rank where it is over a private
// communicator that the stuck collective does not use, names the case, the iteration and the
// ranks that did not arrive (or did not answer at all), and aborts the job with exit code 3
// (docs/interfaces.md section 4). Should rank 0 itself be gone, one backup reports a few seconds
// later instead (deadline_reporters: the next rank on rank 0's host, then the first of each other
// host). The same thread stops the run on SIGINT or SIGTERM (signals.hpp)
// and when a rank on this node has died (its process is gone), naming the signal or the rank
// (issue 20 item 4, docs/errors.md "Run-time faults"). Needs MPI_THREAD_MULTIPLE; without it the
// watchdog is off and says so.
#pragma once

#include <mpi.h>

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "collbench/backend/mpi/mpi_backend.hpp"

namespace collbench::run {

enum class Phase : int {
  idle = 0,     // between cases
  host = 1,     // host-side work of a case (allocation, fill, verification compare)
  waiting = 2,  // inside a barrier or collective: waiting for the others is expected here
  fault = 3,    // an injected hang
  delay = 4,    // an injected delay, before entering the collective
};

// Which part of a case: the iteration counts within its stage.
enum class Stage : int {
  setup = 0,         // allocation and fill, before verification
  verification = 1,  // the verified launch and the count of wrong elements
  warmup = 2,        // warm-up iterations
  timed = 3,         // timed iterations (and the side operations after them)
};

// Where one rank is, as another rank learns it.
struct RankPosition {
  int rank = 0;
  bool answered = false;
  int case_index = -1;
  int iteration = -1;
  Phase phase = Phase::idle;
  double seconds_in_phase = 0.0;
  Stage stage = Stage::timed;  // with iteration -1: setup
};

// "setup", "verification", "warm-up iteration 2", "iteration 7"
std::string stage_text(Stage stage, int iteration);

// The case index a rank publishes during the run's start (before its first case), with the step
// (RunStartStep) as the iteration and its text as the case label. Each step is bounded by
// --timeout, but never by less than kRunStartMinTimeout_s: a start can be slow for good reasons
// (CUDA contexts, NCCL loaded from a shared file system, --resume reading a large file), and an
// input error found by one rank must reach its own exit (2) first (main.cpp, 10 s).
inline constexpr int kRunStart = -2;
inline constexpr double kRunStartMinTimeout_s = 60.0;
enum class RunStartStep : int { options = 0, memory = 1, results_file = 2, backends = 3 };
std::string_view run_start_step_text(int step);  // "checking sizes against memory"; "?" out of range

// "case 3 (allreduce 1024 B float32) warm-up iteration 2", "during the run's start (starting the
// backends)" (kRunStart), or "between cases" (case_index < 0).
std::string where_text(int case_index, const std::string& case_label, Stage stage, int iteration);

// Pure: which ranks did not arrive. The front is the furthest (case, stage, iteration) any rank has
// reached; a rank that is behind it, or at it but not waiting inside the collective, has not
// arrived. Ranks that did not answer are listed separately by the caller.
std::vector<int> ranks_not_arrived(const std::vector<RankPosition>& positions);

// "case 2 (allreduce 4096 B) iteration 3 exceeded the 5 s timeout; ranks that did not arrive:
//  1 (host h1: injected hang, 6.1 s); no answer from: none". For kRunStart: "the run's start
// (starting the backends) exceeded ...", where the ranks still in the step's own work cannot be
// told from those waiting for them in its collectives: they are listed together as "still
// starting", apart from an injected hang."
std::string watchdog_message(const std::vector<RankPosition>& positions, int case_index, const std::string& case_label,
                             double timeout_s, const std::vector<std::string>& hosts);

// "rank 1 (host h1, pid 4242) died (its process is gone) during case 3 (...) iteration 5; the
//  run cannot go on without it (exit 3): ..."
std::string dead_rank_message(int dead_rank, const std::string& host, long pid, const std::string& where);

// Who reports a passed deadline, in turn (host_of: a host number per rank; empty: one host). Rank
// 0 first. A backup must be alive where rank 0 is not, and only one should speak: next the next
// rank on rank 0's host (rank 0 frozen), then the first rank of every other host in host order
// (rank 0's node lost), then every other rank in rank order. Pure.
std::vector<int> deadline_reporters(const std::vector<int>& host_of, int size);

// Seconds after a passed deadline at which `rank` reports it: step_s x its place in
// deadline_reporters, so that the one before has reported and aborted the job by then.
double deadline_report_delay_s(int rank, const std::vector<int>& host_of, int size, double step_s);

class Watchdog {
 public:
  // Collective: duplicates MPI_COMM_WORLD for its own traffic and starts the thread.
  explicit Watchdog(std::vector<std::string> hosts);
  Watchdog(const Watchdog&) = delete;
  Watchdog& operator=(const Watchdog&) = delete;
  ~Watchdog();

  [[nodiscard]] bool enabled() const { return enabled_; }

  // Hot path: where this rank is now, and until when the current step may take. A negative
  // iteration of the timed stage is the case's setup.
  void at(int case_index, int iteration, Phase phase, double timeout_s, Stage stage = Stage::timed);
  void set_case_label(std::string label);
  // A step of the run's start (kRunStart), bounded by max(timeout_s, kRunStartMinTimeout_s).
  void at_run_start(RunStartStep step, double timeout_s);
  // An injected hang where this rank is (COLLBENCH_FAULT hang ... start=1): published as such.
  [[noreturn]] void hang_here();

 private:
  void loop();
  void answer_queries();
  void check_deadline();
  void check_signal();
  [[noreturn]] void stop_on_pending_signal();
  void check_local_ranks();
  void find_local_ranks();
  [[nodiscard]] std::vector<RankPosition> ask_every_rank();
  [[nodiscard]] std::string where() const;
  [[nodiscard]] double report_delay_s() const;
  [[noreturn]] void fire();
  [[noreturn]] void stop(const std::string& message, double grace_s);  // message: the whole line
  [[nodiscard]] RankPosition self_position() const;

  bool enabled_ = false;
  int rank_ = 0;
  int size_ = 1;
  std::vector<std::string> hosts_;
  std::vector<long> pids_;         // per rank
  double deadline_delay_s_ = 0.0;  // deadline_report_delay_s of this rank
  std::vector<int> local_ranks_;   // other ranks of this node, in this pid namespace
  double signal_seen_ = 0.0;       // when the watching thread first saw a stop signal
  int dead_rank_ = -1;             // a local rank whose process is gone
  double dead_seen_ = 0.0;
  backend::MpiCommHandle comm_;
  std::atomic<int> case_{-1};
  std::atomic<int> iteration_{-1};
  std::atomic<int> phase_{0};
  std::atomic<int> stage_{0};
  std::atomic<double> phase_since_{0.0};
  std::atomic<double> deadline_{0.0};  // MPI_Wtime seconds; 0 = none
  std::atomic<double> timeout_s_{0.0};
  mutable std::mutex label_mutex_;
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
