// The MPI environment of one collbench process: MPI_Init/Finalize (RAII), world rank and
// size, hosts, placement into domains, and the progress mode. The runner's control traffic
// (sample gathers, stop decisions, wrong-element counts) goes over its own duplicate of
// MPI_COMM_WORLD so it never interferes with the measured communicator.
#pragma once

#include <mpi.h>

#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "collbench/backend/mpi/mpi_backend.hpp"
#include "collbench/core/placement.hpp"
#include "collbench/record/record.hpp"
#include "collbench/run/signals.hpp"

namespace collbench::run {

class MpiSession {
 public:
  MpiSession(int* argc, char*** argv);
  MpiSession(const MpiSession&) = delete;
  MpiSession& operator=(const MpiSession&) = delete;
  ~MpiSession();
  [[nodiscard]] int rank() const { return rank_; }
  [[nodiscard]] int size() const { return size_; }

  // Whether every rank reaches this call within `timeout_s` (an MPI_Ibarrier on the session's own
  // communicator, polled): how an input error learns that every rank found it (validation of the
  // same flags and files, or an error agreed through rank 0) rather than this rank alone (its own
  // environment, a library missing on its node), while the others wait in a collective for it.
  // True at once on one rank; in a simulation, a plain barrier. Called once, on the way out. `on_late` runs once when
  // the others have not all come after `late_s` (to say why this rank waits before a watchdog ends the job).
  [[nodiscard]] bool every_rank_arrives(double timeout_s, double late_s = 0.0,
                                        const std::function<void()>& on_late = {});

 private:
  int rank_ = 0;
  int size_ = 1;
  bool owns_ = false;
  backend::MpiCommHandle exit_comm_;      // every_rank_arrives' communicator, duplicated at the start
  std::unique_ptr<StopSignals> signals_;  // SIGINT and SIGTERM stop the run with exit 3
};

// Ends the whole job with `code` after this rank's last message: flushes stderr (and stdout when
// `flush_stdout`) and waits a moment first, because MPI_Abort makes the launcher kill every rank
// at once and its stdio forwarding may drop what was written just before (MPICH's hydra, about
// once in 15 runs). The watchdog thread passes flush_stdout = false: the stuck main thread may
// hold stdout's lock, and the abort must not wait for it. A stop on a signal waits less
// (`grace_s`), to stay within a second.
[[noreturn]] void abort_job(int code, bool flush_stdout = true, double grace_s = 1.0);

struct PlacementOptions {
  std::optional<int> ranks_per_domain;
  std::optional<std::string> domain_sizes;
  bool allow_interleaved = false;
};

struct ProcessInfo {
  int rank = 0;
  int size = 1;
  int local_rank = 0;  // rank among the ranks on this host
  int ranks_on_host = 1;
  int cores_available = 1;  // CPUs this process may run on
  // Per rank: on rank 0 always; on every rank outside a simulation (gather_hosts in session.cpp).
  std::vector<record::HostInfo> hosts;
  std::vector<int> host_index;         // per rank, on every rank: hosts numbered in order of first appearance
  std::string launcher = "singleton";  // run header's `launcher`, agreed by all ranks (detect_launcher)
};

// Control channel over a private duplicate of MPI_COMM_WORLD.
class Control {
 public:
  Control();
  [[nodiscard]] MPI_Comm comm() const { return comm_.get(); }
  [[nodiscard]] int rank() const { return rank_; }
  [[nodiscard]] int size() const { return size_; }
  void barrier(backend::Progress progress) const;
  // Element-wise max over ranks into rank 0's `out` (resized there).
  void max_to_root(const std::vector<double>& local, std::vector<double>& out) const;
  // Gathers one double per rank on rank 0.
  [[nodiscard]] std::vector<double> gather(double value) const;
  [[nodiscard]] std::vector<std::uint64_t> gather(std::uint64_t value) const;
  [[nodiscard]] bool broadcast_flag(bool flag) const;
  [[nodiscard]] int broadcast_int(int value) const;  // rank 0's value on every rank
  [[nodiscard]] std::string broadcast_string(const std::string& s) const;
  // Rank 0's vector, its length included, on every rank (the others' `values` are ignored).
  [[nodiscard]] std::vector<double> broadcast_doubles(const std::vector<double>& values) const;

 private:
  backend::MpiCommHandle comm_;
  int rank_ = 0;
  int size_ = 1;
};

ProcessInfo gather_process_info(const Control& control);

// This process's rank in MPI_COMM_WORLD; 0 before MPI_Init and after MPI_Finalize, when the
// process speaks for itself (the CLI prints errors and listings on rank 0 only).
int world_rank();

// The host name of every rank this process knows (info.hosts), in rank order.
std::vector<std::string> host_names(const ProcessInfo& info);

// Resolves domains (docs/interfaces.md section 2): explicit flags > system profile > host.
// `warning` receives the "a host is not a rack" note when the host fallback is used.
Placement resolve_placement(const ProcessInfo& info, const PlacementOptions& options,
                            std::optional<int> profile_ranks_per_domain, std::string& warning);

// "spin" / "yield" / "auto": auto yields when ranks on a host exceed its cores.
backend::Progress choose_progress(const std::string& mode, const ProcessInfo& info);

// Run-header facts: launcher, relevant environment, start time, run id.
// The launcher, agreed by every rank of MPI_COMM_WORLD (collective when MPI is initialised):
// "srun" only when srun gave every rank its MPI rank as task id (an mpiexec inside an sbatch
// script inherits the batch step's SLURM_* variables and is still "mpiexec"); core/launcher.hpp.
std::string detect_launcher(MPI_Comm comm);
std::map<std::string, std::string> relevant_env();
std::string utc_now_iso8601();
std::string new_run_id();

}  // namespace collbench::run
