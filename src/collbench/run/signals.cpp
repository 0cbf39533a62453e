// Stop signals: an async-signal-safe handler and the message of the rank that stops the run.
#include "collbench/run/signals.hpp"

#include <fmt/format.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <csignal>
#include <cstddef>
#include <cstring>
#include <utility>

namespace collbench::run {
namespace {

constexpr std::array<int, 2> kStopSignals{SIGINT, SIGTERM};
constexpr int kExitAborted = 3;  // ExitCode::aborted: the handler may not reach core's types

volatile std::sig_atomic_t g_signal = 0;
std::atomic<bool> g_watched{false};
static_assert(std::atomic<bool>::is_always_lock_free, "the handler reads it");

// The fallback lines, one per signal, written before any handler can run.
struct FallbackLine {
  std::array<char, 320> text{};
  std::size_t size = 0;
};
std::array<FallbackLine, kStopSignals.size()> g_lines;
std::array<struct sigaction, kStopSignals.size()> g_previous{};

void write_all(const char* p, std::size_t n) noexcept {
  while (n > 0) {
    const ssize_t w = ::write(STDERR_FILENO, p, n);
    if (w <= 0) return;
    p += w;
    n -= static_cast<std::size_t>(w);
  }
}

// When the first stop signal came (CLOCK_MONOTONIC ns; 0: none yet).
std::atomic<long long> g_first_ns{0};
static_assert(std::atomic<long long>::is_always_lock_free, "the handler reads it");
// A repeat within this long of the first is the same stop delivered twice (Slurm signals every
// task and srun forwards the same signal; a launcher that relays to a process group), not a second
// request: the watchdog still reports it once.
constexpr long long kRepeatIsSameStop_ns = 1'000'000'000;

long long monotonic_ns() noexcept {
  timespec t{};
  clock_gettime(CLOCK_MONOTONIC, &t);  // async-signal-safe (POSIX)
  return static_cast<long long>(t.tv_sec) * 1'000'000'000 + t.tv_nsec;
}

extern "C" void on_stop_signal(int signum) {
  // The first signal claims the time first (a repeat can arrive in another thread, or nested in
  // this handler, at once), then names itself.
  const long long now = std::max(monotonic_ns(), 1LL);
  long long first = 0;
  const bool repeated = !g_first_ns.compare_exchange_strong(first, now, std::memory_order_relaxed);
  if (!repeated) g_signal = signum;
  if (!repeated && g_watched.load(std::memory_order_relaxed)) return;  // the watchdog reports it
  // Delivered twice: the first stop is under way (the watchdog's report, or its last steps after
  // the watchdog ended); a repeat a second or more later forces the exit here.
  if (repeated && now - first < kRepeatIsSameStop_ns) return;
  for (std::size_t i = 0; i < kStopSignals.size(); ++i) {
    if (kStopSignals[i] == signum) write_all(g_lines[i].text.data(), g_lines[i].size);
  }
  ::_exit(kExitAborted);
}

}  // namespace

int pending_stop_signal() noexcept {
  return static_cast<int>(g_signal);
}

std::string signal_name(int signum) {
  if (signum == SIGINT) return "SIGINT";
  if (signum == SIGTERM) return "SIGTERM";
  return fmt::format("signal {}", signum);
}

void set_signal_watcher(bool watching) noexcept {
  g_watched.store(watching, std::memory_order_relaxed);
}

namespace {
std::string& stop_outcome_text() {
  static std::string text = kRunStopOutcome;
  return text;
}
}  // namespace

void set_stop_outcome(std::string text) {
  stop_outcome_text() = std::move(text);
}

const std::string& stop_outcome() {
  return stop_outcome_text();
}

std::string signal_stop_message(int signum, int rank, const std::string& host, long pid, const std::string& where) {
  return fmt::format("rank {} ({}pid {}) received {}{}; stopping the run (exit 3): {}", rank,
                     host.empty() ? std::string() : "host " + host + ", ", pid, signal_name(signum),
                     where.empty() ? std::string() : " " + where, stop_outcome());
}

StopSignals::StopSignals(int rank) {
  for (std::size_t i = 0; i < kStopSignals.size(); ++i) {
    const std::string line =
        "collbench: error: " + signal_stop_message(kStopSignals[i], rank, "", static_cast<long>(::getpid()), "") + "\n";
    auto& slot = g_lines[i];
    slot.size = std::min(line.size(), slot.text.size());
    std::memcpy(slot.text.data(), line.data(), slot.size);
  }
  struct sigaction action {};
  action.sa_handler = on_stop_signal;
  sigemptyset(&action.sa_mask);
  action.sa_flags = SA_RESTART;  // a write or read in progress goes on; the flag is polled
  for (std::size_t i = 0; i < kStopSignals.size(); ++i) sigaction(kStopSignals[i], &action, &g_previous[i]);
  installed_ = true;
}

StopSignals::~StopSignals() {
  if (!installed_) return;
  for (std::size_t i = 0; i < kStopSignals.size(); ++i) sigaction(kStopSignals[i], &g_previous[i], nullptr);
}

}  // namespace collbench::run
