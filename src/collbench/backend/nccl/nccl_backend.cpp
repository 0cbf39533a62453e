// NCCL backend implementation (host code; GPU needed at run time, not at build time).
//
// Shape: one Context per backend instance holds the device, the single CUDA stream every
// operation of this process is issued on, the sync event the timer reads, and the lists of
// live NCCL communicators and device buffers (registered and symmetric buffers carry one
// registration per communicator, made and released as either side comes and goes).
// Communicators, buffers and timers keep the Context alive through shared_ptr, so any
// destruction order is safe.
#include "collbench/backend/nccl/nccl_backend.hpp"

#include <cuda_runtime.h>
#include <fmt/format.h>
#include <mpi.h>
#include <nccl.h>
#include <sched.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <type_traits>
#include <vector>

#include "collbench/backend/mpi/mpi_backend.hpp"
#include "collbench/backend/mpi/mpi_check.hpp"
#include "collbench/backend/nccl/device_kernels.hpp"
#include "collbench/backend/nccl/gpu_info.hpp"
#include "collbench/backend/nccl/gpu_loads.hpp"
#include "collbench/backend/nccl/multimem_kernels.hpp"
#include "collbench/backend/nccl/nccl_check.hpp"
#include "collbench/backend/nccl/nccl_host.hpp"
#include "collbench/backend/nccl/nccl_resources.hpp"
#include "collbench/core/launcher.hpp"
#include "collbench/backend/nccl/nvls_host.hpp"
#include "collbench/core/error.hpp"

namespace collbench::backend {
namespace nccl {
namespace {

// nccl_host.hpp restates NCCL's enum values so that CPU tests can check the mapping without
// nccl.h; these asserts keep the two in step.
static_assert(kNcclInt32 == ncclInt32 && kNcclInt64 == ncclInt64 && kNcclFloat16 == ncclFloat16 &&
              kNcclFloat32 == ncclFloat32 && kNcclFloat64 == ncclFloat64 && kNcclBfloat16 == ncclBfloat16);
#if NCCL_VERSION_CODE >= NCCL_VERSION(2, 24, 0)
static_assert(kNcclFloat8e4m3 == ncclFloat8e4m3 && kNcclFloat8e5m2 == ncclFloat8e5m2);
#endif
static_assert(nccl_redop_code(Redop::sum) == ncclSum && nccl_redop_code(Redop::prod) == ncclProd &&
              nccl_redop_code(Redop::max) == ncclMax && nccl_redop_code(Redop::min) == ncclMin);
static_assert(nccl_version_code(NCCL_MAJOR, NCCL_MINOR, NCCL_PATCH) == NCCL_VERSION_CODE);
static_assert(std::is_trivially_copyable_v<hd::Segment> && std::is_trivially_copyable_v<hd::PatternParams>);

std::atomic<bool> g_abort_requested{false};

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
  Progress progress = Progress::spin;
  AlgoSettings algo;
  BufferKind buffers = BufferKind::plain;
  MpiCommHandle mpi;  // private duplicate of MPI_COMM_WORLD (unique id, size agreement)
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
// when it is destroyed during exception unwinding (finalising would wait for peers).
class CommOwner {
 public:
  // `members`: the world rank of each rank of this communicator, in its rank order.
  CommOwner(std::shared_ptr<Context> ctx, ncclComm_t comm, std::string label, std::vector<int> members)
      : ctx_(std::move(ctx)), comm_(comm), label_(std::move(label)), members_(std::move(members)) {
    CB_CHECK_NCCL_COMM(comm_, ncclCommUserRank(comm_, &rank_));
    CB_CHECK_NCCL_COMM(comm_, ncclCommCount(comm_, &size_));
    ctx_->comms.push_back(this);
  }
  CommOwner(const CommOwner&) = delete;
  CommOwner& operator=(const CommOwner&) = delete;
  ~CommOwner();

  [[nodiscard]] ncclComm_t get() const { return comm_; }
  [[nodiscard]] int rank() const { return rank_; }
  [[nodiscard]] int size() const { return size_; }
  [[nodiscard]] const std::string& label() const { return label_; }
  // Registers the buffers that already exist (symmetric: collective over this communicator).
  void attach_buffers();
  void abort() noexcept {
    if (comm_ == nullptr) return;
    aborted_ = true;
    if (const ncclResult_t rc = ncclCommAbort(comm_); rc != ncclSuccess) {
      std::fprintf(stderr, "collbench: warning: ncclCommAbort(%s) failed: %s\n", label_.c_str(),
                   ncclGetErrorString(rc));
    }
    comm_ = nullptr;
  }
  [[nodiscard]] bool aborted() const { return aborted_; }

  // In-switch capability facts of this communicator's ranks (stage 1 of nvls_host.hpp), plus
  // what cb-multimem learnt here: NCCL's LSA team and the device communicator's fate.
  [[nodiscard]] InSwitchProbe probe() const;
  // cb-multimem: NCCL's LSA team size is read and the device communicator created once
  // (collective over this communicator: every member must call it at the same point).
  void probe_multimem();
  [[nodiscard]] const MultimemDevComm* multimem() const { return multimem_.get(); }

