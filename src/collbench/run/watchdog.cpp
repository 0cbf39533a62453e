// Watchdog thread and its reports: a timeout, a stop signal, a rank that died.
#include "collbench/run/watchdog.hpp"

#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <thread>
#include <tuple>
#include <unordered_map>

#include "collbench/backend/mpi/simulation.hpp"
#include "collbench/backend/policy.hpp"
#include "collbench/run/session.hpp"
#include "collbench/run/signals.hpp"

namespace collbench::run {
namespace {

constexpr int kQueryTag = 7401;
constexpr int kReplyTag = 7402;
constexpr int kReplySize = 5;  // case, iteration, phase, seconds in phase, stage
constexpr double kAnswerWait_s = 3.0;
constexpr auto kPollPeriod = std::chrono::milliseconds(100);
// The step between the backups that report a passed deadline when rank 0 does not
// (deadline_report_delay_s): the one before has reported and aborted by then (kAnswerWait_s plus
// abort_job's second, with room to spare).
constexpr double kBackupDelay_s = 6.0;
// Stop signals and dead ranks: rank 0 reports at once and aborts the job kStopGrace_s later; the
// other ranks report only after kReportDelay_s, so that a signal sent to every rank (mpiexec
// forwards it) is reported once, and a stop still ends within a second.
constexpr double kStopGrace_s = 0.25;  // abort_job's wait for the message to pass the launcher
constexpr double kReportDelay_s = 0.45;

std::string_view phase_text(Phase p) {
  switch (p) {
    case Phase::idle:
      return "between cases";
    case Phase::host:
      return "host work of the case";
    case Phase::waiting:
      return "waiting inside the collective";
    case Phase::fault:
      return "injected hang";
    case Phase::delay:
      return "injected delay before entering the collective";
  }
  return "?";
}

// The pid namespace of this process: pids compare only within one.
long pid_namespace() {
  struct stat st {};
  return ::stat("/proc/self/ns/pid", &st) == 0 ? static_cast<long>(st.st_ino) : -1;
}

std::tuple<int, int, int> progress_key(const RankPosition& p) {
  return {p.case_index, static_cast<int>(p.stage), p.iteration};
}

// Hosts numbered in order of first appearance, per rank.
std::vector<int> host_numbers(const std::vector<std::string>& hosts) {
  std::vector<int> out;
  std::unordered_map<std::string, int> seen;
  for (const auto& h : hosts) out.push_back(seen.emplace(h, static_cast<int>(seen.size())).first->second);
  return out;
}

// "0-3, 5, 7-8": ascending ranks as ranges.
std::string rank_ranges(const std::vector<int>& ranks) {
  std::string out;
  for (std::size_t i = 0; i < ranks.size();) {
    std::size_t j = i;
    while (j + 1 < ranks.size() && ranks[j + 1] == ranks[j] + 1) ++j;
    out += fmt::format("{}{}", out.empty() ? "" : ", ", ranks[i]);
    if (j > i) out += fmt::format("-{}", ranks[j]);
    i = j + 1;
  }
  return out;
}

// The watchdog's line for a timeout during the run's start (watchdog_message, kRunStart). The
// furthest step any rank reached names it; a rank at an earlier step (or in an injected hang) did
// not arrive; those at the furthest step are listed together, as one held in that step's own work
// looks like those waiting for it in the step's collective. Ranks past the start are left out.
std::string run_start_message(const std::vector<RankPosition>& positions, double timeout_s,
                              const std::function<std::string(int)>& host_of, const std::string& silent) {
  int front = -1;
  for (const auto& p : positions) {
    if (p.answered && p.case_index == kRunStart) front = std::max(front, p.iteration);
  }
  std::string late;
  std::vector<int> starting;
  for (const auto& p : positions) {
    if (!p.answered || p.case_index != kRunStart) continue;
    if (p.phase == Phase::fault || p.phase == Phase::delay || p.iteration < front) {
      late += fmt::format("{}{} (host {}: {}, {}, {:.1f} s)", late.empty() ? "" : "; ", p.rank, host_of(p.rank),
                          p.phase == Phase::host ? std::string_view("host work") : phase_text(p.phase),
                          run_start_step_text(p.iteration), p.seconds_in_phase);
    } else {
      starting.push_back(p.rank);
    }
  }
  return fmt::format(
      "watchdog: the run's start ({}) exceeded the {:.3g} s timeout; ranks that did not arrive: {}; still starting: {} "
      "(a rank held in a GPU, NVML or library call looks like those waiting for it); no answer from: {}",
      run_start_step_text(front), timeout_s, late.empty() ? "none told apart" : late,
      starting.empty() ? "none" : rank_ranges(starting), silent.empty() ? "none" : silent);
}

}  // namespace

double default_timeout_s(std::uint64_t bytes) {
  return 300.0 + static_cast<double>(bytes) / 1e8;
}

std::string stage_text(Stage stage, int iteration) {
  switch (stage) {
    case Stage::setup:
      return "setup";
    case Stage::verification:
      return "verification";
    case Stage::warmup:
      return fmt::format("warm-up iteration {}", iteration);
    case Stage::timed:
      return iteration < 0 ? std::string("setup") : fmt::format("iteration {}", iteration);
  }
  return "?";
}

std::string where_text(int case_index, const std::string& case_label, Stage stage, int iteration) {
  if (case_index == kRunStart) return fmt::format("during the run's start ({})", case_label);
  if (case_index < 0) return "between cases";
  return fmt::format("during case {} ({}) {}", case_index, case_label, stage_text(stage, iteration));
}

std::vector<int> ranks_not_arrived(const std::vector<RankPosition>& positions) {
  std::tuple<int, int, int> front{-1, -1, -1};
  for (const auto& p : positions) {
    if (p.answered) front = std::max(front, progress_key(p));
  }
  std::vector<int> out;
  for (const auto& p : positions) {
    if (!p.answered) continue;
    const bool behind = progress_key(p) < front;
    if (behind || p.phase != Phase::waiting) out.push_back(p.rank);
  }
  return out;
}

std::string watchdog_message(const std::vector<RankPosition>& positions, int case_index, const std::string& case_label,
                             double timeout_s, const std::vector<std::string>& hosts) {
  const auto host_of = [&hosts](int r) {
    return r >= 0 && static_cast<std::size_t>(r) < hosts.size() ? hosts[static_cast<std::size_t>(r)] : std::string("?");
  };
  std::string silent;
  for (const auto& p : positions) {
    if (!p.answered) silent += fmt::format("{}{} (host {})", silent.empty() ? "" : ", ", p.rank, host_of(p.rank));
  }
  if (case_index == kRunStart) return run_start_message(positions, timeout_s, host_of, silent);
  // The furthest point of the case any rank reached.
  std::tuple<int, int, int> front{-1, -1, -1};
  for (const auto& p : positions) {
    if (p.answered && p.case_index == case_index) front = std::max(front, progress_key(p));
  }
  std::string late;
  for (int r : ranks_not_arrived(positions)) {
    const auto& p = positions[static_cast<std::size_t>(r)];
    const std::string at = p.case_index == kRunStart
                               ? std::string("the run's start")
                               : fmt::format("case {} {}", p.case_index, stage_text(p.stage, p.iteration));
    late += fmt::format("{}{} (host {}: {}, {}, {:.1f} s)", late.empty() ? "" : "; ", r, host_of(r),
                        phase_text(p.phase), at, p.seconds_in_phase);
  }
  const auto stage = static_cast<Stage>(std::get<1>(front) < 0 ? 0 : std::get<1>(front));
  return fmt::format(
      "watchdog: case {} ({}) {} exceeded the {:.3g} s timeout; ranks that did not arrive: {}; no answer from: {}",
      case_index, case_label, stage_text(stage, std::get<2>(front)), timeout_s, late.empty() ? "none" : late,
      silent.empty() ? "none" : silent);
}

std::vector<int> deadline_reporters(const std::vector<int>& host_of, int size) {
  const auto host = [&](int r) {
    const auto i = static_cast<std::size_t>(r);
    return i < host_of.size() ? host_of[i] : 0;
  };
  std::vector<int> order{0};
  std::vector<bool> placed(static_cast<std::size_t>(std::max(size, 1)), false);
  placed[0] = true;
  const auto place = [&](int r) {
    if (placed[static_cast<std::size_t>(r)]) return;
    placed[static_cast<std::size_t>(r)] = true;
    order.push_back(r);
  };
  for (int r = 1; r < size; ++r) {  // the next rank on rank 0's host
    if (host(r) == host(0)) {
      place(r);
      break;
    }
  }
  std::vector<int> hosts_seen{host(0)};
  for (int r = 1; r < size; ++r) {  // the first rank of every other host, in host order
    if (std::find(hosts_seen.begin(), hosts_seen.end(), host(r)) != hosts_seen.end()) continue;
    hosts_seen.push_back(host(r));
    place(r);
  }
  for (int r = 1; r < size; ++r) place(r);
  return order;
}

double deadline_report_delay_s(int rank, const std::vector<int>& host_of, int size, double step_s) {
  const std::vector<int> order = deadline_reporters(host_of, size);
  const auto at = std::find(order.begin(), order.end(), rank);
  return at == order.end() ? 0.0 : step_s * static_cast<double>(at - order.begin());
}

std::string dead_rank_message(int dead_rank, const std::string& host, long pid, const std::string& where) {
  return fmt::format(
      "rank {} (host {}, pid {}) died (its process is gone) {}; the run cannot go on without it (exit 3): {}",
      dead_rank, host, pid, where, stop_outcome());
}

Watchdog::Watchdog(std::vector<std::string> hosts) : hosts_(std::move(hosts)) {
  int provided = 0;
  MPI_Query_thread(&provided);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank_);
  MPI_Comm_size(MPI_COMM_WORLD, &size_);
  if (backend::sim::active()) {  // the reason is recorded in the run header's `simulated.watchdog`
    if (rank_ == 0)
      std::fprintf(stderr, "collbench: note: simulation: the watchdog is off (%s)\n",
                   backend::sim::info()->watchdog.c_str());
    return;
  }
  enabled_ = provided == MPI_THREAD_MULTIPLE;
  if (!enabled_) {
    if (rank_ == 0) std::fprintf(stderr, "collbench: warning: MPI gives no MPI_THREAD_MULTIPLE: the watchdog is off\n");
    return;
  }
  deadline_delay_s_ = deadline_report_delay_s(rank_, host_numbers(hosts_), size_, kBackupDelay_s);
  MPI_Comm dup = MPI_COMM_NULL;
  MPI_Comm_dup(MPI_COMM_WORLD, &dup);
  // A peer that is gone (its node lost, the launcher not killing the job) must read as "no
  // answer", not end this rank with MPI's fatal error before the report.
  MPI_Comm_set_errhandler(dup, MPI_ERRORS_RETURN);
  comm_ = backend::MpiCommHandle(dup);
  find_local_ranks();
  MPI_Irecv(&query_buf_, 1, MPI_INT, MPI_ANY_SOURCE, kQueryTag, dup, &query_);
  thread_ = std::thread([this] { loop(); });
  set_signal_watcher(true);
}

