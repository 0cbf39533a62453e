// Watchdog thread and its report.
#include "collbench/run/watchdog.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cstdio>

#include "collbench/backend/mpi/simulation.hpp"
#include "collbench/backend/policy.hpp"
#include "collbench/run/session.hpp"

namespace collbench::run {
namespace {

constexpr int kQueryTag = 7401;
constexpr int kReplyTag = 7402;
constexpr double kAnswerWait_s = 3.0;
constexpr auto kPollPeriod = std::chrono::milliseconds(100);

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
  }
  return "?";
}

}  // namespace

double default_timeout_s(std::uint64_t bytes) {
  return 300.0 + static_cast<double>(bytes) / 1e8;
}

std::vector<int> ranks_not_arrived(const std::vector<RankPosition>& positions) {
  std::pair<int, int> front{-1, -1};
  for (const auto& p : positions) {
    if (p.answered) front = std::max(front, std::make_pair(p.case_index, p.iteration));
  }
  std::vector<int> out;
  for (const auto& p : positions) {
    if (!p.answered) continue;
    const bool behind = std::make_pair(p.case_index, p.iteration) < front;
    if (behind || p.phase != Phase::waiting) out.push_back(p.rank);
  }
  return out;
}

std::string watchdog_message(const std::vector<RankPosition>& positions, int case_index, const std::string& case_label,
                             double timeout_s, const std::vector<std::string>& hosts) {
  int iteration = -1;
  for (const auto& p : positions) {
    if (p.answered) iteration = std::max(iteration, p.case_index == case_index ? p.iteration : -1);
  }
  const auto host_of = [&hosts](int r) {
    return r >= 0 && static_cast<std::size_t>(r) < hosts.size() ? hosts[static_cast<std::size_t>(r)] : std::string("?");
  };
  std::string late;
  for (int r : ranks_not_arrived(positions)) {
    const auto& p = positions[static_cast<std::size_t>(r)];
    late += fmt::format("{}{} (host {}: {}, case {} iteration {}, {:.1f} s)", late.empty() ? "" : "; ", r, host_of(r),
                        phase_text(p.phase), p.case_index, p.iteration, p.seconds_in_phase);
  }
  std::string silent;
  for (const auto& p : positions) {
    if (!p.answered) silent += fmt::format("{}{} (host {})", silent.empty() ? "" : ", ", p.rank, host_of(p.rank));
  }
  return fmt::format(
      "watchdog: case {} ({}) iteration {} exceeded the {:.3g} s timeout; ranks that did not arrive: {}; no answer "
      "from: {}",
      case_index, case_label, iteration, timeout_s, late.empty() ? "none" : late, silent.empty() ? "none" : silent);
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
  MPI_Comm dup = MPI_COMM_NULL;
  MPI_Comm_dup(MPI_COMM_WORLD, &dup);
  comm_ = backend::MpiCommHandle(dup);
  if (rank_ != 0) MPI_Irecv(&query_buf_, 1, MPI_INT, 0, kQueryTag, dup, &query_);
  thread_ = std::thread([this] { loop(); });
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
  // No barrier here: this destructor also runs while an exception unwinds on one rank only.
}

void Watchdog::at(int case_index, int iteration, Phase phase, double timeout_s) {
  const double now = MPI_Wtime();
  case_.store(case_index, std::memory_order_relaxed);
  iteration_.store(iteration, std::memory_order_relaxed);
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

RankPosition Watchdog::self_position() const {
  RankPosition p;
  p.rank = rank_;
  p.answered = true;
  p.case_index = case_.load(std::memory_order_relaxed);
  p.iteration = iteration_.load(std::memory_order_relaxed);
  p.phase = static_cast<Phase>(phase_.load(std::memory_order_relaxed));
  p.seconds_in_phase = MPI_Wtime() - phase_since_.load(std::memory_order_relaxed);
  return p;
}

void Watchdog::answer_queries() {
  int arrived = 0;
  MPI_Test(&query_, &arrived, MPI_STATUS_IGNORE);
  if (arrived == 0) return;
  const RankPosition p = self_position();
  const double reply[4] = {static_cast<double>(p.case_index), static_cast<double>(p.iteration),
                           static_cast<double>(static_cast<int>(p.phase)), p.seconds_in_phase};
  MPI_Send(reply, 4, MPI_DOUBLE, 0, kReplyTag, comm_.get());
  MPI_Irecv(&query_buf_, 1, MPI_INT, 0, kQueryTag, comm_.get(), &query_);
}

void Watchdog::loop() {
  std::unique_lock<std::mutex> lock(stop_mutex_);
  while (!stop_cv_.wait_for(lock, kPollPeriod, [this] { return stop_; })) {
    if (rank_ != 0) {
      answer_queries();
      continue;
    }
    const double deadline = deadline_.load(std::memory_order_relaxed);
    if (deadline > 0 && MPI_Wtime() > deadline) fire();
  }
}

void Watchdog::fire() {
  // Ask every rank where it is; a rank that cannot answer within a few seconds is unreachable.
  std::vector<RankPosition> positions(static_cast<std::size_t>(size_));
  positions[0] = self_position();
  std::vector<std::array<double, 4>> replies(static_cast<std::size_t>(size_));
  std::vector<MPI_Request> recvs(static_cast<std::size_t>(size_), MPI_REQUEST_NULL);
  std::vector<MPI_Request> sends(static_cast<std::size_t>(size_), MPI_REQUEST_NULL);
  int query = 1;
  for (int r = 1; r < size_; ++r) {
    const auto i = static_cast<std::size_t>(r);
    positions[i].rank = r;
    MPI_Irecv(replies[i].data(), 4, MPI_DOUBLE, r, kReplyTag, comm_.get(), &recvs[i]);
    MPI_Isend(&query, 1, MPI_INT, r, kQueryTag, comm_.get(), &sends[i]);
  }
  const double give_up = MPI_Wtime() + kAnswerWait_s;
  while (MPI_Wtime() < give_up) {
    bool all = true;
    for (int r = 1; r < size_; ++r) {
      const auto i = static_cast<std::size_t>(r);
      if (positions[i].answered) continue;
      int done = 0;
      MPI_Test(&recvs[i], &done, MPI_STATUS_IGNORE);
      if (done != 0) {
        positions[i].answered = true;
        positions[i].case_index = static_cast<int>(replies[i][0]);
        positions[i].iteration = static_cast<int>(replies[i][1]);
        positions[i].phase = static_cast<Phase>(static_cast<int>(replies[i][2]));
        positions[i].seconds_in_phase = replies[i][3];
      } else {
        all = false;
      }
    }
    if (all) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  std::string label;
  {
    std::lock_guard<std::mutex> guard(label_mutex_);
    label = case_label_;
  }
  const std::string message = watchdog_message(positions, case_.load(), label, timeout_s_.load(), hosts_);
  std::fprintf(stderr, "collbench: error: %s; aborting (exit 3)\n", message.c_str());
  std::fflush(stderr);
  backend::request_abort_all();
  abort_job(3, /*flush_stdout=*/false);
}

}  // namespace collbench::run
