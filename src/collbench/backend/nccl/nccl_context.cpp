// The NCCL backend's shared state: communicators, device buffers and their registrations, the
// stream's synchronisation and asynchronous-error polling (nccl_context.hpp).
#include "collbench/backend/nccl/nccl_context.hpp"

#include <fmt/format.h>
#include <sched.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <exception>

#include "collbench/backend/mpi/mpi_check.hpp"
#include "collbench/backend/nccl/nccl_backend.hpp"
#include "collbench/backend/nccl/nccl_check.hpp"
#include "collbench/core/error.hpp"

namespace collbench::backend::nccl {
namespace {

std::atomic<bool> g_abort_requested{false};

}  // namespace

CommOwner::~CommOwner() {
  const bool failing = failure_seen() || aborted_ || std::uncaught_exceptions() > 0 || abort_requested();
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
  ncclResult_t rc = api().ncclCommFinalize(comm_);
  if (rc == ncclInProgress) rc = wait_in_progress(comm_);
  if (rc == ncclSuccess) rc = api().ncclCommDestroy(comm_);
  if (rc != ncclSuccess) {
    std::fprintf(stderr, "collbench: warning: releasing NCCL communicator %s failed: %s; aborting it\n", label_.c_str(),
                 api().ncclGetErrorString(rc));
    (void)api().ncclCommAbort(comm_);
  }
  comm_ = nullptr;
}

void enqueue_dissemination_barrier(const CommOwner& owner, void* slots, cudaStream_t stream) {
  ncclComm_t comm = owner.get();
  auto* words = static_cast<std::int32_t*>(slots);
  for (const BarrierRound& round : dissemination_rounds(owner.rank(), owner.size())) {
    CB_CHECK_NCCL_COMM(comm, api().ncclGroupStart());
    const ncclResult_t sent = api().ncclSend(words, 1, ncclInt32, round.send_to, comm, stream);
    const ncclResult_t received =
        sent == ncclSuccess ? api().ncclRecv(words + 1, 1, ncclInt32, round.recv_from, comm, stream) : ncclSuccess;
    const ncclResult_t ended = api().ncclGroupEnd();  // the group is closed whatever happened in it
    CB_CHECK_NCCL_COMM(comm, sent);
    CB_CHECK_NCCL_COMM(comm, received);
    CB_CHECK_NCCL_COMM(comm, ended);
  }
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
    CB_CHECK_NCCL(api().ncclMemAlloc(&ptr_, alloc_bytes_));
  }
  // Poison (0xff: NaN in every float type, -1 in the integer types, never an expected value), so
  // that an operation that leaves its output untouched cannot pass verification on stale data.
  if (const cudaError_t rc = cudaMemsetAsync(ptr_, 0xff, alloc_bytes_, ctx_->s()); rc != cudaSuccess) {
    if (kind_ == BufferKind::plain) {
      (void)cudaFree(ptr_);
    } else {
      (void)api().ncclMemFree(ptr_);
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
  } else if (const ncclResult_t rc = api().ncclMemFree(ptr_); rc != ncclSuccess) {
    std::fprintf(stderr, "collbench: warning: ncclMemFree failed: %s\n", api().ncclGetErrorString(rc));
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
    CB_CHECK_NCCL_COMM(comm.get(), api().ncclCommRegister(comm.get(), ptr_, alloc_bytes_, &r.handle));
  } else {
    CB_CHECK_NCCL_COMM(comm.get(), CB_NCCL_OPTIONAL(ncclCommWindowRegister)(comm.get(), ptr_, alloc_bytes_, &r.window,
                                                                            NCCL_WIN_COLL_SYMMETRIC));
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
      if (it->window != nullptr) rc = CB_NCCL_OPTIONAL(ncclCommWindowDeregister)(comm.get(), it->window);
      if (it->handle != nullptr) rc = api().ncclCommDeregister(comm.get(), it->handle);
      if (rc == ncclInProgress) rc = wait_in_progress(comm.get());
      if (rc != ncclSuccess) {
        std::fprintf(stderr, "collbench: warning: deregistering a buffer from %s failed: %s\n", comm.label().c_str(),
                     api().ncclGetErrorString(rc));
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
  if (abort_requested()) {
    abort_all();
    throw RuntimeFailure(
        "NCCL operations aborted on request (watchdog): every communicator was aborted with ncclCommAbort");
  }
  for (CommOwner* c : comms) {
    if (c->get() == nullptr) continue;
    ncclResult_t async = ncclSuccess;
    const ncclResult_t rc = api().ncclCommGetAsyncError(c->get(), &async);
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
  if (capturing) {
    throw RuntimeFailure(
        "--graph/-G: an operation waited for the device inside a CUDA-graph capture (the captured launches must "
        "only enqueue)");
  }
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
ncclConfig_t make_config(const char* name, int runtime_version, bool share) {
  ncclConfig_t config = NCCL_CONFIG_INITIALIZER;
  config.commName = name;
  config.blocking = 1;
#if NCCL_VERSION_CODE >= NCCL_VERSION(2, 18, 0)  // the headers know the field
  if (nccl_split_share(runtime_version)) config.splitShare = share ? 1 : 0;
#else
  (void)runtime_version;
  (void)share;
#endif
  return config;
}

std::shared_ptr<CommOwner> adopt(const std::shared_ptr<Context>& ctx, ncclComm_t comm, std::string label,
                                 std::vector<int> members, std::shared_ptr<CommOwner> parent) {
  std::shared_ptr<CommOwner> owner;
  try {
    owner = std::make_shared<CommOwner>(ctx, comm, std::move(label), std::move(members), std::move(parent));
  } catch (...) {
    (void)api().ncclCommAbort(comm);
    throw;
  }
  owner->attach_buffers();
  return owner;
}

std::shared_ptr<CommOwner> split_comm(const std::shared_ptr<Context>& ctx, const std::shared_ptr<CommOwner>& parent,
                                      int color, int key, std::vector<int> members, const std::string& label) {
  if (parent->get() == nullptr) throw RuntimeFailure("NCCL communicator " + parent->label() + " was aborted");
  ncclComm_t child = nullptr;
  ncclConfig_t config = make_config(label.c_str(), ctx->nccl_runtime_version);
  {
    ScopedEnv env(comm_creation_env(ctx->algo));
    CB_CHECK_NCCL_COMM(child, api().ncclCommSplit(parent->get(), color, key, &child, &config));
  }
  if (child == nullptr) {
    throw RuntimeFailure(fmt::format("ncclCommSplit({}, color {}) returned no communicator", parent->label(), color));
  }
  return adopt(ctx, child, label, std::move(members), parent);
}

std::string env_or_empty(const char* name) {
  const char* v = std::getenv(name);
  return v != nullptr ? v : "";
}

const InSwitchProbe& CommOwner::probe() const {
  if (probe_) return *probe_;
  InSwitchProbe& p = probe_.emplace();
  p.nccl_version = ctx_->nccl_runtime_version;
  p.nvls_enable = env_or_empty("NCCL_NVLS_ENABLE");
  p.pat_enable = env_or_empty("NCCL_PAT_ENABLE");
  for (int w : members_) {
    const auto i = static_cast<std::size_t>(w);
    p.ranks.push_back(i < ctx_->world_in_switch.size() ? ctx_->world_in_switch[i] : InSwitchRank{});
  }
  p.lsa_ranks = lsa_ranks_;
  p.devcomm_error = devcomm_error_;
  p.multimem_not_built = multimem_not_built();
  return p;
}

const std::optional<std::string>& CommOwner::in_switch_verdict(std::string_view algo, std::string_view collective,
                                                               Dtype dtype, Redop redop) const {
  auto key = std::make_tuple(std::string(collective), dtype, redop, std::string(algo));
  if (const auto it = verdicts_.find(key); it != verdicts_.end()) return it->second;
  auto why = in_switch_waiver(algo, collective, dtype, redop, probe());
  return verdicts_.emplace(std::move(key), std::move(why)).first->second;
}

void CommOwner::probe_lsa() {
  if (lsa_probed_) return;
  lsa_probed_ = true;
  probe_.reset();  // what follows changes the probe, and so the verdicts
  verdicts_.clear();
  // ncclTeamLsa starts NCCL's symmetric-memory runtime (local) and returns an empty team when it
  // cannot. The LSA team (gcd of the ranks per NCCL node: the same on every member) is NCCL's
  // grouping for every in-switch decision (in_switch_grouping, nvls_host.hpp).
  lsa_ranks_ = lsa_team_size(get());
  if (lsa_ranks_ <= 0) lsa_ranks_ = -1;
}

void CommOwner::probe_multimem() {
  if (multimem_probed_) return;
  multimem_probed_ = true;
  probe_.reset();  // what follows changes the probe, and so the verdicts
  verdicts_.clear();
  probe_lsa();
  // The LSA team must be the whole communicator before a device communicator is worth asking for.
  if (lsa_ranks_ < 2 || lsa_ranks_ != size_) return;
  const ncclResult_t rc = MultimemDevComm::create(get(), multimem_);
  if (rc == ncclSuccess) return;
  if (!devcomm_refusal(rc)) throw_nccl_error(rc, get(), "ncclDevCommCreate (cb-multimem)", __FILE__, __LINE__);
  devcomm_error_ = nccl_error_text(rc, get());
}

bool abort_requested() noexcept {
  return g_abort_requested.load(std::memory_order_relaxed);
}

void request_abort() noexcept {
  g_abort_requested.store(true, std::memory_order_relaxed);
}

}  // namespace collbench::backend::nccl