// Every rank's pid, and the other ranks of this node whose pids this process can see.
void Watchdog::find_local_ranks() {
  const long mine[2] = {static_cast<long>(::getpid()), pid_namespace()};
  std::vector<long> all(static_cast<std::size_t>(size_) * 2);
  MPI_Allgather(mine, 2, MPI_LONG, all.data(), 2, MPI_LONG, comm_.get());
  MPI_Comm node = MPI_COMM_NULL;
  MPI_Comm_split_type(comm_.get(), MPI_COMM_TYPE_SHARED, rank_, MPI_INFO_NULL, &node);
  const backend::MpiCommHandle node_owner(node);
  int node_size = 1;
  MPI_Comm_size(node, &node_size);
  std::vector<int> node_ranks(static_cast<std::size_t>(node_size));
  MPI_Allgather(&rank_, 1, MPI_INT, node_ranks.data(), 1, MPI_INT, node);
  for (int r = 0; r < size_; ++r) pids_.push_back(all[static_cast<std::size_t>(r) * 2]);
  for (const int r : node_ranks) {
    if (r != rank_ && mine[1] >= 0 && all[static_cast<std::size_t>(r) * 2 + 1] == mine[1]) local_ranks_.push_back(r);
  }
}

Watchdog::~Watchdog() {
  if (!enabled_) return;
  {
    std::lock_guard<std::mutex> lock(stop_mutex_);
    stop_ = true;
  }
  stop_cv_.notify_all();
  thread_.join();
  if (query_ != MPI_REQUEST_NULL) {
    MPI_Cancel(&query_);
    MPI_Wait(&query_, MPI_STATUS_IGNORE);
  }
  set_signal_watcher(false);  // from here on the handler ends the process itself
  // No barrier here: this destructor also runs while an exception unwinds on one rank only.
  if (pending_stop_signal() != 0) stop_on_pending_signal();
}