 private:
  std::shared_ptr<Context> ctx_;
  ncclComm_t comm_ = nullptr;
  std::string label_;
  std::vector<int> members_;
  int rank_ = 0;
  int size_ = 1;
  bool aborted_ = false;
  bool multimem_probed_ = false;
  int lsa_ranks_ = 0;
  std::optional<std::string> devcomm_error_;
  std::unique_ptr<MultimemDevComm> multimem_;
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

CommOwner::~CommOwner() {
  const bool failing =
      failure_seen() || aborted_ || std::uncaught_exceptions() > 0 || g_abort_requested.load(std::memory_order_relaxed);
  // The device communicator goes first (it lives on the communicator); an aborted communicator
  // has taken it down already.
  if (multimem_ && (failing || comm_ == nullptr)) multimem_->forget();
  multimem_.reset();
  for (DeviceBuffer* b : ctx_->live_buffers) b->forget(*this, !failing && comm_ != nullptr);
  std::erase(ctx_->comms, this);
  if (comm_ == nullptr) return;
  if (failing) {
    abort();
    return;
  }
  ncclResult_t rc = ncclCommFinalize(comm_);
  if (rc == ncclInProgress) rc = wait_in_progress(comm_);
  if (rc == ncclSuccess) rc = ncclCommDestroy(comm_);
  if (rc != ncclSuccess) {
    std::fprintf(stderr, "collbench: warning: releasing NCCL communicator %s failed: %s; aborting it\n", label_.c_str(),
                 ncclGetErrorString(rc));
    (void)ncclCommAbort(comm_);
  }
  comm_ = nullptr;
}

void CommOwner::attach_buffers() {
  for (DeviceBuffer* b : ctx_->live_buffers) b->register_with(*this);
}

DeviceBuffer::DeviceBuffer(std::shared_ptr<Context> ctx, std::size_t bytes)
    : ctx_(std::move(ctx)), kind_(ctx_->buffers), bytes_(bytes) {
  alloc_bytes_ = bytes == 0 ? 1 : bytes;
  if (kind_ == BufferKind::symmetric) {
    // Every rank registers the same window size (collective: all ranks allocate in the same order).
    unsigned long long mine = alloc_bytes_;
    unsigned long long most = 0;
    CB_CHECK_MPI(MPI_Allreduce(&mine, &most, 1, MPI_UNSIGNED_LONG_LONG, MPI_MAX, ctx_->mpi.get()));
    alloc_bytes_ = symmetric_bytes(static_cast<std::size_t>(most));
  }
  if (kind_ == BufferKind::plain) {
    CB_CHECK_CUDA(cudaMalloc(&ptr_, alloc_bytes_));
  } else {
    CB_CHECK_NCCL(ncclMemAlloc(&ptr_, alloc_bytes_));
  }
  // Poison (0xff: NaN in every float type, -1 in the integer types, never an expected value), so
  // that an operation that leaves its output untouched cannot pass verification on stale data.
  if (const cudaError_t rc = cudaMemsetAsync(ptr_, 0xff, alloc_bytes_, ctx_->s()); rc != cudaSuccess) {
    if (kind_ == BufferKind::plain) {
      (void)cudaFree(ptr_);
    } else {
      (void)ncclMemFree(ptr_);
    }
    throw_cuda_error(rc, "cudaMemsetAsync(buffer, 0xff)", __FILE__, __LINE__);
  }
  ctx_->live_buffers.push_back(this);
}

DeviceBuffer::~DeviceBuffer() {
  const bool failing = failure_seen() || std::uncaught_exceptions() > 0;
  ctx_->wait_quietly();  // the stream may still use this memory
  while (!regs_.empty()) forget(*regs_.back().comm, !failing && !regs_.back().comm->aborted());
  std::erase(ctx_->live_buffers, this);
  if (kind_ == BufferKind::plain) {
    if (const cudaError_t rc = cudaFree(ptr_); rc != cudaSuccess) report_release_failure("cudaFree", rc);
  } else if (const ncclResult_t rc = ncclMemFree(ptr_); rc != ncclSuccess) {
    std::fprintf(stderr, "collbench: warning: ncclMemFree failed: %s\n", ncclGetErrorString(rc));
  }
}

void DeviceBuffer::attach_all() {
  for (CommOwner* c : ctx_->comms) register_with(*c);
}

void DeviceBuffer::register_with(CommOwner& comm) {
  if (kind_ == BufferKind::plain) return;
  Registration r;
  r.comm = &comm;
  if (kind_ == BufferKind::registered) {
    CB_CHECK_NCCL_COMM(comm.get(), ncclCommRegister(comm.get(), ptr_, alloc_bytes_, &r.handle));
  } else {
    CB_CHECK_NCCL_COMM(comm.get(),
                       ncclCommWindowRegister(comm.get(), ptr_, alloc_bytes_, &r.window, NCCL_WIN_COLL_SYMMETRIC));
    if (r.window == nullptr) {
      throw InputError(fmt::format(
          "--buffers symmetric: NCCL did not register a symmetric window on communicator {} (symmetric memory needs "
          "CUDA VMM/cuMem support and all-peer CUDA P2P, NCCL_WIN_ENABLE=1, NCCL_CUMEM_ENABLE=1); use --buffers "
          "registered or plain",
          comm.label()));
    }
  }
  regs_.push_back(r);
}

void DeviceBuffer::forget(const CommOwner& comm, bool deregister) noexcept {
  for (auto it = regs_.begin(); it != regs_.end(); ++it) {
    if (it->comm != &comm) continue;
    if (deregister) {
      ncclResult_t rc = ncclSuccess;
      if (it->window != nullptr) rc = ncclCommWindowDeregister(comm.get(), it->window);
      if (it->handle != nullptr) rc = ncclCommDeregister(comm.get(), it->handle);
      if (rc == ncclInProgress) rc = wait_in_progress(comm.get());
      if (rc != ncclSuccess) {
        std::fprintf(stderr, "collbench: warning: deregistering a buffer from %s failed: %s\n", comm.label().c_str(),
                     ncclGetErrorString(rc));
      }
    }
    regs_.erase(it);
    return;
  }
}

void Context::abort_all() noexcept {
  mark_failure();
  for (CommOwner* c : comms) c->abort();
}

void Context::check_async_errors() {
  if (g_abort_requested.load(std::memory_order_relaxed)) {
    abort_all();
    throw RuntimeFailure(
        "NCCL operations aborted on request (watchdog): every communicator was aborted with ncclCommAbort");
  }
  for (CommOwner* c : comms) {
    if (c->get() == nullptr) continue;
    ncclResult_t async = ncclSuccess;
    const ncclResult_t rc = ncclCommGetAsyncError(c->get(), &async);
    if (rc != ncclSuccess) async = rc;
    if (async != ncclSuccess && async != ncclInProgress) {
      const std::string text = nccl_error_text(async, c->get());
      abort_all();
      throw RuntimeFailure(fmt::format("asynchronous NCCL error on communicator {} (rank {} of {}): {}", c->label(),
                                       c->rank(), c->size(), text));
    }
  }
}

void Context::synchronize() {
  CB_CHECK_CUDA(cudaEventRecord(sync_event->get(), s()));
  ++sync_generation;
  unsigned spins = 0;
  for (;;) {
    const cudaError_t q = cudaEventQuery(sync_event->get());
    if (q == cudaSuccess) break;
    if (q != cudaErrorNotReady) throw_cuda_error(q, "cudaEventQuery(sync)", __FILE__, __LINE__);
    if ((++spins & 0x3ffu) == 0) check_async_errors();
    if (progress == Progress::yield) sched_yield();
  }
  check_async_errors();
}

// Every communicator is created in blocking mode, said explicitly (docs/nccl-backend.md): NCCL
// calls return when done, never ncclInProgress. NCCL lets NCCL_COMM_BLOCKING override this field
// (init.cc envConfigOverride), so creation also runs under comm_creation_env (nccl_host.hpp).
ncclConfig_t make_config(const char* name) {
  ncclConfig_t config = NCCL_CONFIG_INITIALIZER;
  config.commName = name;
  config.blocking = 1;
  return config;
}

std::shared_ptr<CommOwner> adopt(const std::shared_ptr<Context>& ctx, ncclComm_t comm, std::string label,
                                 std::vector<int> members) {
  std::shared_ptr<CommOwner> owner;
  try {
    owner = std::make_shared<CommOwner>(ctx, comm, std::move(label), std::move(members));
  } catch (...) {
    (void)ncclCommAbort(comm);
    throw;
  }
  owner->attach_buffers();
  return owner;
}

std::string env_or_empty(const char* name) {
  const char* v = std::getenv(name);
  return v != nullptr ? v : "";
}

InSwitchProbe CommOwner::probe() const {
  InSwitchProbe p;
  p.nccl_version = ctx_->nccl_runtime_version;
  p.nvls_enable = env_or_empty("NCCL_NVLS_ENABLE");
  p.pat_enable = env_or_empty("NCCL_PAT_ENABLE");
  for (int w : members_) {
    const auto i = static_cast<std::size_t>(w);
    p.ranks.push_back(i < ctx_->world_in_switch.size() ? ctx_->world_in_switch[i] : InSwitchRank{});
  }
  p.lsa_ranks = lsa_ranks_;
  p.devcomm_error = devcomm_error_;
  return p;
}

void CommOwner::probe_multimem() {
  if (multimem_probed_) return;
  multimem_probed_ = true;
  // ncclTeamLsa starts NCCL's symmetric-memory runtime (local) and returns an empty team when it
  // cannot. The LSA team (gcd of the ranks per NCCL node: the same on every member) must be the
  // whole communicator before a device communicator is worth asking for.
  lsa_ranks_ = lsa_team_size(get());
  if (lsa_ranks_ <= 0) lsa_ranks_ = -1;
  if (lsa_ranks_ < 2 || lsa_ranks_ != size_) return;
  const ncclResult_t rc = MultimemDevComm::create(get(), multimem_);
  if (rc != ncclSuccess) devcomm_error_ = nccl_error_text(rc, get());
}

// ---- communicator ------------------------------------------------------------------------------

class NcclComm final : public Comm {
 public:
  NcclComm(std::shared_ptr<Context> ctx, std::shared_ptr<CommOwner> owner)
      : ctx_(std::move(ctx)), owner_(std::move(owner)) {}
  NcclComm(const NcclComm&) = delete;
  NcclComm& operator=(const NcclComm&) = delete;
  ~NcclComm() override { ctx_->wait_quietly(); }  // scratch may still be in use

