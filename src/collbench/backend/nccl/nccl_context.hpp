// The NCCL backend's shared state (internal to backend/nccl): one Context per backend instance
// holds the device, the single CUDA stream every operation of this process is issued on, the
// sync event the timer reads, and the lists of live NCCL communicators and device buffers
// (registered and symmetric buffers carry one registration per communicator, made and released
// as either side comes and goes). Communicators, buffers and timers keep the Context alive
// through shared_ptr, so any destruction order is safe.
//
// Files: nccl_context.cpp (this state), nccl_comm.cpp (Comm), nccl_timer.cpp (Timer),
// nccl_setup.cpp (device, world communicator, provenance), nccl_backend.cpp (Backend).
#pragma once

#include <cuda_runtime.h>
#include <mpi.h>
#include <nccl.h>

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <tuple>
#include <utility>
#include <vector>

#include "collbench/backend/comm_tally.hpp"
#include "collbench/backend/mpi/mpi_backend.hpp"
#include "collbench/backend/nccl/multimem_kernels.hpp"
#include "collbench/backend/nccl/nccl_api.hpp"
#include "collbench/backend/nccl/nccl_check.hpp"
#include "collbench/backend/nccl/nccl_host.hpp"
#include "collbench/backend/nccl/nccl_resources.hpp"
#include "collbench/backend/nccl/nvls_host.hpp"
#include "collbench/backend/options.hpp"
#include "collbench/core/dtype.hpp"

namespace collbench::backend::nccl {

// A call's result, text and place, for NcclComm::check_collective.
#define CB_CALL(call) (call), #call, __FILE__, __LINE__

class CommOwner;
class DeviceBuffer;

// State shared by everything one backend instance creates.
struct Context {
  int device = 0;
  int cc_major = 0;
  int world_rank = 0;
  int world_size = 1;
  int local_rank = 0;
  int ranks_on_host = 1;
  int nccl_runtime_version = 0;
  // Why every case is waived: the loaded NCCL lacks what --algo / --buffers need (nccl_compat.hpp).
  std::optional<std::string> version_waiver;
  Progress progress = Progress::spin;
  AlgoSettings algo;
  BufferKind buffers = BufferKind::plain;
  MpiCommHandle mpi;                 // private duplicate of MPI_COMM_WORLD (unique id, size agreement)
  std::shared_ptr<CommTally> tally;  // the run's communicator count (BackendOptions::tally)
  bool share_splits = true;          // the world's splitShare (BackendOptions::share_split_resources)
  std::optional<CudaStream> stream;
  std::optional<CudaEvent> sync_event;  // recorded by synchronize(): where the last op ended
  std::uint64_t sync_generation = 0;
  std::vector<CommOwner*> comms;  // live communicators, in creation order (same on every rank)
  bool group_open = false;        // Comm::group_start() .. group_end() (ncclGroupStart/End)
  // Inside a group every communicator issues its operations on its own stream, forked from
  // `stream` at group_start (group_fork) and joined back at group_end: NCCL launches each
  // communicator's kernel on the stream it is given, so on one shared stream the group's parts
  // would run one after the other instead of concurrently.
  std::uint64_t group_generation = 0;
  std::optional<CudaEvent> group_fork;
  std::vector<std::pair<cudaStream_t, cudaEvent_t>> group_joins;  // (stream, its join event)
  // Inside a CUDA-graph capture (--graph/-G, nccl_graph.cpp): synchronize() refuses, since a
  // wait or a query there would invalidate the capture.
  bool capturing = false;
  std::vector<DeviceBuffer*> live_buffers;
  // Per world rank: what in-switch capability decisions need (from the provenance facts).
  std::vector<InSwitchRank> world_in_switch;

  [[nodiscard]] cudaStream_t s() const { return stream->get(); }
  void check_async_errors();
  void abort_all() noexcept;
  // Waits until the stream has drained, polling NCCL for asynchronous errors and for an abort
  // request meanwhile (a blocking cudaStreamSynchronize could not be interrupted).
  void synchronize();
  void wait_quietly() noexcept { (void)cudaStreamSynchronize(s()); }
};

// One NCCL communicator. Finalised and destroyed normally; aborted when a failure was seen or
// when it is destroyed during exception unwinding (finalising would wait for peers). A split
// keeps its parent alive, so a parent is always released after its children.
class CommOwner {
 public:
  // `members`: the world rank of each rank of this communicator, in its rank order; `parent`:
  // the communicator it was split from (null for the world).
  CommOwner(std::shared_ptr<Context> ctx, ncclComm_t comm, std::string label, std::vector<int> members,
            std::shared_ptr<CommOwner> parent = nullptr)
      : ctx_(std::move(ctx)),
        ticket_(ctx_->tally),
        parent_(std::move(parent)),
        comm_(comm),
        label_(std::move(label)),
        members_(std::move(members)) {
    CB_CHECK_NCCL_COMM(comm_, api().ncclCommUserRank(comm_, &rank_));
    CB_CHECK_NCCL_COMM(comm_, api().ncclCommCount(comm_, &size_));
    ctx_->comms.push_back(this);
  }
  CommOwner(const CommOwner&) = delete;
  CommOwner& operator=(const CommOwner&) = delete;
  ~CommOwner();

  [[nodiscard]] ncclComm_t get() const { return comm_; }
  [[nodiscard]] int rank() const { return rank_; }
  [[nodiscard]] int size() const { return size_; }
  [[nodiscard]] const std::string& label() const { return label_; }
  [[nodiscard]] const std::vector<int>& members() const { return members_; }
  // Registers the buffers that already exist (symmetric: collective over this communicator).
  void attach_buffers();
  void abort() noexcept {
    if (comm_ == nullptr) return;
    aborted_ = true;
    if (const ncclResult_t rc = api().ncclCommAbort(comm_); rc != ncclSuccess) {
      std::fprintf(stderr, "collbench: warning: ncclCommAbort(%s) failed: %s\n", label_.c_str(),
                   api().ncclGetErrorString(rc));
    }
    comm_ = nullptr;
  }
  [[nodiscard]] bool aborted() const { return aborted_; }