// A stop signal that arrived before the thread reported it (rank 0 at most one poll before the
// end, the other ranks within their report delay): reported and the job aborted from here, as
// the thread would have, instead of this rank alone leaving with _exit, whose exit code the
// launcher may replace with the signal it then kills the other ranks with (Hydra: 9; issue 37
// item 5). The other ranks' delay is kept, so that rank 0 speaks first for a signal to every rank.
void Watchdog::stop_on_pending_signal() {
  const int sig = pending_stop_signal();
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (finalized != 0) {  // no job left to abort: the handler ends this process
    ::raise(sig);
    std::_Exit(3);
  }
  const double seen = signal_seen_ > 0.0 ? signal_seen_ : MPI_Wtime();
  const double wait_s = seen + report_delay_s() - MPI_Wtime();
  if (wait_s > 0.0) std::this_thread::sleep_for(std::chrono::duration<double>(wait_s));
  const auto r = static_cast<std::size_t>(rank_);
  stop(signal_stop_message(sig, rank_, r < hosts_.size() ? hosts_[r] : std::string("?"), pids_[r], where()),
       kStopGrace_s);
}

void Watchdog::at(int case_index, int iteration, Phase phase, double timeout_s, Stage stage) {
  const double now = MPI_Wtime();
  if (stage == Stage::timed && iteration < 0) stage = Stage::setup;
  case_.store(case_index, std::memory_order_relaxed);
  iteration_.store(iteration, std::memory_order_relaxed);
  stage_.store(static_cast<int>(stage), std::memory_order_relaxed);
  if (phase_.exchange(static_cast<int>(phase), std::memory_order_relaxed) != static_cast<int>(phase) ||
      phase != Phase::waiting) {
    phase_since_.store(now, std::memory_order_relaxed);
  }
  timeout_s_.store(timeout_s, std::memory_order_relaxed);
  deadline_.store(timeout_s > 0 ? now + timeout_s : 0.0, std::memory_order_relaxed);
}