  [[nodiscard]] int rank() const override { return owner_->rank(); }
  [[nodiscard]] int size() const override { return owner_->size(); }
  [[nodiscard]] CommOwner& owner() const { return *owner_; }

  void allreduce(const void* send, void* recv, std::size_t count, Dtype dtype, Redop redop) override {
    if (multimem_algo()) {
      const MultimemDevComm& mm = multimem("allreduce", dtype, redop);
      const WindowRef in = window_of(send, "send");
      const WindowRef out = window_of(recv, "receive");
      mm.allreduce(in.window, in.offset, out.window, out.offset, count, dtype, op_stream());
      last_op_ = NcclOp::allreduce;
      return;
    }
    const ncclDataType_t dt = data_type(dtype, true);
    check_collective(NcclOp::allreduce, CB_CALL(ncclAllReduce(send, recv, count, dt, red_op(redop), c(), op_stream())));
    last_op_ = NcclOp::allreduce;
  }

  // In place (send == recv, the full n*recvcount input): NCCL's in-place form is
  // recvbuff = sendbuff + rank*recvcount, so the result lands at that offset.
  void reduce_scatter(const void* send, void* recv, std::size_t recvcount, Dtype dtype, Redop redop) override {
    void* out = recv;
    if (send == recv) out = static_cast<char*>(recv) + reduce_scatter_in_place_offset(recvcount) * dtype_size(dtype);
    if (multimem_algo()) {
      const MultimemDevComm& mm = multimem("reducescatter", dtype, redop);
      const WindowRef in = window_of(send, "send");
      mm.reduce_scatter(in.window, in.offset, out, recvcount, dtype, op_stream());
      last_op_ = NcclOp::reducescatter;
      return;
    }
    const ncclDataType_t dt = data_type(dtype, true);
    check_collective(NcclOp::reducescatter,
                     CB_CALL(ncclReduceScatter(send, out, recvcount, dt, red_op(redop), c(), op_stream())));
    last_op_ = NcclOp::reducescatter;
  }

  [[nodiscard]] std::size_t reduce_scatter_in_place_offset(std::size_t recvcount) const override {
    return static_cast<std::size_t>(rank()) * recvcount;
  }

  // In place when send == recv + rank*sendcount (NCCL's and the interface's convention).
  void allgather(const void* send, void* recv, std::size_t sendcount, Dtype dtype) override {
    if (multimem_algo()) {
      const MultimemDevComm& mm = multimem("allgather", dtype, Redop::sum);
      const WindowRef out = window_of(recv, "receive");
      mm.allgather(send, out.window, out.offset, sendcount, dtype, op_stream());
      last_op_ = NcclOp::allgather;
      return;
    }
    check_collective(NcclOp::allgather,
                     CB_CALL(ncclAllGather(send, recv, sendcount, data_type(dtype, false), c(), op_stream())));
    last_op_ = NcclOp::allgather;
  }

  void alltoall(const void* send, void* recv, std::size_t count_per_peer, Dtype dtype) override {
    const ncclDataType_t dt = data_type(dtype, false);
    const std::size_t elem = dtype_size(dtype);
    const std::size_t total_bytes = count_per_peer * elem * static_cast<std::size_t>(size());
    const void* src = send;
    if (send == recv && size() > 1) {
      // NCCL's all-to-all runs as concurrent sends and receives on the same blocks, so in place
      // it would race: stage the input through scratch (the copy is part of the measured time).
      void* staged = scratch_.reserve(total_bytes);
      CB_CHECK_CUDA(cudaMemcpyAsync(staged, send, total_bytes, cudaMemcpyDeviceToDevice, op_stream()));
      src = staged;
    }
    if (ctx_->nccl_runtime_version >= kNcclAlltoAllVersion) {
      CB_CHECK_NCCL_COMM(c(), ncclAlltoAll(src, recv, count_per_peer, dt, c(), op_stream()));
    } else {
      Group group(c());
      for (int peer = 0; peer < size(); ++peer) {
        const std::size_t off = static_cast<std::size_t>(peer) * count_per_peer * elem;
        CB_CHECK_NCCL_COMM(c(),
                           ncclSend(static_cast<const char*>(src) + off, count_per_peer, dt, peer, c(), op_stream()));
        CB_CHECK_NCCL_COMM(c(), ncclRecv(static_cast<char*>(recv) + off, count_per_peer, dt, peer, c(), op_stream()));
      }
      group.end();
    }
    last_op_ = NcclOp::alltoall;
  }

  void alltoallv(const void* send, std::span<const std::size_t> send_counts, std::span<const std::size_t> send_displs,
                 void* recv, std::span<const std::size_t> recv_counts, std::span<const std::size_t> recv_displs,
                 Dtype dtype) override {
    const ncclDataType_t dt = data_type(dtype, false);
    const std::size_t elem = dtype_size(dtype);
    const auto ops = alltoallv_ops(rank(), size(), send_counts, send_displs, recv_counts, recv_displs);
    Group group(c());
    for (const P2pOp& op : ops) {
      if (op.send) {
        CB_CHECK_NCCL_COMM(c(), ncclSend(static_cast<const char*>(send) + op.offset_elems * elem, op.count, dt, op.peer,
                                         c(), op_stream()));
      } else {
        CB_CHECK_NCCL_COMM(
            c(), ncclRecv(static_cast<char*>(recv) + op.offset_elems * elem, op.count, dt, op.peer, c(), op_stream()));
      }
    }
    group.end();
    last_op_ = NcclOp::alltoallv;
  }

