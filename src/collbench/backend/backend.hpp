// Backend interfaces: memory, communicators and timers, with no MPI/CUDA/NCCL header.
// A backend is chosen by name from a registry (backend_registry.hpp); the collectives
// (collbench/coll) call only these interfaces.
#pragma once

#include <cstddef>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "collbench/backend/bound_call.hpp"
#include "collbench/backend/operation.hpp"
#include "collbench/core/dtype.hpp"
#include "collbench/core/error.hpp"
#include "collbench/core/redop.hpp"
#include "collbench/overlap/load.hpp"

namespace collbench::backend {

// The library refused an operation as unsupported in this configuration, at the call and without
// harm to the communicator: NCCL's "no algorithm/protocol available" for a forced algorithm it has
// no use of here (ncclInvalidUsage or ncclInternalError, nccl_host.hpp is_refusal). The runner
// records the case as waived when every rank got it at the verification launch (run/measure.cpp);
// anywhere else it is a failure like any other.
class Unsupported : public RuntimeFailure {
 public:
  using RuntimeFailure::RuntimeFailure;
};

// A buffer owned by a backend (host memory for MPI, device memory for NCCL). RAII.
class Buffer {
 public:
  virtual ~Buffer() = default;
  [[nodiscard]] virtual void* data() = 0;
  [[nodiscard]] virtual std::size_t bytes() const = 0;
  // The memory itself when the host can read and write it (the MPI backend's host buffers), else
  // nullptr (device memory: upload and download). Cases fill and check such buffers in place
  // instead of staging a host copy per rank.
  [[nodiscard]] virtual void* host_data() { return nullptr; }
};

// One communicator (all ranks, or one domain). Every operation goes through run() (or bind(), for
// the timed loop), described by an Operation (operation.hpp: the fields each operation reads,
// counts in elements, NCCL's in-place conventions); the backend dispatches it on its own table of
// handlers (OpTable) and refuses one it has not (InputError naming it).
class Comm {
 public:
  virtual ~Comm() = default;
  [[nodiscard]] virtual int rank() const = 0;
  [[nodiscard]] virtual int size() const = 0;

  // Issues one operation (GPU: enqueues it; synchronize() waits for it).
  virtual void run(const Operation& op) = 0;
  // run(op) bound once to its arguments, for the timed loop (BoundCall: one indirect call per
  // launch). The default calls run() through the bound call; a backend converts the arguments
  // once where it can (the MPI communicator: count, datatype, op and communicator) and refuses a
  // bad count here. The buffers (and op.peers) must outlive the call, and a bound call is never
  // issued inside a group.
  [[nodiscard]] virtual BoundCall bind(const Operation& op) { return BoundCall::of<&call_run>(RunArgs{this, op}); }
  // Where reduce-scatter in place leaves this rank's block (elements from the buffer's start).
  [[nodiscard]] virtual std::size_t reduce_scatter_in_place_offset(std::size_t recvcount) const = 0;
  virtual void barrier() = 0;
  // Copies bytes between two buffers of this backend, ordered with this communicator's
  // operations (host memcpy; GPU: an async device copy on the collective's stream).
  virtual void local_copy(void* dst, const void* src, std::size_t bytes);
  // `rows` copies of `width` bytes, row r from src + r x src_pitch to dst + r x dst_pitch, ordered
  // like local_copy (pitches at least `width`). The default copies row by row; the GPU issues one
  // strided copy (cudaMemcpy2DAsync) instead of `rows` launches.
  virtual void local_copy_rows(void* dst, std::size_t dst_pitch, const void* src, std::size_t src_pitch,
                               std::size_t width, std::size_t rows);
  // Waits until every operation issued so far has completed (GPU: the stream).
  virtual void synchronize() {}
  // True when synchronize() does nothing (every operation has completed when it returns): the
  // timed loop then leaves it out (run/measure.cpp).
  [[nodiscard]] virtual bool synchronize_is_noop() const { return false; }
  // The algorithm the library reported for the last operation, when it says.
  [[nodiscard]] virtual std::string algo_used() const { return {}; }
  // A communicator composed of levels (HierarchicalComm) exposes them, so that a family can
  // compose its own hierarchical algorithm (MoE dispatch/combine): this rank's domain, and the
  // ranks with the same local index ordered by domain. Null for a flat communicator.
  [[nodiscard]] virtual Comm* domain_level() { return nullptr; }
  [[nodiscard]] virtual Comm* cross_level() { return nullptr; }
  // The communicator of this rank's block of `block_size` consecutive ranks (ranks
  // [b * block_size, (b + 1) * block_size)), created on first use and kept: the MoE families
  // exchange inside one EP group on it, as MoE frameworks do, instead of over the whole
  // communicator with zero rows to every other group. Collective on first use (every rank of
  // this communicator calls it with the same size, outside the timed region: the verification
  // or warm-up launch). Null when the backend does not split (the family then exchanges over the
  // whole communicator), or when block_size does not divide size(); this communicator itself for
  // block_size == size(). The MPI and NCCL backends split (MPI_Comm_split, ncclCommSplit) with the
  // shared logic of block_split.hpp; the block lives as long as this communicator.
  [[nodiscard]] virtual Comm* block_level(int block_size) {
    (void)block_size;
    return nullptr;
  }
  // Concurrent operations (ep-dp-concurrent): the single operations issued between group_start()
  // and group_end(), on this communicator or on other communicators of the same backend (the
  // levels of a HierarchicalComm), start together and run at the same time. MPI: each one is
  // issued non-blocking and group_end() completes them all together (MPI_Waitall, or a
  // test-and-yield loop under --progress yield). NCCL: ncclGroupStart/ncclGroupEnd (legal across
  // communicators); as for every NCCL operation, synchronize() waits for the results. Groups do
  // not nest, and HierarchicalComm's own composed allreduce/alltoall cannot be grouped.
  // group_waiver(): why this backend cannot group (a family that needs groups is waived with it),
  // or nullopt. The defaults cannot group: group_start() throws InputError with the waiver.
  [[nodiscard]] virtual std::optional<std::string> group_waiver() const;
  virtual void group_start();
  virtual void group_end();