void Watchdog::set_case_label(std::string label) {
  std::lock_guard<std::mutex> lock(label_mutex_);
  case_label_ = std::move(label);
}

std::string_view run_start_step_text(int step) {
  static constexpr std::array<std::string_view, 4> kSteps{"checking the options", "checking sizes against memory",
                                                          "opening the results file", "starting the backends"};
  return step >= 0 && static_cast<std::size_t>(step) < kSteps.size() ? kSteps[static_cast<std::size_t>(step)] : "?";
}

void Watchdog::at_run_start(RunStartStep step, double timeout_s) {
  const int n = static_cast<int>(step);
  set_case_label(std::string(run_start_step_text(n)));
  at(kRunStart, n, Phase::host, std::max(timeout_s, kRunStartMinTimeout_s), Stage::setup);
}

void Watchdog::hang_here() {
  const RankPosition p = self_position();
  at(p.case_index, p.iteration, Phase::fault, timeout_s_.load(), p.stage);
  std::fprintf(stderr, "collbench: injected hang on rank %d %s\n", rank_, where().c_str());
  std::fflush(stderr);
  for (;;) std::this_thread::sleep_for(std::chrono::seconds(1));
}

RankPosition Watchdog::self_position() const {
  RankPosition p;
  p.rank = rank_;
  p.answered = true;
  p.case_index = case_.load(std::memory_order_relaxed);
  p.iteration = iteration_.load(std::memory_order_relaxed);
  p.phase = static_cast<Phase>(phase_.load(std::memory_order_relaxed));
  p.stage = static_cast<Stage>(stage_.load(std::memory_order_relaxed));
  p.seconds_in_phase = MPI_Wtime() - phase_since_.load(std::memory_order_relaxed);
  return p;
}