  void broadcast(const void* send, void* recv, std::size_t count, Dtype dtype, int root) override {
    check_collective(NcclOp::broadcast,
                     CB_CALL(ncclBroadcast(send, recv, count, data_type(dtype, false), root, c(), op_stream())));
    last_op_ = NcclOp::broadcast;
  }

  void sendrecv(const void* send, int send_peer, void* recv, int recv_peer, std::size_t count, Dtype dtype) override {
    const ncclDataType_t dt = data_type(dtype, false);
    Group group(c());
    CB_CHECK_NCCL_COMM(c(), ncclSend(send, count, dt, send_peer, c(), op_stream()));
    CB_CHECK_NCCL_COMM(c(), ncclRecv(recv, count, dt, recv_peer, c(), op_stream()));
    group.end();
    last_op_ = NcclOp::sendrecv;
  }

  // NCCL has no barrier: a one-element all-reduce, waited for.
  void barrier() override {
    void* flag = flag_.reserve(sizeof(std::int32_t));
    CB_CHECK_NCCL_COMM(c(), ncclAllReduce(flag, flag, 1, ncclInt32, ncclSum, c(), op_stream()));
    synchronize();
  }

  void local_copy(void* dst, const void* src, std::size_t bytes) override {
    if (bytes == 0 || dst == src) return;
    CB_CHECK_CUDA(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToDevice, op_stream()));
  }

  void synchronize() override { ctx_->synchronize(); }

  // Concurrent operations across this backend's communicators: one NCCL group (legal across
  // communicators); the results are waited for by synchronize(), as for every operation.
  [[nodiscard]] std::optional<std::string> group_waiver() const override {
    if (multimem_algo()) {
      return std::string("cb-multimem launches collbench's own kernels, which an NCCL group does not hold");
    }
    return std::nullopt;
  }
  void group_start() override {
    if (ctx_->group_open) throw RuntimeFailure("group_start: a group is already open (groups do not nest)");
    if (!ctx_->group_fork) ctx_->group_fork.emplace(cudaEventDisableTiming);
    CB_CHECK_CUDA(cudaEventRecord(ctx_->group_fork->get(), ctx_->s()));  // everything before the group
    ctx_->group_joins.clear();
    ++ctx_->group_generation;
    CB_CHECK_NCCL_COMM(c(), ncclGroupStart());
    ctx_->group_open = true;
  }
  void group_end() override {
    if (!ctx_->group_open) throw RuntimeFailure("group_end without group_start");
    ctx_->group_open = false;
    CB_CHECK_NCCL_COMM(c(), ncclGroupEnd());
    // The backend's stream waits for every communicator's stream: synchronize() and the timers,
    // which work on that stream, cover the whole group.
    for (const auto& [stream, joined] : ctx_->group_joins) {
      CB_CHECK_CUDA(cudaEventRecord(joined, stream));
      CB_CHECK_CUDA(cudaStreamWaitEvent(ctx_->s(), joined, 0));
    }
    ctx_->group_joins.clear();
  }

  // NCCL 2.28 tries its symmetric kernels before NCCL_ALGO's selection whenever both buffers are
  // symmetric windows on a one-node communicator (enqueue.cc), so on --buffers symmetric a forced
  // algorithm is not known to have run: unknown (null) rather than a guess. cb-multimem is ours.
  [[nodiscard]] std::string algo_used() const override {
    if (ctx_->buffers == BufferKind::symmetric && !multimem_algo()) return {};
    return algo_used_for(ctx_->algo, last_op_);
  }

 private:
  // ncclGroupStart/End with the End guaranteed (an exception inside a group would otherwise
  // leave this thread's NCCL group open).
  class Group {
   public:
    explicit Group(ncclComm_t comm) : comm_(comm) { CB_CHECK_NCCL_COMM(comm_, ncclGroupStart()); }
    Group(const Group&) = delete;
    Group& operator=(const Group&) = delete;
    ~Group() {
      if (open_) (void)ncclGroupEnd();
    }
    void end() {
      open_ = false;
      CB_CHECK_NCCL_COMM(comm_, ncclGroupEnd());
    }

   private:
    ncclComm_t comm_;
    bool open_ = true;
  };

  // The stream an operation goes on: the backend's, or inside a group this communicator's own,
  // forked from the backend's stream at group_start (Context::group_fork) on first use.
  cudaStream_t op_stream() {
    if (!ctx_->group_open) return ctx_->s();
    if (joined_generation_ != ctx_->group_generation) {
      if (!group_stream_) {
        group_stream_.emplace();
        group_join_.emplace(cudaEventDisableTiming);
      }
      CB_CHECK_CUDA(cudaStreamWaitEvent(group_stream_->get(), ctx_->group_fork->get(), 0));
      ctx_->group_joins.emplace_back(group_stream_->get(), group_join_->get());
      joined_generation_ = ctx_->group_generation;
    }
    return group_stream_->get();
  }

  [[nodiscard]] ncclComm_t c() const {
    if (owner_->get() == nullptr) throw RuntimeFailure("NCCL communicator " + owner_->label() + " was aborted");
    return owner_->get();
  }

  // The result of a collective that NCCL_ALGO applies to (CB_CALL: the call, its text and place).
  // With a forced algorithm NCCL answers ncclInvalidUsage at the call when it has no algorithm
  // left for it (PAT on several GPUs per node, CollNet without a plugin): backend::Unsupported,
  // which the runner waives when every rank got it; the communicator is unharmed.
  void check_collective(NcclOp op, ncclResult_t rc, const char* call, const char* file, int line) {
    if (rc == ncclInProgress) rc = wait_in_progress(c());
    if (rc == ncclSuccess) return;
    if (rc == ncclInvalidUsage && !algo_used_for(ctx_->algo, op).empty()) {
      throw Unsupported(fmt::format("NCCL refused {} with --algo {} (NCCL_ALGO={}) on communicator {}: {}",
                                    to_string(op), ctx_->algo.algo, ctx_->algo.nccl_algo, owner_->label(),
                                    nccl_error_text(rc, c())));
    }
    throw_nccl_error(rc, c(), call, file, line);
  }

  // ---- cb-multimem ----

  [[nodiscard]] bool multimem_algo() const { return ctx_->algo.algo == "cb-multimem"; }

