// The NCCL backend's communicator: every Comm operation on NCCL (or on collbench's cb-multimem
// kernels), groups across communicators, and NCCL's refusals of a forced algorithm.
#include "collbench/backend/nccl/nccl_comm.hpp"

#include <fmt/format.h>

#include <cstdint>
#include <limits>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>

#include "collbench/backend/block_split.hpp"
#include "collbench/backend/nccl/nccl_check.hpp"
#include "collbench/core/error.hpp"

namespace collbench::backend::nccl {
static_assert(kNcclResultSuccess == ncclSuccess && kNcclResultInternalError == ncclInternalError &&
              kNcclResultInvalidArgument == ncclInvalidArgument && kNcclResultInvalidUsage == ncclInvalidUsage);

namespace {

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

  // The EP group's communicator: ncclCommSplit of this communicator by block (block_split.hpp),
  // sharing its resources, created on first use (outside the timed region: the MoE families ask
  // at their verification launch) and kept until this communicator is released.
  [[nodiscard]] Comm* block_level(int block_size) override {
    return cached_block(blocks_, this, size(), rank(), block_size, [&](const BlockSplit& s) {
      std::vector<int> members = block_members(owner_->members(), s, block_size);
      const std::string label = fmt::format("{}-ep{}-b{}", owner_->label(), block_size, s.color);
      return make_nccl_comm(ctx_, split_comm(ctx_, owner_, s.color, s.key, std::move(members), label));
    });
  }

  // Every operation through NCCL's function of the same name (or collbench's cb-multimem kernels):
  // the handlers below, by operation; InputError for one this backend has not.
  void run(const Operation& o) override {
    static constexpr OpTable<NcclComm> kOps{
        {NcclOp::allreduce, {&NcclComm::allreduce, nullptr}},
        {NcclOp::reducescatter, {&NcclComm::reduce_scatter, nullptr}},
        {NcclOp::allgather, {&NcclComm::allgather, nullptr}},
        {NcclOp::broadcast, {&NcclComm::broadcast, nullptr}},
        {NcclOp::alltoall, {&NcclComm::alltoall, nullptr}},
        {NcclOp::alltoallv, {&NcclComm::alltoallv, nullptr}},
        {NcclOp::sendrecv, {&NcclComm::sendrecv, nullptr}},
        {NcclOp::reduce, {&NcclComm::reduce, nullptr}},
        {NcclOp::gather, {&NcclComm::gather, nullptr}},
        {NcclOp::scatter, {&NcclComm::scatter, nullptr}},
    };
    const OpHandlers<NcclComm>* h = kOps.find(o.op);
    if (h == nullptr) throw InputError(fmt::format("the nccl backend has no {} operation", to_string(o.op)));
    (this->*h->run)(o);
  }

  [[nodiscard]] std::size_t reduce_scatter_in_place_offset(std::size_t recvcount) const override {
    return static_cast<std::size_t>(rank()) * recvcount;
  }

  // The dissemination barrier (nccl_host.hpp), waited for: point-to-point, so a forced --algo
  // without an all-reduce on this communicator does not fail it.
  void barrier() override {
    (void)c();  // not aborted
    enqueue_dissemination_barrier(*owner_, flag_.reserve(2 * sizeof(std::int32_t)), op_stream());
    synchronize();
  }

  void local_copy(void* dst, const void* src, std::size_t bytes) override {
    if (bytes == 0 || dst == src) return;
    CB_CHECK_CUDA(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToDevice, op_stream()));
  }

  // One cudaMemcpy2DAsync; row by row where a pitch passes what a 2D copy takes (INT_MAX here,
  // under cudaDevAttrMaxPitch on every current GPU).
  void local_copy_rows(void* dst, std::size_t dst_pitch, const void* src, std::size_t src_pitch, std::size_t width,
                       std::size_t rows) override {
    if (width == 0 || rows == 0) return;
    constexpr std::size_t kMaxPitch = std::numeric_limits<int>::max();
    if (dst_pitch > kMaxPitch || src_pitch > kMaxPitch)
      return Comm::local_copy_rows(dst, dst_pitch, src, src_pitch, width, rows);
    CB_CHECK_CUDA(
        cudaMemcpy2DAsync(dst, dst_pitch, src, src_pitch, width, rows, cudaMemcpyDeviceToDevice, op_stream()));
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
    CB_CHECK_NCCL_COMM(c(), api().ncclGroupStart());
    ctx_->group_open = true;
  }
  void group_end() override {
    if (!ctx_->group_open) throw RuntimeFailure("group_end without group_start");
    ctx_->group_open = false;
    CB_CHECK_NCCL_COMM(c(), api().ncclGroupEnd());
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
  // ---- the operations (operation.hpp: the fields each one reads) ----

  void allreduce(const Operation& o) {
    const void* send = o.send;
    void* recv = o.recv;
    const std::size_t count = o.count;
    const Dtype dtype = o.dtype;
    const Redop redop = o.redop;
    if (multimem_algo()) {
      const MultimemDevComm& mm = multimem("allreduce", dtype, redop);
      const WindowRef in = window_of(send, "send");
      const WindowRef out = window_of(recv, "receive");
      mm.allreduce(in.window, in.offset, out.window, out.offset, count, dtype, op_stream());
      last_op_ = NcclOp::allreduce;
      return;
    }
    const ncclDataType_t dt = data_type(dtype, true);
    check_collective(NcclOp::allreduce,
                     CB_CALL(api().ncclAllReduce(send, recv, count, dt, red_op(redop), c(), op_stream())));
    last_op_ = NcclOp::allreduce;
  }

  // In place (send == recv, the full n*recvcount input): NCCL's in-place form is
  // recvbuff = sendbuff + rank*recvcount, so the result lands at that offset.
  void reduce_scatter(const Operation& o) {
    const void* send = o.send;
    void* recv = o.recv;
    const std::size_t recvcount = o.count;
    const Dtype dtype = o.dtype;
    const Redop redop = o.redop;
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
                     CB_CALL(api().ncclReduceScatter(send, out, recvcount, dt, red_op(redop), c(), op_stream())));
    last_op_ = NcclOp::reducescatter;
  }