 private:
  struct RunArgs {
    Comm* comm;
    Operation op;
  };
  static void call_run(const RunArgs& a) { a.comm->run(a.op); }
};

// Per-iteration timer. start(): the common start after the barrier, and this rank's entry into the
// collective unless enter() moves it later (called only when something runs in between, e.g. an
// injected delay: one clock read less in the timed region otherwise); stop(): the collective
// completed on this rank.
class Timer {
 public:
  virtual ~Timer() = default;
  virtual void start() = 0;
  virtual void enter() = 0;
  virtual void stop() = 0;
  [[nodiscard]] virtual double total_us() = 0;   // stop - start
  [[nodiscard]] virtual double inside_us() = 0;  // stop - enter (stop - start without enter())
  // True when start(), enter() and stop() only read MPI_Wtime: the runner may then read it itself
  // in the timed loop, without a virtual call in the timed region (run/measure.cpp).
  [[nodiscard]] virtual bool reads_mpi_wtime() const { return false; }
  // The timing gate (GPU timers; docs/measurement.md "The timed sequence"): hold() makes the
  // backend's stream wait at a device-side gate, so that what the host enqueues next (device
  // barrier, start, the operations, the end) runs only once release() opens it: the host's
  // enqueue is then not in the measured time. holds_stream() says whether this timer has a
  // gate; the runner calls hold() and release() only then (the defaults do nothing: MPI).
  // release() never throws and may be called without a hold (it does nothing then).
  [[nodiscard]] virtual bool holds_stream() const { return false; }
  virtual void hold() {}
  virtual void release() noexcept {}
};

// Operations captured once and replayed as one launch (CUDA graphs: --graph/-G).
class Replay {
 public:
  virtual ~Replay() = default;
  // Enqueues one replay of everything captured, on the backend's stream.
  virtual void launch() = 0;
};

class DevicePatterns;  // backend/device_patterns.hpp

class Backend {
 public:
  virtual ~Backend() = default;
  [[nodiscard]] virtual std::string name() const = 0;
  [[nodiscard]] virtual std::unique_ptr<Buffer> allocate(std::size_t bytes) = 0;
  virtual void upload(Buffer& dst, const void* host, std::size_t bytes) = 0;
  virtual void download(void* host, Buffer& src, std::size_t bytes) = 0;
  // Communicator over all ranks, and one per domain (ranks with the same color).
  [[nodiscard]] virtual std::unique_ptr<Comm> world() = 0;
  [[nodiscard]] virtual std::unique_ptr<Comm> split(int color, int key) = 0;
  [[nodiscard]] virtual std::unique_ptr<Timer> timer() = 0;
  // Library versions and settings for the run header ("mpi_library", "nccl_version", ...).
  [[nodiscard]] virtual std::map<std::string, std::string> provenance() const = 0;
  // A compute load to run beside this backend's collectives (overlap mode): the CPU loads by
  // default (worker threads); the NCCL backend runs them on the GPU on a second stream.
  [[nodiscard]] virtual std::unique_ptr<overlap::ComputeLoad> make_compute(const overlap::ComputeSpec& spec) {
    return overlap::make_cpu_load(spec);
  }
  // A barrier over every rank of this backend that the host does not wait for: enqueued on the
  // backend's stream behind a held timer (Timer::hold), it lines up the ranks' devices before
  // the start event (NCCL: a dissemination barrier of one-element sends and receives on the world
  // communicator, nccl_host.hpp dissemination_rounds). The default
  // does nothing: on host memory the runner's host barrier is already the last step before
  // start.
  virtual void device_barrier() {}
  // Captures the operations `issue` enqueues on this backend's communicators, to replay them
  // with Replay::launch() (--graph/-G). Nothing inside `issue` may wait for or query the device;
  // any scratch the operations need must exist before (the runner primes them first). InputError
  // by default: a backend that runs each operation when it is called has nothing to capture.
  [[nodiscard]] virtual std::unique_ptr<Replay> capture(const std::function<void()>& issue);
  // Device-side fill and check (backend/device_patterns.hpp), or nullptr: the runner then fills
  // and checks on the host (the default; the MPI backend). BackendEntry::device_verification in
  // the registry says the same before any backend exists (--verify device is refused up front).
  [[nodiscard]] virtual DevicePatterns* device_patterns() { return nullptr; }
};

}  // namespace collbench::backend