  // The device communicator, created on first use (collective over this communicator, like the
  // collective that asks for it). InputError with the reason where it cannot run: the runner
  // asks capability_waiver() first and records such cases as waived instead.
  const MultimemDevComm& multimem(std::string_view collective, Dtype dtype, Redop redop) {
    (void)c();  // not aborted
    auto why = in_switch_waiver("cb-multimem", collective, dtype, redop, owner_->probe());
    if (!why) {
      owner_->probe_multimem();
      why = in_switch_waiver("cb-multimem", collective, dtype, redop, owner_->probe());
    }
    if (why) throw InputError(fmt::format("--algo cb-multimem on communicator {}: {}", owner_->label(), *why));
    if (owner_->multimem() == nullptr) {
      throw RuntimeFailure(fmt::format("--algo cb-multimem: no device communicator on {}", owner_->label()));
    }
    return *owner_->multimem();
  }

  struct WindowRef {
    ncclWindow_t window = nullptr;
    std::uint64_t offset = 0;
  };

  // The symmetric window on this communicator that holds `p`, and p's byte offset in it (the same
  // on every rank: windows are allocated in the same order and size everywhere).
  [[nodiscard]] WindowRef window_of(const void* p, const char* what) const {
    for (const DeviceBuffer* b : ctx_->live_buffers) {
      if (!b->contains(p)) continue;
      if (ncclWindow_t w = b->window_on(*owner_); w != nullptr) return {w, b->offset_of(p)};
      break;
    }
    throw InputError(fmt::format(
        "--algo cb-multimem: the {} buffer is not in a symmetric window registered on communicator {} (allocate it "
        "from the nccl backend with --buffers symmetric)",
        what, owner_->label()));
  }

  ncclDataType_t data_type(Dtype dtype, bool reduction) const {
    if (const auto why =
            nccl_dtype_unsupported(dtype, NCCL_VERSION_CODE, ctx_->nccl_runtime_version, ctx_->cc_major, reduction)) {
      throw InputError(*why);
    }
    return static_cast<ncclDataType_t>(nccl_dtype_code(dtype));
  }

  static ncclRedOp_t red_op(Redop redop) { return static_cast<ncclRedOp_t>(nccl_redop_code(redop)); }

  std::shared_ptr<Context> ctx_;
  std::shared_ptr<CommOwner> owner_;
  NcclOp last_op_ = NcclOp::none;
  // This communicator's stream inside groups (created on first use) and the group it joined.
  std::optional<CudaStream> group_stream_;
  std::optional<CudaEvent> group_join_;
  std::uint64_t joined_generation_ = 0;
  DeviceMemory scratch_;  // in-place all-to-all staging
  DeviceMemory flag_;     // barrier
};

// ---- timer ----------------------------------------------------------------------------------------

// CUDA events on the backend's stream. The end of an iteration is the sync event that
// Comm::synchronize() records right after the last operation (before it waits), so the host's
// wake-up latency is not counted; without a synchronize, stop() records its own event.
class CudaTimer final : public Timer {
 public:
  explicit CudaTimer(std::shared_ptr<Context> ctx) : ctx_(std::move(ctx)) {}
  void start() override {
    CB_CHECK_CUDA(cudaEventRecord(start_.get(), ctx_->s()));
    generation_ = ctx_->sync_generation;
    have_result_ = false;
    entered_ = false;
  }
  void enter() override {
    CB_CHECK_CUDA(cudaEventRecord(enter_.get(), ctx_->s()));
    entered_ = true;
  }
  void stop() override { finish(); }
  [[nodiscard]] double total_us() override {
    finish();
    return total_us_;
  }
  [[nodiscard]] double inside_us() override {
    finish();
    return inside_us_;
  }

 private:
  void finish() {
    if (have_result_) return;
    cudaEvent_t end = ctx_->sync_event->get();
    if (ctx_->sync_generation == generation_) {  // no synchronize since start(): record and wait
      CB_CHECK_CUDA(cudaEventRecord(stop_.get(), ctx_->s()));
      CB_CHECK_CUDA(cudaEventSynchronize(stop_.get()));
      end = stop_.get();
    }
    float total_ms = 0.0f;
    float inside_ms = 0.0f;
    CB_CHECK_CUDA(cudaEventElapsedTime(&total_ms, start_.get(), end));
    CB_CHECK_CUDA(cudaEventElapsedTime(&inside_ms, entered_ ? enter_.get() : start_.get(), end));
    total_us_ = static_cast<double>(total_ms) * 1e3;
    inside_us_ = static_cast<double>(inside_ms) * 1e3;
    have_result_ = true;
  }

  std::shared_ptr<Context> ctx_;
  CudaEvent start_, enter_, stop_;
  std::uint64_t generation_ = 0;
  bool have_result_ = false;
  bool entered_ = false;
  double total_us_ = 0.0;
  double inside_us_ = 0.0;
};

// ---- backend --------------------------------------------------------------------------------------

std::string host_name() {
  std::array<char, 256> name{};
  gethostname(name.data(), name.size() - 1);
  return name.data();
}

// "k=v\n" lines <-> map (per-rank facts travel over MPI as text).
std::string serialize(const std::map<std::string, std::string>& m) {
  std::string out;
  for (const auto& [k, v] : m) out += k + "=" + v + "\n";
  return out;
}

std::map<std::string, std::string> deserialize(std::string_view text) {
  std::map<std::string, std::string> m;
  while (!text.empty()) {
    const auto nl = text.find('\n');
    const std::string_view line = text.substr(0, nl);
    if (const auto eq = line.find('='); eq != std::string_view::npos) {
      m.emplace(std::string(line.substr(0, eq)), std::string(line.substr(eq + 1)));
    }
    if (nl == std::string_view::npos) break;
    text.remove_prefix(nl + 1);
  }
  return m;
}

std::vector<std::string> allgather_strings(const std::string& mine, MPI_Comm comm, int size) {
  int len = static_cast<int>(mine.size());
  std::vector<int> lens(static_cast<std::size_t>(size));
  CB_CHECK_MPI(MPI_Allgather(&len, 1, MPI_INT, lens.data(), 1, MPI_INT, comm));
  std::vector<int> displs(static_cast<std::size_t>(size));
  int total = 0;
  for (std::size_t i = 0; i < lens.size(); ++i) {
    displs[i] = total;
    total += lens[i];
  }
  std::vector<char> all(static_cast<std::size_t>(std::max(total, 1)));
  CB_CHECK_MPI(MPI_Allgatherv(mine.data(), len, MPI_CHAR, all.data(), lens.data(), displs.data(), MPI_CHAR, comm));
  std::vector<std::string> out;
  for (std::size_t i = 0; i < lens.size(); ++i) {
    out.emplace_back(all.data() + displs[i], static_cast<std::size_t>(lens[i]));
  }
  return out;
}

class NcclBackend final : public Backend, public DevicePatterns {
 public:
  explicit NcclBackend(const BackendOptions& options);
  ~NcclBackend() override {
    if (ctx_ && ctx_->stream) ctx_->wait_quietly();
  }
  NcclBackend(const NcclBackend&) = delete;
  NcclBackend& operator=(const NcclBackend&) = delete;

  [[nodiscard]] std::string name() const override { return "nccl"; }