  // In place when send == recv + rank*sendcount (NCCL's and the interface's convention).
  void allgather(const Operation& o) {
    const void* send = o.send;
    void* recv = o.recv;
    const std::size_t sendcount = o.count;
    const Dtype dtype = o.dtype;
    if (multimem_algo()) {
      const MultimemDevComm& mm = multimem("allgather", dtype, Redop::sum);
      const WindowRef out = window_of(recv, "receive");
      mm.allgather(send, out.window, out.offset, sendcount, dtype, op_stream());
      last_op_ = NcclOp::allgather;
      return;
    }
    check_collective(NcclOp::allgather,
                     CB_CALL(api().ncclAllGather(send, recv, sendcount, data_type(dtype, false), c(), op_stream())));
    last_op_ = NcclOp::allgather;
  }

  void alltoall(const Operation& o) {
    const void* send = o.send;
    void* recv = o.recv;
    const std::size_t count_per_peer = o.count;
    const Dtype dtype = o.dtype;
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
      CB_CHECK_NCCL_COMM(c(), CB_NCCL_OPTIONAL(ncclAlltoAll)(src, recv, count_per_peer, dt, c(), op_stream()));
    } else {
      Group group(c());
      for (int peer = 0; peer < size(); ++peer) {
        const std::size_t off = static_cast<std::size_t>(peer) * count_per_peer * elem;
        CB_CHECK_NCCL_COMM(
            c(), api().ncclSend(static_cast<const char*>(src) + off, count_per_peer, dt, peer, c(), op_stream()));
        CB_CHECK_NCCL_COMM(c(),
                           api().ncclRecv(static_cast<char*>(recv) + off, count_per_peer, dt, peer, c(), op_stream()));
      }
      group.end();
    }
    last_op_ = NcclOp::alltoall;
  }

  void alltoallv(const Operation& o) {
    if (o.peers == nullptr) throw RuntimeFailure("alltoallv without its per-peer layout");
    const void* send = o.send;
    void* recv = o.recv;
    const Dtype dtype = o.dtype;
    const PeerLayout& p = *o.peers;
    const ncclDataType_t dt = data_type(dtype, false);
    const std::size_t elem = dtype_size(dtype);
    const auto ops = alltoallv_ops(rank(), size(), p.send_counts, p.send_displs, p.recv_counts, p.recv_displs);
    Group group(c());
    for (const P2pOp& op : ops) {
      if (op.send) {
        CB_CHECK_NCCL_COMM(c(), api().ncclSend(static_cast<const char*>(send) + op.offset_elems * elem, op.count, dt,
                                               op.peer, c(), op_stream()));
      } else {
        CB_CHECK_NCCL_COMM(c(), api().ncclRecv(static_cast<char*>(recv) + op.offset_elems * elem, op.count, dt, op.peer,
                                               c(), op_stream()));
      }
    }
    group.end();
    last_op_ = NcclOp::alltoallv;
  }

  void broadcast(const Operation& o) {
    check_collective(NcclOp::broadcast, CB_CALL(api().ncclBroadcast(o.send, o.recv, o.count, data_type(o.dtype, false),
                                                                    o.root, c(), op_stream())));
    last_op_ = NcclOp::broadcast;
  }

  void sendrecv(const Operation& o) {
    const ncclDataType_t dt = data_type(o.dtype, false);
    Group group(c());
    CB_CHECK_NCCL_COMM(c(), api().ncclSend(o.send, o.count, dt, o.send_peer, c(), op_stream()));
    CB_CHECK_NCCL_COMM(c(), api().ncclRecv(o.recv, o.count, dt, o.recv_peer, c(), op_stream()));
    group.end();
    last_op_ = NcclOp::sendrecv;
  }

  void reduce(const Operation& o) {
    check_collective(NcclOp::reduce, CB_CALL(api().ncclReduce(o.send, o.recv, o.count, data_type(o.dtype, true),
                                                              red_op(o.redop), o.root, c(), op_stream())));
    last_op_ = NcclOp::reduce;
  }

  // As nccl-tests builds it from point-to-point: every rank sends its chunk to the root, which
  // receives rank r's at r x count (in place, its own chunk onto itself).
  void gather(const Operation& o) {
    const ncclDataType_t dt = data_type(o.dtype, false);
    const std::size_t chunk_bytes = o.count * dtype_size(o.dtype);
    Group group(c());
    CB_CHECK_NCCL_COMM(c(), api().ncclSend(o.send, o.count, dt, o.root, c(), op_stream()));
    if (rank() == o.root) {
      for (int r = 0; r < size(); ++r) {
        auto* at = static_cast<char*>(o.recv) + static_cast<std::size_t>(r) * chunk_bytes;
        CB_CHECK_NCCL_COMM(c(), api().ncclRecv(at, o.count, dt, r, c(), op_stream()));
      }
    }
    group.end();
    last_op_ = NcclOp::gather;
  }

  // As nccl-tests builds it from point-to-point: the root sends chunk r (at r x count) to rank r,
  // every rank receives its own (in place, the root's onto itself).
  void scatter(const Operation& o) {
    const ncclDataType_t dt = data_type(o.dtype, false);
    const std::size_t chunk_bytes = o.count * dtype_size(o.dtype);
    Group group(c());
    if (rank() == o.root) {
      for (int r = 0; r < size(); ++r) {
        const auto* at = static_cast<const char*>(o.send) + static_cast<std::size_t>(r) * chunk_bytes;
        CB_CHECK_NCCL_COMM(c(), api().ncclSend(at, o.count, dt, r, c(), op_stream()));
      }
    }
    CB_CHECK_NCCL_COMM(c(), api().ncclRecv(o.recv, o.count, dt, o.root, c(), op_stream()));
    group.end();
    last_op_ = NcclOp::scatter;
  }

  // ncclGroupStart/End with the End guaranteed (an exception inside a group would otherwise
  // leave this thread's NCCL group open).
  class Group {
   public:
    explicit Group(ncclComm_t comm) : comm_(comm) { CB_CHECK_NCCL_COMM(comm_, api().ncclGroupStart()); }
    Group(const Group&) = delete;
    Group& operator=(const Group&) = delete;
    ~Group() {
      if (open_) (void)api().ncclGroupEnd();
    }
    void end() {
      open_ = false;
      CB_CHECK_NCCL_COMM(comm_, api().ncclGroupEnd());
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

  // The result of a collective that NCCL_ALGO applies to (CB_CALL: the call, its text and place):
  // a refusal of a forced algorithm is backend::Unsupported (throw_if_refused, nccl_host.hpp,
  // tested on the CPU), anything else a failure.
  void check_collective(NcclOp op, ncclResult_t rc, const char* call, const char* file, int line) {
    if (rc == ncclInProgress) rc = wait_in_progress(c());
    if (rc == ncclSuccess) return;
    throw_if_refused(rc, ctx_->algo, op, owner_->label(), nccl_error_text(rc, c()));
    throw_nccl_error(rc, c(), call, file, line);
  }

  // ---- cb-multimem ----

  [[nodiscard]] bool multimem_algo() const { return ctx_->algo.algo == "cb-multimem"; }

  // The device communicator, created on first use (collective over this communicator, like the
  // collective that asks for it). InputError with the reason where it cannot run: the runner
  // asks capability_waiver() first and records such cases as waived instead.
  // The verdict and the probe are cached on the communicator (CommOwner::in_switch_verdict), so
  // inside the timed region this is a lookup once capability_waiver() has run.
  const MultimemDevComm& multimem(std::string_view collective, Dtype dtype, Redop redop) {
    (void)c();  // not aborted
    const std::optional<std::string>* why = &owner_->in_switch_verdict("cb-multimem", collective, dtype, redop);
    if (!*why && !owner_->multimem_probed()) {
      owner_->probe_multimem();
      why = &owner_->in_switch_verdict("cb-multimem", collective, dtype, redop);
    }
    if (*why) throw InputError(fmt::format("--algo cb-multimem on communicator {}: {}", owner_->label(), **why));
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
  DeviceMemory scratch_;                         // in-place all-to-all staging
  DeviceMemory flag_;                            // barrier
  std::map<int, std::unique_ptr<Comm>> blocks_;  // block_level(), by block size
};

}  // namespace

std::unique_ptr<Comm> make_nccl_comm(std::shared_ptr<Context> ctx, std::shared_ptr<CommOwner> owner) {
  return std::make_unique<NcclComm>(std::move(ctx), std::move(owner));
}

CommOwner* comm_owner(Comm& comm) {
  auto* nc = dynamic_cast<NcclComm*>(&comm);
  return nc == nullptr ? nullptr : &nc->owner();
}

}  // namespace collbench::backend::nccl
