// MPI session, control channel and run provenance.
#include "collbench/run/session.hpp"

#include <fmt/format.h>
#include <sched.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <random>
#include <thread>
#include <unordered_map>

#include "collbench/backend/mpi/mpi_check.hpp"
#include "collbench/backend/mpi/mpi_types.hpp"
#include "collbench/backend/mpi/simulation.hpp"
#include "collbench/core/error.hpp"
#include "collbench/core/launcher.hpp"

extern char** environ;

namespace collbench::run {

MpiSession::MpiSession(int* argc, char*** argv) {
  int initialized = 0;
  MPI_Initialized(&initialized);
  if (initialized == 0) {
    int provided = 0;
    CB_CHECK_MPI(MPI_Init_thread(argc, argv, MPI_THREAD_MULTIPLE, &provided));
    owns_ = true;
  }
  MPI_Comm_rank(MPI_COMM_WORLD, &rank_);
  MPI_Comm_size(MPI_COMM_WORLD, &size_);
  signals_ = std::make_unique<StopSignals>(rank_);
  if (size_ > 1) {
    MPI_Comm dup = MPI_COMM_NULL;
    CB_CHECK_MPI(MPI_Comm_dup(MPI_COMM_WORLD, &dup));
    exit_comm_ = backend::MpiCommHandle(dup);
  }
}

bool MpiSession::every_rank_arrives(double timeout_s, double late_s, const std::function<void()>& on_late) {
  if (size_ <= 1 || exit_comm_.get() == MPI_COMM_NULL) return true;
  // A simulation's ranks share the host's time, which means nothing to them; SimGrid itself
  // ends a simulation in which some rank never arrives (a deadlock), naming the ranks.
  if (backend::sim::active()) return MPI_Barrier(exit_comm_.get()) == MPI_SUCCESS;
  MPI_Request req = MPI_REQUEST_NULL;
  if (MPI_Ibarrier(exit_comm_.get(), &req) != MPI_SUCCESS) return false;
  const auto start = std::chrono::steady_clock::now();
  const auto late = start + std::chrono::duration<double>(late_s);
  const auto give_up = start + std::chrono::duration<double>(timeout_s);
  bool told = !on_late;
  for (;;) {
    int done = 0;
    if (MPI_Test(&req, &done, MPI_STATUS_IGNORE) != MPI_SUCCESS) return false;
    if (done != 0) return true;
    const auto now = std::chrono::steady_clock::now();
    if (!told && now > late) {
      told = true;
      on_late();
    }
    if (now > give_up) return false;  // the job is aborted: req is left
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
}

MpiSession::~MpiSession() {
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (finalized == 0) exit_comm_ = backend::MpiCommHandle();  // freed before MPI_Finalize
  if (owns_ && finalized == 0) {
    backend::free_mpi_types();
    MPI_Finalize();
  }
}

void abort_job(int code, bool flush_stdout, double grace_s) {
  if (flush_stdout) std::fflush(stdout);
  std::fflush(stderr);
  std::this_thread::sleep_for(std::chrono::duration<double>(grace_s));
  MPI_Abort(MPI_COMM_WORLD, code);
  std::_Exit(code);
}

Control::Control() {
  MPI_Comm dup = MPI_COMM_NULL;
  CB_CHECK_MPI(MPI_Comm_dup(MPI_COMM_WORLD, &dup));
  comm_ = backend::MpiCommHandle(dup);
  MPI_Comm_rank(dup, &rank_);
  MPI_Comm_size(dup, &size_);
}

void Control::barrier(backend::Progress progress) const {
  if (progress == backend::Progress::spin) {
    CB_CHECK_MPI(MPI_Barrier(comm_.get()));
    return;
  }
  MPI_Request req;
  CB_CHECK_MPI(MPI_Ibarrier(comm_.get(), &req));
  backend::mpi_wait(req, progress);
}

void Control::max_to_root(const std::vector<double>& local, std::vector<double>& out) const {
  if (rank_ == 0) out.resize(local.size());
  CB_CHECK_MPI(MPI_Reduce(local.data(), rank_ == 0 ? out.data() : nullptr, static_cast<int>(local.size()), MPI_DOUBLE,
                          MPI_MAX, 0, comm_.get()));
}

std::vector<double> Control::gather(double value) const {
  std::vector<double> all(rank_ == 0 ? static_cast<std::size_t>(size_) : 0);
  CB_CHECK_MPI(MPI_Gather(&value, 1, MPI_DOUBLE, all.data(), 1, MPI_DOUBLE, 0, comm_.get()));
  return all;
}

std::vector<std::uint64_t> Control::gather(std::uint64_t value) const {
  std::vector<std::uint64_t> all(rank_ == 0 ? static_cast<std::size_t>(size_) : 0);
  CB_CHECK_MPI(MPI_Gather(&value, 1, MPI_UINT64_T, all.data(), 1, MPI_UINT64_T, 0, comm_.get()));
  return all;
}

bool Control::broadcast_flag(bool flag) const {
  int v = flag ? 1 : 0;
  CB_CHECK_MPI(MPI_Bcast(&v, 1, MPI_INT, 0, comm_.get()));
  return v != 0;
}

int Control::broadcast_int(int value) const {
  CB_CHECK_MPI(MPI_Bcast(&value, 1, MPI_INT, 0, comm_.get()));
  return value;
}

std::vector<double> Control::broadcast_doubles(const std::vector<double>& values) const {
  const int len = broadcast_int(static_cast<int>(values.size()));
  std::vector<double> out(static_cast<std::size_t>(len), 0.0);
  if (rank_ == 0) out = values;
  CB_CHECK_MPI(MPI_Bcast(out.data(), len, MPI_DOUBLE, 0, comm_.get()));
  return out;
}

// No check that throws: error paths print through this.
int world_rank() {
  int initialized = 0;
  int finalized = 0;
  if (MPI_Initialized(&initialized) != MPI_SUCCESS || MPI_Finalized(&finalized) != MPI_SUCCESS) return 0;
  if (initialized == 0 || finalized != 0) return 0;
  int rank = 0;
  return MPI_Comm_rank(MPI_COMM_WORLD, &rank) == MPI_SUCCESS ? rank : 0;
}

std::string Control::broadcast_string(const std::string& s) const {
  int len = static_cast<int>(s.size());
  CB_CHECK_MPI(MPI_Bcast(&len, 1, MPI_INT, 0, comm_.get()));
  std::string out(static_cast<std::size_t>(len), '\0');
  if (rank_ == 0) out = s;
  CB_CHECK_MPI(MPI_Bcast(out.data(), len, MPI_CHAR, 0, comm_.get()));
  return out;
}

namespace {

constexpr int kHostLen = 256;

// Host names and pids. Rank 0 gathers them (N x 256 bytes there, nowhere else) and numbers the
// hosts in order of first appearance; every rank receives the host number of every rank (N ints,
// what the placement needs). Outside a simulation every rank also receives the names and pids:
// the watchdog names the hosts of late ranks on whichever rank it fires. A simulation holds all
// ranks in one process, where N names on each of N ranks would be the tool's own O(N^2) memory
// (256 MiB at 1,024 ranks); there only rank 0 keeps them (its watchdog is off).
void gather_hosts(const Control& control, ProcessInfo& info) {
  const auto n = static_cast<std::size_t>(info.size);
  const bool root = info.rank == 0;
  std::array<char, kHostLen> host{};
  const std::string my_host = backend::sim::host_name();  // the simulated host under SMPI
  std::memcpy(host.data(), my_host.data(), std::min<std::size_t>(my_host.size(), kHostLen - 1));
  std::vector<char> names(root ? n * kHostLen : 0);
  CB_CHECK_MPI(MPI_Gather(host.data(), kHostLen, MPI_CHAR, names.data(), kHostLen, MPI_CHAR, 0, control.comm()));
  const long pid = static_cast<long>(getpid());
  std::vector<long> pids(root ? n : 0);
  CB_CHECK_MPI(MPI_Gather(&pid, 1, MPI_LONG, pids.data(), 1, MPI_LONG, 0, control.comm()));
  // Rank 0 numbers the hosts; `unique` holds each distinct name once.
  info.host_index.assign(n, 0);
  std::vector<char> unique;
  if (root) {
    std::unordered_map<std::string, int> number;
    for (std::size_t r = 0; r < n; ++r) {
      const char* name = names.data() + r * kHostLen;
      const auto [it, added] =
          number.try_emplace(std::string(name, strnlen(name, kHostLen)), static_cast<int>(number.size()));
      if (added) unique.insert(unique.end(), name, name + kHostLen);
      info.host_index[r] = it->second;
    }
  }
  CB_CHECK_MPI(MPI_Bcast(info.host_index.data(), info.size, MPI_INT, 0, control.comm()));
  if (!backend::sim::active()) {
    int count = static_cast<int>(unique.size() / kHostLen);
    CB_CHECK_MPI(MPI_Bcast(&count, 1, MPI_INT, 0, control.comm()));
    unique.resize(static_cast<std::size_t>(count) * kHostLen);
    CB_CHECK_MPI(MPI_Bcast(unique.data(), count * kHostLen, MPI_CHAR, 0, control.comm()));
    pids.resize(n);
    CB_CHECK_MPI(MPI_Bcast(pids.data(), info.size, MPI_LONG, 0, control.comm()));
  } else if (!root) {
    return;  // simulation: the names stay on rank 0
  }
  for (std::size_t r = 0; r < n; ++r) {
    record::HostInfo h;
    h.rank = static_cast<int>(r);
    const char* name = unique.data() + static_cast<std::size_t>(info.host_index[r]) * kHostLen;
    h.host = std::string(name, strnlen(name, kHostLen));
    h.pid = pids[r];
    info.hosts.push_back(std::move(h));
  }
}

}  // namespace

ProcessInfo gather_process_info(const Control& control) {
  ProcessInfo info;
  info.rank = control.rank();
  info.size = control.size();
  // Ranks sharing memory = ranks on this host.
  MPI_Comm local = MPI_COMM_NULL;
  CB_CHECK_MPI(MPI_Comm_split_type(control.comm(), MPI_COMM_TYPE_SHARED, info.rank, MPI_INFO_NULL, &local));
  backend::MpiCommHandle local_owner(local);
  MPI_Comm_rank(local, &info.local_rank);
  MPI_Comm_size(local, &info.ranks_on_host);
  cpu_set_t set;
  CPU_ZERO(&set);
  info.cores_available = sched_getaffinity(0, sizeof(set), &set) == 0 ? CPU_COUNT(&set) : 1;
  gather_hosts(control, info);
  info.launcher = detect_launcher(control.comm());
  return info;
}

std::vector<std::string> host_names(const ProcessInfo& info) {
  std::vector<std::string> names;
  names.reserve(info.hosts.size());
  for (const auto& h : info.hosts) names.push_back(h.host);
  return names;
}

Placement resolve_placement(const ProcessInfo& info, const PlacementOptions& options,
                            std::optional<int> profile_ranks_per_domain, std::string& warning) {
  if (options.domain_sizes) return placement_from_sizes(info.size, parse_domain_sizes(*options.domain_sizes));
  if (options.ranks_per_domain) return placement_from_ranks_per_domain(info.size, *options.ranks_per_domain);
  if (profile_ranks_per_domain) {
    Placement p = placement_from_ranks_per_domain(info.size, *profile_ranks_per_domain);
    p.source = "system";
    return p;
  }
  // Host names where this rank has them, else the hosts' numbers (the same domains).
  std::vector<std::string> keys;
  if (info.hosts.size() == static_cast<std::size_t>(info.size)) {
    for (const auto& h : info.hosts) keys.push_back(h.host);
  } else {
    for (const int h : info.host_index) keys.push_back(fmt::format("host #{}", h));
  }
  Placement p = placement_from_keys(keys, options.allow_interleaved, "host");
  warning = fmt::format(
      "domains taken from hosts ({} domain(s) of [{}] ranks): a host is not a rack; pass --ranks-per-domain or "
      "--domain-sizes, or a --system profile, to model scale-up domains",
      p.num_domains(), fmt::join(p.domain_sizes, ","));
  return p;
}

backend::Progress choose_progress(const std::string& mode, const ProcessInfo& info) {
  if (backend::sim::active()) {
    // SMPI charges simulated time for every MPI_Test of a yield loop (an 8-byte all-reduce read
    // 5.65 ms instead of 12 us): a simulation always spins (docs/simulation.md).
    if (mode == "yield")
      throw InputError("--progress yield: a simulation (SimGrid SMPI) runs with --progress spin only");
    return backend::Progress::spin;
  }
  if (mode == "spin") return backend::Progress::spin;
  if (mode == "yield") return backend::Progress::yield;
  if (mode != "auto") throw InputError(unknown_name_message("progress mode", mode, {"auto", "spin", "yield"}));
  return info.ranks_on_host > info.cores_available ? backend::Progress::yield : backend::Progress::spin;
}

std::string detect_launcher(MPI_Comm comm) {
  const LaunchEnv env = read_launch_env([](const char* name) { return std::getenv(name); });
  int rank = 0;
  int size = 1;
  int initialized = 0;
  MPI_Initialized(&initialized);
  int mine = 0;
  int all = 0;
  if (initialized != 0) {
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    mine = srun_started(env, rank, size) ? 1 : 0;
    CB_CHECK_MPI(MPI_Allreduce(&mine, &all, 1, MPI_INT, MPI_MIN, comm));
  } else {
    all = srun_started(env, 0, 1) ? 1 : 0;
  }
  return launcher_name(all != 0, env, size);
}

std::map<std::string, std::string> relevant_env() {
  static constexpr std::array<const char*, 6> kPrefixes{"NCCL_", "MPICH_", "UCX_", "OMPI_", "CUDA_", "COLLBENCH_"};
  // The Slurm job and step shape (which nodes, how many tasks, which --mpi plugin, binding); not
  // every SLURM_* variable, most are per task or repeat these.
  static constexpr std::array<const char*, 16> kSlurm{
      "SLURM_JOB_ID",       "SLURM_JOB_NAME",      "SLURM_JOB_NODELIST",   "SLURM_JOB_NUM_NODES",
      "SLURM_CLUSTER_NAME", "SLURM_STEP_ID",       "SLURM_STEP_NUM_TASKS", "SLURM_STEP_TASKS_PER_NODE",
      "SLURM_NTASKS",       "SLURM_MPI_TYPE",      "SLURM_CPUS_PER_TASK",  "SLURM_CPU_BIND",
      "SLURM_DISTRIBUTION", "SLURM_GPUS_PER_TASK", "SLURM_GPUS_PER_NODE",  "SLURM_TOPOLOGY_ADDR"};
  std::map<std::string, std::string> env;
  for (char** e = environ; e != nullptr && *e != nullptr; ++e) {
    const std::string entry(*e);
    const auto eq = entry.find('=');
    if (eq == std::string::npos) continue;
    const std::string key = entry.substr(0, eq);
    for (const char* p : kPrefixes) {
      if (key.rfind(p, 0) == 0) env[key] = entry.substr(eq + 1);
    }
    for (const char* k : kSlurm) {
      if (key == k) env[key] = entry.substr(eq + 1);
    }
  }
  return env;
}

std::string utc_now_iso8601() {
  const auto now = std::chrono::system_clock::now();
  const std::time_t t = std::chrono::system_clock::to_time_t(now);
  std::tm tm{};
  gmtime_r(&t, &tm);
  std::array<char, 32> buf{};
  std::strftime(buf.data(), buf.size(), "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf.data();
}

std::string new_run_id() {
  const auto now = std::chrono::system_clock::now();
  const std::time_t t = std::chrono::system_clock::to_time_t(now);
  std::tm tm{};
  gmtime_r(&t, &tm);
  std::array<char, 32> buf{};
  std::strftime(buf.data(), buf.size(), "%Y%m%dT%H%M%SZ", &tm);
  std::random_device rd;
  return fmt::format("{}-{:08x}", buf.data(), rd());
}

}  // namespace collbench::run