  [[nodiscard]] std::unique_ptr<Buffer> allocate(std::size_t bytes) override {
    auto buffer = std::make_unique<DeviceBuffer>(ctx_, bytes);
    buffer->attach_all();
    return buffer;
  }

  void upload(Buffer& dst, const void* host, std::size_t bytes) override {
    if (bytes == 0) return;
    CB_CHECK_CUDA(cudaMemcpyAsync(dst.data(), host, bytes, cudaMemcpyHostToDevice, ctx_->s()));
    ctx_->synchronize();
  }

  void download(void* host, Buffer& src, std::size_t bytes) override {
    if (bytes == 0) return;
    CB_CHECK_CUDA(cudaMemcpyAsync(host, src.data(), bytes, cudaMemcpyDeviceToHost, ctx_->s()));
    ctx_->synchronize();
  }

  [[nodiscard]] std::unique_ptr<Comm> world() override { return std::make_unique<NcclComm>(ctx_, root_); }

  [[nodiscard]] std::unique_ptr<Comm> split(int color, int key) override {
    ncclComm_t child = nullptr;
    const std::string label = fmt::format("collbench-split-c{}", color);
    ncclConfig_t config = make_config(label.c_str());
    {
      ScopedEnv env(comm_creation_env(ctx_->algo));
      CB_CHECK_NCCL_COMM(child, ncclCommSplit(root_->get(), color, key, &child, &config));
    }
    if (child == nullptr) throw RuntimeFailure(fmt::format("ncclCommSplit(color {}) returned no communicator", color));
    return std::make_unique<NcclComm>(ctx_, adopt(ctx_, child, label, split_members(color, key)));
  }

  [[nodiscard]] std::unique_ptr<Timer> timer() override { return std::make_unique<CudaTimer>(ctx_); }

  [[nodiscard]] std::map<std::string, std::string> provenance() const override { return provenance_; }

  // Overlap mode: the load on its own stream of this rank's GPU (gpu_loads.hpp).
  [[nodiscard]] std::unique_ptr<overlap::ComputeLoad> make_compute(const overlap::ComputeSpec& spec) override {
    CB_CHECK_CUDA(cudaSetDevice(ctx_->device));
    return make_gpu_load(spec);
  }

  // DevicePatterns
  void fill(void* dst, std::size_t total_elems, const hd::PatternParams& params,
            std::span<const hd::Segment> segments) override {
    const std::size_t bytes = total_elems * dtype_size(params.dtype);
    if (bytes > 0) CB_CHECK_CUDA(cudaMemsetAsync(dst, 0, bytes, ctx_->s()));
    const hd::Segment* dev = upload_segments(segments);
    launch_fill(dst, params, dev, static_cast<int>(segments.size()), longest(segments), ctx_->s());
  }

  std::uint64_t count_wrong(const void* src, const hd::PatternParams& params,
                            std::span<const hd::Segment> segments) override {
    auto* counter = static_cast<unsigned long long*>(counter_.reserve(sizeof(unsigned long long)));
    CB_CHECK_CUDA(cudaMemsetAsync(counter, 0, sizeof(unsigned long long), ctx_->s()));
    const hd::Segment* dev = upload_segments(segments);
    launch_count_wrong(src, params, dev, static_cast<int>(segments.size()), longest(segments), counter, ctx_->s());
    unsigned long long wrong = 0;
    CB_CHECK_CUDA(cudaMemcpyAsync(&wrong, counter, sizeof wrong, cudaMemcpyDeviceToHost, ctx_->s()));
    ctx_->synchronize();
    return wrong;
  }

  double read(const void* src, std::size_t index, Dtype dtype) override {
    alignas(8) std::array<unsigned char, 8> tmp{};
    const std::size_t elem = dtype_size(dtype);
    CB_CHECK_CUDA(cudaMemcpyAsync(tmp.data(), static_cast<const char*>(src) + index * elem, elem,
                                  cudaMemcpyDeviceToHost, ctx_->s()));
    ctx_->synchronize();
    return hd::load_value(tmp.data(), 0, dtype);
  }

  void write(void* dst, std::size_t index, Dtype dtype, double value) override {
    alignas(8) std::array<unsigned char, 8> tmp{};
    hd::store_value(tmp.data(), 0, dtype, value);
    const std::size_t elem = dtype_size(dtype);
    CB_CHECK_CUDA(
        cudaMemcpyAsync(static_cast<char*>(dst) + index * elem, tmp.data(), elem, cudaMemcpyHostToDevice, ctx_->s()));
    ctx_->synchronize();  // tmp goes out of scope
  }

 private:
  static std::uint64_t longest(std::span<const hd::Segment> segments) {
    std::uint64_t m = 0;
    for (const auto& s : segments) m = std::max<std::uint64_t>(m, s.count);
    return m;
  }

  const hd::Segment* upload_segments(std::span<const hd::Segment> segments) {
    const std::size_t bytes = std::max<std::size_t>(segments.size_bytes(), sizeof(hd::Segment));
    if (bytes > segments_.bytes()) ctx_->synchronize();  // the old array may still be read
    void* dev = segments_.reserve(bytes);
    if (!segments.empty()) {
      // Pageable source: the call returns once the data is staged, so `segments` may go away.
      CB_CHECK_CUDA(cudaMemcpyAsync(dev, segments.data(), segments.size_bytes(), cudaMemcpyHostToDevice, ctx_->s()));
    }
    return static_cast<const hd::Segment*>(dev);
  }

  void select_device(const BackendOptions& options);
  void create_world();
  void gather_provenance();

 public:
  // See capability_waiver() in nccl_backend.hpp (in-switch algorithms, and PAT's node rule).
  std::optional<std::string> in_switch_case_waiver(NcclComm& comm, std::string_view collective, Dtype dtype,
                                                   Redop redop) {
    const std::string& algo = ctx_->algo.algo;
    if (algo == "pat") return agree(pat_waiver(collective, comm.owner().probe()));
    if (!is_in_switch_algo(algo)) return std::nullopt;
    CommOwner& owner = comm.owner();
    auto why = agree(in_switch_waiver(algo, collective, dtype, redop, owner.probe()));
    if (why || algo != "cb-multimem") return why;
    owner.probe_multimem();  // collective over the communicator, once
    return agree(in_switch_waiver(algo, collective, dtype, redop, owner.probe()));
  }

 private:
  // One verdict for every rank of the world (each rank may judge a different communicator under
  // --scope domain): the reason of the lowest failing world rank, or nullopt when none failed.
  std::optional<std::string> agree(const std::optional<std::string>& mine) const {
    const int me = mine ? ctx_->world_rank : ctx_->world_size;
    int first = 0;
    CB_CHECK_MPI(MPI_Allreduce(&me, &first, 1, MPI_INT, MPI_MIN, ctx_->mpi.get()));
    if (first == ctx_->world_size) return std::nullopt;
    std::string text = ctx_->world_rank == first ? *mine : std::string();
    int len = static_cast<int>(text.size());
    CB_CHECK_MPI(MPI_Bcast(&len, 1, MPI_INT, first, ctx_->mpi.get()));
    text.resize(static_cast<std::size_t>(len));
    CB_CHECK_MPI(MPI_Bcast(text.data(), len, MPI_CHAR, first, ctx_->mpi.get()));
    return first == 0 ? text : fmt::format("on world rank {}'s communicator: {}", first, text);
  }