std::string Watchdog::where() const {
  const RankPosition p = self_position();
  std::string label;
  {
    std::lock_guard<std::mutex> guard(label_mutex_);
    label = case_label_;
  }
  return where_text(p.case_index, label, p.stage, p.iteration);
}

// Every query that has arrived (several ranks may ask at once), each answered with where this
// rank is. Also called while this rank asks the others itself, so that two reporters hear each other.
void Watchdog::answer_queries() {
  for (;;) {
    int arrived = 0;
    MPI_Status status{};
    if (query_ == MPI_REQUEST_NULL || MPI_Test(&query_, &arrived, &status) != MPI_SUCCESS || arrived == 0) return;
    const RankPosition p = self_position();
    const double reply[kReplySize] = {static_cast<double>(p.case_index), static_cast<double>(p.iteration),
                                      static_cast<double>(static_cast<int>(p.phase)), p.seconds_in_phase,
                                      static_cast<double>(static_cast<int>(p.stage))};
    MPI_Request sent = MPI_REQUEST_NULL;  // the asker posted its receive first: this completes
    MPI_Isend(reply, kReplySize, MPI_DOUBLE, status.MPI_SOURCE, kReplyTag, comm_.get(), &sent);
    MPI_Wait(&sent, MPI_STATUS_IGNORE);
    MPI_Irecv(&query_buf_, 1, MPI_INT, MPI_ANY_SOURCE, kQueryTag, comm_.get(), &query_);
  }
}

double Watchdog::report_delay_s() const {
  return rank_ == 0 ? 0.0 : kReportDelay_s;
}

void Watchdog::loop() {
  std::unique_lock<std::mutex> lock(stop_mutex_);
  while (!stop_cv_.wait_for(lock, kPollPeriod, [this] { return stop_; })) {
    answer_queries();
    check_signal();
    check_local_ranks();
    check_deadline();
  }
}

void Watchdog::check_deadline() {
  const double deadline = deadline_.load(std::memory_order_relaxed);
  if (deadline <= 0) return;
  if (MPI_Wtime() > deadline + deadline_delay_s_) fire();
}

void Watchdog::check_signal() {
  const int sig = pending_stop_signal();
  if (sig == 0) return;
  const double now = MPI_Wtime();
  if (signal_seen_ == 0.0) signal_seen_ = now;
  if (now - signal_seen_ < report_delay_s()) return;
  const auto r = static_cast<std::size_t>(rank_);
  stop(signal_stop_message(sig, rank_, r < hosts_.size() ? hosts_[r] : std::string("?"), pids_[r], where()),
       kStopGrace_s);
}