  // In-switch capability facts of this communicator's ranks (stage 1 of nvls_host.hpp), NCCL's
  // LSA team once probe_lsa() read it, and the device communicator's fate (cb-multimem). Built
  // once per communicator (and again after probe_lsa() or probe_multimem() adds to it).
  [[nodiscard]] const InSwitchProbe& probe() const;
  // in_switch_waiver(algo, collective, dtype, redop, probe()), remembered per communicator, so
  // that a cb-multimem launch inside the timed region only looks its verdict up.
  [[nodiscard]] const std::optional<std::string>& in_switch_verdict(std::string_view algo, std::string_view collective,
                                                                    Dtype dtype, Redop redop) const;
  // NCCL's LSA team size (ncclTeamLsa; local), read once: the grouping of every in-switch verdict.
  void probe_lsa();
  // cb-multimem: probe_lsa(), then the device communicator created once (collective over this
  // communicator: every member must call it at the same point).
  void probe_multimem();
  [[nodiscard]] bool multimem_probed() const { return multimem_probed_; }
  [[nodiscard]] const MultimemDevComm* multimem() const { return multimem_.get(); }

 private:
  std::shared_ptr<Context> ctx_;
  CommTicket ticket_;                  // counted until this communicator is released
  std::shared_ptr<CommOwner> parent_;  // released after this one (members go after the destructor)
  ncclComm_t comm_ = nullptr;
  std::string label_;
  std::vector<int> members_;
  int rank_ = 0;
  int size_ = 1;
  bool aborted_ = false;
  bool multimem_probed_ = false;
  bool lsa_probed_ = false;
  int lsa_ranks_ = 0;
  std::optional<std::string> devcomm_error_;
  std::unique_ptr<MultimemDevComm> multimem_;
  // Caches of probe() and in_switch_verdict(), cleared by probe_lsa() and probe_multimem().
  mutable std::optional<InSwitchProbe> probe_;
  mutable std::map<std::tuple<std::string, Dtype, Redop, std::string>, std::optional<std::string>> verdicts_;
};

// Device memory of one kind (--buffers), with its NCCL registrations.
class DeviceBuffer final : public Buffer {
 public:
  DeviceBuffer(std::shared_ptr<Context> ctx, std::size_t bytes);
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  ~DeviceBuffer() override;
  void* data() override { return ptr_; }
  [[nodiscard]] std::size_t bytes() const override { return bytes_; }

  void attach_all();  // registers with every live communicator
  void register_with(CommOwner& comm);
  void forget(const CommOwner& comm, bool deregister) noexcept;
  // Whether `p` points into this buffer (its registered extent), and its symmetric window on `comm`.
  [[nodiscard]] bool contains(const void* p) const {
    const auto* b = static_cast<const char*>(ptr_);
    const auto* q = static_cast<const char*>(p);
    return q >= b && q < b + alloc_bytes_;
  }
  [[nodiscard]] std::size_t offset_of(const void* p) const {
    return static_cast<std::size_t>(static_cast<const char*>(p) - static_cast<const char*>(ptr_));
  }
  [[nodiscard]] ncclWindow_t window_on(const CommOwner& comm) const {
    for (const auto& r : regs_) {
      if (r.comm == &comm) return r.window;
    }
    return nullptr;
  }

 private:
  struct Registration {
    CommOwner* comm = nullptr;
    void* handle = nullptr;         // ncclCommRegister
    ncclWindow_t window = nullptr;  // ncclCommWindowRegister
  };
  std::shared_ptr<Context> ctx_;
  BufferKind kind_;
  void* ptr_ = nullptr;
  std::size_t bytes_ = 0;
  std::size_t alloc_bytes_ = 0;
  std::vector<Registration> regs_;
};

// True once request_abort() was called (nccl_backend.hpp).
bool abort_requested() noexcept;

// Every communicator is created in blocking mode (docs/nccl-backend.md), and with splitShare
// where the loaded NCCL (`runtime_version`) has it (nccl_split_share) and `share` asks for it
// (NCCL decides by the parent's setting: the world's is Context::share_splits, each split's on):
// make_config's ncclConfig_t, created under comm_creation_env (nccl_host.hpp).
ncclConfig_t make_config(const char* name, int runtime_version = 0, bool share = true);

// Enqueues the dissemination barrier (nccl_host.hpp dissemination_rounds) over `owner` on
// `stream`, one int32 sent from slots[0] and received into slots[1] per round; not waited for.
void enqueue_dissemination_barrier(const CommOwner& owner, void* slots, cudaStream_t stream);

// Takes ownership of a new communicator (aborting it if that fails) and registers the live
// buffers with it.
std::shared_ptr<CommOwner> adopt(const std::shared_ptr<Context>& ctx, ncclComm_t comm, std::string label,
                                 std::vector<int> members, std::shared_ptr<CommOwner> parent = nullptr);

// ncclCommSplit(parent, color, key), sharing the parent's resources (make_config), adopted with
// `members` (the new communicator's world ranks in its rank order) and kept by its child.
// Collective over `parent`: every rank of it calls with its own colour and key.
std::shared_ptr<CommOwner> split_comm(const std::shared_ptr<Context>& ctx, const std::shared_ptr<CommOwner>& parent,
                                      int color, int key, std::vector<int> members, const std::string& label);

std::string env_or_empty(const char* name);

}  // namespace collbench::backend::nccl