  // The world ranks of the communicator ncclCommSplit(color, key) makes on this rank, in its
  // rank order (NCCL orders by key, then by parent rank). Collective over the world.
  std::vector<int> split_members(int color, int key) const {
    const std::array<int, 2> mine{color, key};
    std::vector<int> all(2 * static_cast<std::size_t>(ctx_->world_size));
    CB_CHECK_MPI(MPI_Allgather(mine.data(), 2, MPI_INT, all.data(), 2, MPI_INT, ctx_->mpi.get()));
    std::vector<std::pair<int, int>> same;  // (key, world rank)
    for (int r = 0; r < ctx_->world_size; ++r) {
      const auto i = 2 * static_cast<std::size_t>(r);
      if (all[i] == color) same.emplace_back(all[i + 1], r);
    }
    std::sort(same.begin(), same.end());
    std::vector<int> members;
    for (const auto& [k, r] : same) members.push_back(r);
    return members;
  }

  std::shared_ptr<Context> ctx_;
  std::shared_ptr<CommOwner> root_;
  std::map<std::string, std::string> provenance_;
  DeviceMemory segments_;
  DeviceMemory counter_;
};

NcclBackend::NcclBackend(const BackendOptions& options) : ctx_(std::make_shared<Context>()) {
  int initialized = 0;
  MPI_Initialized(&initialized);
  if (initialized == 0) throw RuntimeFailure("the nccl backend needs MPI to be initialised (it broadcasts NCCL's id)");
  MPI_Comm dup = MPI_COMM_NULL;
  CB_CHECK_MPI(MPI_Comm_dup(MPI_COMM_WORLD, &dup));
  ctx_->mpi = MpiCommHandle(dup);
  MPI_Comm_rank(dup, &ctx_->world_rank);
  MPI_Comm_size(dup, &ctx_->world_size);
  ctx_->progress = options.progress;

  // Options first: pure checks with the same outcome on every rank.
  CB_CHECK_NCCL(ncclGetVersion(&ctx_->nccl_runtime_version));
  ctx_->algo = algo_settings(options.algo, ctx_->nccl_runtime_version);
  ctx_->buffers = parse_buffer_kind_for_nccl(options.buffers, ctx_->algo);
  if (ctx_->buffers == BufferKind::symmetric && ctx_->nccl_runtime_version < kNcclWindowVersion) {
    throw InputError(
        fmt::format("--buffers symmetric needs NCCL >= 2.27 (ncclCommWindowRegister); the loaded libnccl is {}",
                    format_nccl_version(ctx_->nccl_runtime_version)));
  }

  select_device(options);
  ctx_->stream.emplace();
  ctx_->sync_event.emplace(cudaEventDefault);
  gather_provenance();
  create_world();
}

// What each rank of this host (`local`) sees of its GPUs: CUDA_VISIBLE_DEVICES, how many, and the
// UUID of its device 0 (core/launcher.hpp RankGpuView). `count`: this rank's cudaGetDeviceCount,
// -1 when it failed. Collective over `local`.
std::vector<RankGpuView> gpu_views_on_host(MPI_Comm local, int count) {
  struct Wire {
    std::array<char, 256> visible{};
    std::array<char, 64> id{};
    int count = -1;
  };
  Wire mine;
  mine.count = count;
  if (const char* v = std::getenv("CUDA_VISIBLE_DEVICES"))
    std::snprintf(mine.visible.data(), mine.visible.size(), "%s", v);
  cudaDeviceProp prop{};
  if (count == 1 && cudaGetDeviceProperties(&prop, 0) == cudaSuccess) {
    unsigned char uuid[16];
    std::memcpy(uuid, prop.uuid.bytes, sizeof uuid);
    std::snprintf(mine.id.data(), mine.id.size(), "%s", format_gpu_uuid(uuid).c_str());
  }
  (void)cudaGetLastError();
  int ranks = 1;
  MPI_Comm_size(local, &ranks);
  std::vector<Wire> all(static_cast<std::size_t>(ranks));
  CB_CHECK_MPI(MPI_Allgather(&mine, static_cast<int>(sizeof(Wire)), MPI_BYTE, all.data(),
                             static_cast<int>(sizeof(Wire)), MPI_BYTE, local));
  std::vector<RankGpuView> views;
  for (const Wire& w : all) {
    views.push_back({std::string(w.visible.data(), strnlen(w.visible.data(), w.visible.size())), w.count,
                     std::string(w.id.data(), strnlen(w.id.data(), w.id.size()))});
  }
  return views;
}

// One rank per GPU, by local rank. Every rank learns whether all ranks found their GPU, so a
// machine without one fails the same way everywhere (InputError, exit 2), with the message of
// the first rank that failed (rank 0 prints it).
void NcclBackend::select_device(const BackendOptions&) {
  MPI_Comm local = MPI_COMM_NULL;
  CB_CHECK_MPI(MPI_Comm_split_type(ctx_->mpi.get(), MPI_COMM_TYPE_SHARED, ctx_->world_rank, MPI_INFO_NULL, &local));
  MpiCommHandle local_owner(local);
  MPI_Comm_rank(local, &ctx_->local_rank);
  MPI_Comm_size(local, &ctx_->ranks_on_host);

  std::string problem;
  int count = 0;
  const cudaError_t rc = cudaGetDeviceCount(&count);
  if (rc != cudaSuccess) {
    problem = fmt::format("cudaGetDeviceCount failed: {}", cuda_error_text(rc));
    (void)cudaGetLastError();
    count = -1;
  }
  // Did the launcher give each process its own GPU (each rank sees one, different GPUs)?
  const bool launcher_bound = launcher_bound_one_gpu_per_rank(gpu_views_on_host(local, count));
  const auto dev = problem.empty()
                       ? device_for_local_rank(ctx_->local_rank, ctx_->ranks_on_host, count, problem, launcher_bound)
                       : std::nullopt;
  if (dev) {
    ctx_->device = *dev;
    cudaDeviceProp prop{};
    cudaError_t rc2 = cudaSetDevice(*dev);
    if (rc2 == cudaSuccess) rc2 = cudaFree(nullptr);  // creates the context now: a busy or broken GPU fails here
    if (rc2 == cudaSuccess) rc2 = cudaGetDeviceProperties(&prop, *dev);
    if (rc2 != cudaSuccess) {
      problem = fmt::format("GPU {} cannot be used: {}", *dev, cuda_error_text(rc2));
      (void)cudaGetLastError();
    } else {
      ctx_->cc_major = prop.major;
    }
  }

  int mine = problem.empty() ? ctx_->world_size : ctx_->world_rank;
  int first = 0;
  CB_CHECK_MPI(MPI_Allreduce(&mine, &first, 1, MPI_INT, MPI_MIN, ctx_->mpi.get()));
  if (first == ctx_->world_size) return;
  std::array<char, 1024> text{};
  if (ctx_->world_rank == first) {
    const std::string message = fmt::format(
        "backend 'nccl': no usable GPU on rank {} (host {}, local rank {}): {}; the nccl backend needs one visible "
        "NVIDIA GPU per rank (use --backend mpi on machines without GPUs)",
        first, host_name(), ctx_->local_rank, problem);
    std::snprintf(text.data(), text.size(), "%s", message.c_str());
  }
  CB_CHECK_MPI(MPI_Bcast(text.data(), static_cast<int>(text.size()), MPI_CHAR, first, ctx_->mpi.get()));
  throw InputError(text.data());
}

void NcclBackend::create_world() {
  struct IdMessage {
    int rc;
    ncclUniqueId id;
  };
  IdMessage msg{};
  if (ctx_->world_rank == 0) msg.rc = static_cast<int>(ncclGetUniqueId(&msg.id));
  CB_CHECK_MPI(MPI_Bcast(&msg, static_cast<int>(sizeof msg), MPI_BYTE, 0, ctx_->mpi.get()));
  if (msg.rc != ncclSuccess) {
    throw_nccl_error(static_cast<ncclResult_t>(msg.rc), nullptr, "ncclGetUniqueId (on rank 0)", __FILE__, __LINE__);
  }
  if (ctx_->world_rank == 0 && !ctx_->algo.nccl_algo.empty()) {
    if (const char* user = std::getenv("NCCL_ALGO"); user != nullptr && ctx_->algo.nccl_algo != user) {
      std::fprintf(stderr,
                   "collbench: note: --algo %s creates its communicators with NCCL_ALGO=%s (the environment's "
                   "NCCL_ALGO=%s applies to --algo auto)\n",
                   ctx_->algo.algo.c_str(), ctx_->algo.nccl_algo.c_str(), user);
    }
  }
  ncclComm_t comm = nullptr;
  const std::string label = "collbench-world";
  ncclConfig_t config = make_config(label.c_str());
  {
    ScopedEnv env(comm_creation_env(ctx_->algo));
    CB_CHECK_NCCL_COMM(comm, ncclCommInitRankConfig(&comm, ctx_->world_size, msg.id, ctx_->world_rank, &config));
  }
  std::vector<int> members(static_cast<std::size_t>(ctx_->world_size));
  for (int r = 0; r < ctx_->world_size; ++r) members[static_cast<std::size_t>(r)] = r;
  root_ = adopt(ctx_, comm, label, std::move(members));
}

void NcclBackend::gather_provenance() {
  int runtime = 0;
  int driver = 0;
  (void)cudaRuntimeGetVersion(&runtime);
  (void)cudaDriverGetVersion(&driver);
  (void)cudaGetLastError();
  provenance_["nccl_version"] = format_nccl_version(ctx_->nccl_runtime_version);
  provenance_["nccl_version_built"] = format_nccl_version(NCCL_VERSION_CODE);
  provenance_["cuda_runtime"] = format_cuda_version(runtime);
  provenance_["cuda_driver"] = format_cuda_version(driver);
  provenance_["buffers"] = std::string(to_string(ctx_->buffers));
  provenance_["algo"] = ctx_->algo.algo;
  const char* env_algo = std::getenv("NCCL_ALGO");
  const char* env_proto = std::getenv("NCCL_PROTO");
  provenance_["nccl_algo"] =
      !ctx_->algo.nccl_algo.empty() ? ctx_->algo.nccl_algo : (env_algo != nullptr ? env_algo : "");
  provenance_["nccl_proto"] =
      !ctx_->algo.nccl_proto.empty() ? ctx_->algo.nccl_proto : (env_proto != nullptr ? env_proto : "");
  provenance_["nccl_alltoall"] =
      ctx_->nccl_runtime_version >= kNcclAlltoAllVersion ? "ncclAlltoAll" : "grouped ncclSend/ncclRecv";
  provenance_["progress"] = ctx_->progress == Progress::spin ? "spin" : "yield";

  // Per-rank GPU facts, on every rank: "rank.<r>.<key>".
  auto info = query_gpu_info(ctx_->device);
  info["local_rank"] = std::to_string(ctx_->local_rank);
  info["host"] = host_name();
  const auto all = allgather_strings(serialize(info), ctx_->mpi.get(), ctx_->world_size);
  for (std::size_t r = 0; r < all.size(); ++r) {
    for (const auto& [k, v] : deserialize(all[r])) provenance_[fmt::format("rank.{}.{}", r, k)] = v;
  }

  // In-switch capability facts per world rank (nvls_host.hpp): multicast, GPU generation, and
  // NCCL's node (host, or NVLink clique under MNNVL).
  std::vector<RankPlacementFacts> placement(all.size());
  ctx_->world_in_switch.assign(all.size(), InSwitchRank{});
  const auto get = [this](std::size_t r, const char* key) {
    const auto it = provenance_.find(fmt::format("rank.{}.{}", r, key));
    return it == provenance_.end() ? std::string() : it->second;
  };
  for (std::size_t r = 0; r < all.size(); ++r) {
    auto& f = ctx_->world_in_switch[r];
    const std::string mc = get(r, "multicast_supported");
    f.multicast = mc == "1" ? 1 : mc == "0" ? 0 : -1;
    f.cc_major = std::atoi(get(r, "compute_capability").c_str());
    placement[r] = {get(r, "host"), get(r, "fabric_state"), get(r, "fabric_cluster_uuid"), get(r, "fabric_clique_id"),
                    get(r, "fabric_handle_supported")};
  }
  const auto nodes = nccl_nodes(placement, env_or_empty("NCCL_MNNVL_ENABLE"));
  for (std::size_t r = 0; r < nodes.size(); ++r) ctx_->world_in_switch[r].node = nodes[r];
}

}  // namespace
}  // namespace nccl

std::unique_ptr<Backend> make_nccl_backend(const BackendOptions& options) {
  return std::make_unique<nccl::NcclBackend>(options);
}

namespace nccl {

DevicePatterns* device_patterns(Backend& backend) {
  return dynamic_cast<NcclBackend*>(&backend);
}

std::optional<std::string> capability_waiver(Backend& backend, Comm& comm, std::string_view collective, Dtype dtype,
                                             Redop redop) {
  auto* be = dynamic_cast<NcclBackend*>(&backend);
  auto* nc = dynamic_cast<NcclComm*>(&comm);
  if (be == nullptr || nc == nullptr) return std::nullopt;
  return be->in_switch_case_waiver(*nc, collective, dtype, redop);
}

void request_abort() noexcept {
  g_abort_requested.store(true, std::memory_order_relaxed);
}

}  // namespace nccl
}  // namespace collbench::backend
