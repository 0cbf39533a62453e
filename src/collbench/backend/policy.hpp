// What the runner asks of a backend about a case, by the backend's name: the buffer kind a case
// gets by default, the buffer kinds and algorithms it cannot serve, what a machine's
// capabilities waive, how overlap mode waits, which cases share one backend instance, and what
// it adds to a measured record. The runner holds no backend name and no build option; each
// backend answers for itself here (nccl: backend/nccl/nccl_policy.cpp).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

#include "collbench/backend/backend.hpp"
#include "collbench/core/dtype.hpp"
#include "collbench/core/redop.hpp"

namespace collbench::backend {

// The memory of the GPU a rank will use, read before any buffer is allocated.
struct DeviceMemory {
  int device = 0;
  std::uint64_t free_bytes = 0, total_bytes = 0;
  std::string source;  // how it was read, e.g. "cudaMemGetInfo"
};

// Record fields a backend adds to a measured case (record `extra`): name and text or number.
using RecordNotes = std::vector<std::pair<std::string, std::variant<std::string, double>>>;

class BackendPolicy {
 public:
  virtual ~BackendPolicy() = default;
  // The buffer kind of a case left at the default `--buffers host`.
  [[nodiscard]] virtual std::string default_buffers(std::string_view algo) const;
  // Throws InputError when this backend cannot use `buffers` (checked for every case up front).
  virtual void check_buffers(std::string_view buffers) const;
  // Whether this backend replays CUDA graphs (--graph/-G; check_graph below).
  [[nodiscard]] virtual bool replays_graphs() const;
  // Why this backend cannot run --algo `algo` for `collective` (with --graph `graph`), or nullopt.
  // The runner has already judged `hierarchical` and the simulation's limits.
  [[nodiscard]] virtual std::optional<std::string> algo_waiver(std::string_view algo, std::string_view collective,
                                                               int graph) const;
  // Why this machine cannot run the case on `comm` of `backend` (a capability probe), or nullopt.
  // Collective over every rank: all ranks get the same verdict.
  [[nodiscard]] virtual std::optional<std::string> capability_waiver(Backend& backend, Comm& comm,
                                                                     std::string_view collective, Dtype dtype,
                                                                     Redop redop) const;
  // Overlap mode waits for every collective with non-blocking calls and test polling (progress
  // yield), on a backend instance of its own (docs/overlap.md).
  [[nodiscard]] virtual bool polls_for_overlap() const;
  // The key of the backend instance a case runs on: cases with equal keys share one instance
  // (its communicators, its buffers' registration, the library settings read at creation).
  // `algo` is the backend's algorithm setting (auto for flat and hierarchical).
  // Whether families that run operations on two splits at once (Collective::uses_levels) need a
  // backend instance of their own, created with BackendOptions::share_split_resources off
  // (NCCL); the default shares one instance.
  [[nodiscard]] virtual bool separates_concurrent_levels() const { return false; }
  [[nodiscard]] virtual std::string instance_key(std::string_view name, std::string_view algo, std::string_view buffers,
                                                 bool overlap) const;
  // The memory of the device local rank `local_rank` of `ranks_on_host` will use (NCCL: its GPU's
  // cudaMemGetInfo), or nullopt: a backend on host memory, or a device that cannot be read (the
  // backend's own setup then says why).
  [[nodiscard]] virtual std::optional<DeviceMemory> device_memory(int local_rank, int ranks_on_host) const;
  // Fields a measured case's record gains on this backend (e.g. in-switch accounting).
  [[nodiscard]] virtual RecordNotes record_notes(std::string_view algo, std::string_view collective, Dtype dtype,
                                                 double bytes, int comm_ranks) const;
};

// The policy of backend `name`; a backend without one of its own (or not built) gets the defaults
// above, and make_backend() says what is wrong with the name.
const BackendPolicy& backend_policy(std::string_view name);

// InputError (exit 2) when a case asks for --graph/-G `graph` on backend `name` and that backend
// cannot replay graphs, naming the flag, the backend and the backends that can; or when `graph`
// is negative. Checked for every case up front (run/runner.cpp).
void check_graph(std::string_view name, int graph);

// Asks every backend of this process that can abort its communicators to do so (NCCL: the next
// synchronize aborts them and throws). Only sets flags, so a watchdog thread or signal handler
// may call it.
void request_abort_all() noexcept;

}  // namespace collbench::backend