// A rank of this node whose process is gone ends the run. It must stay gone for a poll while
// this rank is inside a case: at the end of a run a faster rank may exit first.
void Watchdog::check_local_ranks() {
  int dead = -1;
  for (const int r : local_ranks_) {
    if (::kill(static_cast<pid_t>(pids_[static_cast<std::size_t>(r)]), 0) != 0 && errno == ESRCH) {
      dead = r;
      break;
    }
  }
  const double now = MPI_Wtime();
  if (dead < 0 || static_cast<Phase>(phase_.load(std::memory_order_relaxed)) == Phase::idle) {
    dead_rank_ = -1;
    return;
  }
  if (dead != dead_rank_) {
    dead_rank_ = dead;
    dead_seen_ = now;
    return;
  }
  if (now - dead_seen_ < std::max(report_delay_s(), 0.09)) return;
  const auto d = static_cast<std::size_t>(dead);
  stop(dead_rank_message(dead, d < hosts_.size() ? hosts_[d] : std::string("?"), pids_[d], where()), kStopGrace_s);
}

// Asks every other rank where it is; a rank that cannot answer within a few seconds is unreachable.
std::vector<RankPosition> Watchdog::ask_every_rank() {
  std::vector<RankPosition> positions(static_cast<std::size_t>(size_));
  std::vector<std::array<double, kReplySize>> replies(static_cast<std::size_t>(size_));
  std::vector<MPI_Request> recvs(static_cast<std::size_t>(size_), MPI_REQUEST_NULL);
  std::vector<MPI_Request> sends(static_cast<std::size_t>(size_), MPI_REQUEST_NULL);
  int query = 1;
  for (int r = 0; r < size_; ++r) {
    const auto i = static_cast<std::size_t>(r);
    positions[i].rank = r;
    if (r == rank_) continue;
    MPI_Irecv(replies[i].data(), kReplySize, MPI_DOUBLE, r, kReplyTag, comm_.get(), &recvs[i]);
    MPI_Isend(&query, 1, MPI_INT, r, kQueryTag, comm_.get(), &sends[i]);
  }
  positions[static_cast<std::size_t>(rank_)] = self_position();
  const double give_up = MPI_Wtime() + kAnswerWait_s;
  std::vector<bool> lost(static_cast<std::size_t>(size_), false);  // the request failed: a peer gone
  for (bool all = false; !all && MPI_Wtime() < give_up;) {
    all = true;
    answer_queries();  // another rank asking at the same time hears from this one
    for (int r = 0; r < size_; ++r) {
      auto& p = positions[static_cast<std::size_t>(r)];
      if (p.answered || lost[static_cast<std::size_t>(r)]) continue;
      int done = 0;
      if (MPI_Test(&recvs[static_cast<std::size_t>(r)], &done, MPI_STATUS_IGNORE) != MPI_SUCCESS) {
        lost[static_cast<std::size_t>(r)] = true;
        continue;
      }
      all = all && done != 0;
      if (done == 0) continue;
      const auto& a = replies[static_cast<std::size_t>(r)];
      p.answered = true;
      p.case_index = static_cast<int>(a[0]);
      p.iteration = static_cast<int>(a[1]);
      p.phase = static_cast<Phase>(static_cast<int>(a[2]));
      p.seconds_in_phase = a[3];
      p.stage = static_cast<Stage>(static_cast<int>(a[4]));
    }
    if (!all) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return positions;
}

void Watchdog::fire() {
  const std::vector<RankPosition> positions = ask_every_rank();
  std::string label;
  {
    std::lock_guard<std::mutex> guard(label_mutex_);
    label = case_label_;
  }
  std::string message = watchdog_message(positions, case_.load(), label, timeout_s_.load(), hosts_);
  if (rank_ != 0) message += fmt::format(" (reported by rank {}: rank 0 did not)", rank_);
  stop(message + "; aborting (exit 3)", 1.0);
}

void Watchdog::stop(const std::string& message, double grace_s) {
  std::fprintf(stderr, "collbench: error: %s\n", message.c_str());
  std::fflush(stderr);
  backend::request_abort_all();
  abort_job(3, /*flush_stdout=*/false, grace_s);
}

}  // namespace collbench::run
