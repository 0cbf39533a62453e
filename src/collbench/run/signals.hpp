// SIGINT and SIGTERM (issue 20 item 4). A launcher forwards them to every rank (MPICH's mpiexec
// sends the signal it receives to each rank; a scheduler sends SIGTERM before SIGKILL), or a user
// sends one to a single rank. The handler only records the signal; the watchdog thread (watchdog.hpp)
// polls for it, says which signal stopped which case on which rank, and ends the job with exit 3.
// Without a watching thread (before the runner starts, after it ends, or when the watchdog is
// off) the handler itself writes one fixed line and ends the process with exit 3. Either way the
// records already written stay: each is one complete line (record/jsonl.hpp).
#pragma once

#include <string>
#include <string_view>

namespace collbench::run {

// The first SIGINT or SIGTERM this process received, or 0.
int pending_stop_signal() noexcept;

// "SIGINT", "SIGTERM", else "signal N".
std::string signal_name(int signum);

// While a thread polls pending_stop_signal() (the watchdog's), the handler leaves the stop to it.
void set_signal_watcher(bool watching) noexcept;

// What a job stopped by a signal or a dead rank leaves, said after "(exit 3): " in both messages.
// The default is run's and sweep's (kRunStopOutcome); a subcommand without --resume sets its own
// before the MPI session starts (cli/subcommand.hpp `stop_outcome`), as the signal handler's
// fallback lines are written when the session installs it.
inline constexpr const char* kRunStopOutcome =
    "every case finished before it stays in the results file, and --resume measures the rest";
void set_stop_outcome(std::string text);
[[nodiscard]] const std::string& stop_outcome();

// "rank 1 (host h1, pid 4242) received SIGTERM during case 3 (allreduce 1024 B float32)
//  iteration 12; stopping the run (exit 3): " + stop_outcome(); an empty `host` or `where` is left
//  out.
std::string signal_stop_message(int signum, int rank, const std::string& host, long pid, const std::string& where);

// Installs the SIGINT and SIGTERM handlers for its lifetime and restores the previous ones after.
class StopSignals {
 public:
  explicit StopSignals(int rank);
  StopSignals(const StopSignals&) = delete;
  StopSignals& operator=(const StopSignals&) = delete;
  ~StopSignals();

 private:
  bool installed_ = false;
};

}  // namespace collbench::run
