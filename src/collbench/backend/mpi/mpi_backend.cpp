// MPI backend implementation.
#include "collbench/backend/mpi/mpi_backend.hpp"

#include <fmt/format.h>
#include <sched.h>

#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <vector>

#include "collbench/backend/block_split.hpp"
#include "collbench/backend/mpi/mpi_alltoall_posted.hpp"
#include "collbench/backend/mpi/mpi_bound.hpp"
#include "collbench/backend/mpi/mpi_check.hpp"
#include "collbench/backend/mpi/mpi_types.hpp"
#include "collbench/backend/mpi/simulation.hpp"

namespace collbench::backend {

void throw_mpi_error(int code, const char* call, const char* file, int line) {
  char text[MPI_MAX_ERROR_STRING] = {};
  int len = 0;
  MPI_Error_string(code, text, &len);
  throw RuntimeFailure(fmt::format("{}:{}: {} failed: {}", file, line, call, text));
}

MpiCommHandle& MpiCommHandle::operator=(MpiCommHandle&& other) noexcept {
  if (this != &other) {
    MpiCommHandle old(release());
    comm_ = other.release();
  }
  return *this;
}

MpiCommHandle::~MpiCommHandle() {
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (comm_ != MPI_COMM_NULL && comm_ != MPI_COMM_WORLD && comm_ != MPI_COMM_SELF && !finalized) {
    MPI_Comm_free(&comm_);
  }
}

MPI_Comm MpiCommHandle::release() {
  MPI_Comm c = comm_;
  comm_ = MPI_COMM_NULL;
  return c;
}

void mpi_wait(MPI_Request& request, Progress progress) {
  if (progress == Progress::spin) {
    CB_CHECK_MPI(MPI_Wait(&request, MPI_STATUS_IGNORE));
    return;
  }
  int done = 0;
  for (;;) {
    CB_CHECK_MPI(MPI_Test(&request, &done, MPI_STATUS_IGNORE));
    if (done != 0) return;
    sched_yield();
  }
}

std::string mpi_library_version() {
  char text[MPI_MAX_LIBRARY_VERSION_STRING] = {};
  int len = 0;
  MPI_Get_library_version(text, &len);
  std::string s(text, static_cast<std::size_t>(len));
  if (const auto nl = s.find('\n'); nl != std::string::npos) s.resize(nl);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\0')) s.pop_back();
  return s;
}

namespace {

std::vector<int> to_int_counts(std::span<const std::size_t> counts) {
  std::vector<int> out(counts.size());
  for (std::size_t i = 0; i < counts.size(); ++i) out[i] = to_int_count(counts[i]);
  return out;
}

class HostBuffer final : public Buffer {
 public:
  explicit HostBuffer(std::size_t bytes) : data_(sim::allocate_host(bytes)), bytes_(bytes) {}
  HostBuffer(const HostBuffer&) = delete;
  HostBuffer& operator=(const HostBuffer&) = delete;
  ~HostBuffer() override { sim::free_host(data_); }
  void* data() override { return data_; }
  void* host_data() override { return data_; }
  [[nodiscard]] std::size_t bytes() const override { return bytes_; }

 private:
  void* data_ = nullptr;
  std::size_t bytes_;
};

// An open group (Comm::group_start) of one backend, shared by all its communicators: the
// requests issued since group_start, completed together by group_end.
struct MpiGroup {
  bool open = false;
  std::vector<MPI_Request> pending;
  // Arguments a pending request still reads (MPI_Ialltoallv's count and displacement arrays must
  // stay valid until it completes), released by group_end after the wait.
  std::vector<std::vector<int>> keep_alive;
  std::vector<std::vector<std::byte>> staged;  // in-place sends of posted all-to-alls (--algo linear)
};

class MpiComm final : public Comm {
 public:
  MpiComm(MpiCommHandle comm, Progress progress, std::shared_ptr<MpiGroup> group, std::shared_ptr<CommTally> tally,
          bool posted = false)
      : comm_(std::move(comm)),
        progress_(progress),
        posted_(posted),
        group_(std::move(group)),
        tally_(std::move(tally)),
        ticket_(tally_) {
    CB_CHECK_MPI(MPI_Comm_rank(comm_.get(), &rank_));
    CB_CHECK_MPI(MPI_Comm_size(comm_.get(), &size_));
  }
  [[nodiscard]] int rank() const override { return rank_; }
  [[nodiscard]] int size() const override { return size_; }

  [[nodiscard]] Comm* block_level(int block_size) override {
    return cached_block(blocks_, this, size_, rank_, block_size, [&](const BlockSplit& s) {
      MPI_Comm sub = MPI_COMM_NULL;
      CB_CHECK_MPI(MPI_Comm_split(comm_.get(), s.color, s.key, &sub));
      return std::make_unique<MpiComm>(MpiCommHandle(sub), progress_, group_, tally_, posted_);
    });
  }

  void run(const Operation& o) override { (this->*handlers(o.op).run)(o); }
  // Blocking mode: the MPI call with its arguments converted once (mpi_bound.hpp) where the
  // operation has such a form; otherwise run() through the bound call. Counts are checked here.
  [[nodiscard]] BoundCall bind(const Operation& o) override {
    const OpHandlers<MpiComm>& h = handlers(o.op);
    if (h.bind != nullptr) return (this->*h.bind)(o);
    return Comm::bind(o);
  }

  // MPI_IN_PLACE reduce_scatter_block leaves this rank's block at the start of the buffer.
  [[nodiscard]] std::size_t reduce_scatter_in_place_offset(std::size_t /*recvcount*/) const override { return 0; }
  // The posted schedule is collbench's, so the record can say it ran; the library does not say.
  [[nodiscard]] std::string algo_used() const override {
    return posted_ ? std::string(kPostedAlltoallAlgo) : std::string();
  }
  // MPI operations have completed when they return (a group completes at group_end).
  [[nodiscard]] bool synchronize_is_noop() const override { return true; }

  [[nodiscard]] std::optional<std::string> group_waiver() const override { return std::nullopt; }
  void group_start() override {
    if (group_->open) throw RuntimeFailure("group_start: a group is already open (groups do not nest)");
    group_->open = true;
    group_->pending.clear();
  }
  void group_end() override {
    if (!group_->open) throw RuntimeFailure("group_end without group_start");
    group_->open = false;
    std::vector<MPI_Request> requests;
    requests.swap(group_->pending);
    mpi_wait_all(requests, progress_);
    group_->keep_alive.clear();
    group_->staged.clear();
  }

  void barrier() override {
    if (blocking()) {
      CB_CHECK_MPI(MPI_Barrier(comm_.get()));
      return;
    }
    MPI_Request req;
    CB_CHECK_MPI(MPI_Ibarrier(comm_.get(), &req));
    finish(req);
  }

 private:
  // ---- the operations (operation.hpp: the fields each one reads) ----

  // The handlers, by operation; InputError for one this backend has not.
  static const OpHandlers<MpiComm>& handlers(NcclOp op) {
    static constexpr OpTable<MpiComm> kOps{
        {NcclOp::allreduce, {&MpiComm::allreduce, &MpiComm::bind_allreduce}},
        {NcclOp::reducescatter, {&MpiComm::reduce_scatter, &MpiComm::bind_reduce_scatter}},
        {NcclOp::allgather, {&MpiComm::allgather, &MpiComm::bind_allgather}},
        {NcclOp::broadcast, {&MpiComm::broadcast, &MpiComm::bind_broadcast}},
        {NcclOp::alltoall, {&MpiComm::alltoall, &MpiComm::bind_alltoall}},
        {NcclOp::alltoallv, {&MpiComm::alltoallv, nullptr}},
        {NcclOp::sendrecv, {&MpiComm::sendrecv, nullptr}},
        {NcclOp::reduce, {&MpiComm::reduce, nullptr}},
        {NcclOp::gather, {&MpiComm::gather, nullptr}},
        {NcclOp::scatter, {&MpiComm::scatter, nullptr}},
    };
    if (const auto* h = kOps.find(op)) return *h;
    throw InputError(fmt::format("the mpi backend has no {} operation", to_string(op)));
  }

  void allreduce(const Operation& o) {
    const void* s = o.send == o.recv ? MPI_IN_PLACE : o.send;
    const int n = to_int_count(o.count);
    const MPI_Datatype dt = mpi_datatype(o.dtype);
    const MPI_Op op = mpi_op(o.redop, o.dtype);
    if (blocking()) {
      CB_CHECK_MPI(MPI_Allreduce(s, o.recv, n, dt, op, comm_.get()));
      return;
    }
    MPI_Request req;
    CB_CHECK_MPI(MPI_Iallreduce(s, o.recv, n, dt, op, comm_.get(), &req));
    finish(req);
  }

  void reduce_scatter(const Operation& o) {
    const void* s = o.send == o.recv ? MPI_IN_PLACE : o.send;
    const int n = to_int_count(checked_total(o.count));
    const MPI_Datatype dt = mpi_datatype(o.dtype);
    const MPI_Op op = mpi_op(o.redop, o.dtype);
    if (blocking()) {
      CB_CHECK_MPI(MPI_Reduce_scatter_block(s, o.recv, n, dt, op, comm_.get()));
      return;
    }
    MPI_Request req;
    CB_CHECK_MPI(MPI_Ireduce_scatter_block(s, o.recv, n, dt, op, comm_.get(), &req));
    finish(req);
  }

  void allgather(const Operation& o) {
    const bool in_place =
        static_cast<const char*>(o.send) ==
        static_cast<const char*>(o.recv) + static_cast<std::size_t>(rank_) * o.count * dtype_size(o.dtype);
    const void* s = in_place ? MPI_IN_PLACE : o.send;
    const int n = to_int_count(checked_total(o.count));
    const MPI_Datatype dt = mpi_datatype(o.dtype);
    if (blocking()) {
      CB_CHECK_MPI(MPI_Allgather(s, n, dt, o.recv, n, dt, comm_.get()));
      return;
    }
    MPI_Request req;
    CB_CHECK_MPI(MPI_Iallgather(s, n, dt, o.recv, n, dt, comm_.get(), &req));
    finish(req);
  }

  void alltoall(const Operation& o) {
    if (posted_) return finish_posted(post_alltoall(comm_.get(), rank_, size_, o.send, o.recv, o.count, o.dtype));
    const void* s = o.send == o.recv ? MPI_IN_PLACE : o.send;
    const int n = to_int_count(o.count);
    const MPI_Datatype dt = mpi_datatype(o.dtype);
    if (blocking()) {
      CB_CHECK_MPI(MPI_Alltoall(s, n, dt, o.recv, n, dt, comm_.get()));
      return;
    }
    MPI_Request req;
    CB_CHECK_MPI(MPI_Ialltoall(s, n, dt, o.recv, n, dt, comm_.get(), &req));
    finish(req);
  }

  void alltoallv(const Operation& o) {
    if (o.peers == nullptr) throw RuntimeFailure("alltoallv without its per-peer layout");
    if (posted_) {
      const PeerLayout& p = *o.peers;
      return finish_posted(post_alltoallv(comm_.get(), rank_, o.send, p.send_counts, p.send_displs, o.recv,
                                          p.recv_counts, p.recv_displs, o.dtype));
    }
    std::vector<int> sc = to_int_counts(o.peers->send_counts);
    std::vector<int> sd = to_int_counts(o.peers->send_displs);
    std::vector<int> rc = to_int_counts(o.peers->recv_counts);
    std::vector<int> rd = to_int_counts(o.peers->recv_displs);
    const MPI_Datatype dt = mpi_datatype(o.dtype);
    if (blocking()) {
      CB_CHECK_MPI(MPI_Alltoallv(o.send, sc.data(), sd.data(), dt, o.recv, rc.data(), rd.data(), dt, comm_.get()));
      return;
    }
    const int* const arrays[4] = {sc.data(), sd.data(), rc.data(), rd.data()};
    if (group_->open) {
      // The request completes at group_end: the group keeps the arrays it reads until then (a
      // moved vector keeps its elements where they are, so the pointers above stay valid).
      for (auto* v : {&sc, &sd, &rc, &rd}) group_->keep_alive.push_back(std::move(*v));
    }
    MPI_Request req;
    CB_CHECK_MPI(MPI_Ialltoallv(o.send, arrays[0], arrays[1], dt, o.recv, arrays[2], arrays[3], dt, comm_.get(), &req));
    finish(req);
  }

  void broadcast(const Operation& o) {
    // Out-of-place semantics as NCCL: the root's send buffer ends up in every recv buffer.
    if (rank_ == o.root && o.send != o.recv) std::memcpy(o.recv, o.send, o.count * dtype_size(o.dtype));
    const int n = to_int_count(o.count);
    if (blocking()) {
      CB_CHECK_MPI(MPI_Bcast(o.recv, n, mpi_datatype(o.dtype), o.root, comm_.get()));
      return;
    }
    MPI_Request req;
    CB_CHECK_MPI(MPI_Ibcast(o.recv, n, mpi_datatype(o.dtype), o.root, comm_.get(), &req));
    finish(req);
  }

  void sendrecv(const Operation& o) {
    const int n = to_int_count(o.count);
    const MPI_Datatype dt = mpi_datatype(o.dtype);
    constexpr int kTag = 7301;
    if (blocking()) {
      CB_CHECK_MPI(MPI_Sendrecv(o.send, n, dt, o.send_peer, kTag, o.recv, n, dt, o.recv_peer, kTag, comm_.get(),
                                MPI_STATUS_IGNORE));
      return;
    }
    MPI_Request reqs[2];
    CB_CHECK_MPI(MPI_Irecv(o.recv, n, dt, o.recv_peer, kTag, comm_.get(), &reqs[0]));
    CB_CHECK_MPI(MPI_Isend(o.send, n, dt, o.send_peer, kTag, comm_.get(), &reqs[1]));
    finish(reqs[0]);
    finish(reqs[1]);
  }

  // In place (send == recv) only the root passes MPI_IN_PLACE; the others' receive buffer is unused.
  void reduce(const Operation& o) {
    const void* s = rank_ == o.root && o.send == o.recv ? MPI_IN_PLACE : o.send;
    if (s == MPI_IN_PLACE && mpich_in_place_reduce_bug(o.root)) {
      // MPICH 4.0 to 4.1.1 crash in MPI_Reduce(MPI_IN_PLACE) at a root other than 0 (pmodels/mpich
      // issue 6540, fixed in 4.1.2): the root's input is copied aside and reduced out of place
      // there (the copy is inside the measured time; docs/measurement.md).
      const std::size_t bytes = o.count * dtype_size(o.dtype);
      if (reduce_stage_.size() < bytes) reduce_stage_.resize(bytes);
      std::memcpy(reduce_stage_.data(), o.recv, bytes);
      s = reduce_stage_.data();
    }
    const int n = to_int_count(o.count);
    const MPI_Datatype dt = mpi_datatype(o.dtype);
    const MPI_Op op = mpi_op(o.redop, o.dtype);
    if (blocking()) {
      CB_CHECK_MPI(MPI_Reduce(s, o.recv, n, dt, op, o.root, comm_.get()));
      return;
    }
    MPI_Request req;
    CB_CHECK_MPI(MPI_Ireduce(s, o.recv, n, dt, op, o.root, comm_.get(), &req));
    finish(req);
  }

  // In place (send == recv + rank x count) only the root passes MPI_IN_PLACE: its chunk is
  // already in place; the others' receive buffer is unused.
  void gather(const Operation& o) {
    const auto own = static_cast<std::size_t>(rank_) * o.count * dtype_size(o.dtype);
    const bool in_place = static_cast<const char*>(o.send) == static_cast<const char*>(o.recv) + own;
    const void* s = rank_ == o.root && in_place ? MPI_IN_PLACE : o.send;
    const int n = to_int_count(checked_total(o.count));
    const MPI_Datatype dt = mpi_datatype(o.dtype);
    if (blocking()) {
      CB_CHECK_MPI(MPI_Gather(s, n, dt, o.recv, n, dt, o.root, comm_.get()));
      return;
    }
    MPI_Request req;
    CB_CHECK_MPI(MPI_Igather(s, n, dt, o.recv, n, dt, o.root, comm_.get(), &req));
    finish(req);
  }

  // In place (recv == send + rank x count) only the root passes MPI_IN_PLACE: its chunk stays
  // where it is; the others' send buffer is unused.
  void scatter(const Operation& o) {
    const auto own = static_cast<std::size_t>(rank_) * o.count * dtype_size(o.dtype);
    const bool in_place = static_cast<const char*>(o.recv) == static_cast<const char*>(o.send) + own;
    void* r = rank_ == o.root && in_place ? MPI_IN_PLACE : o.recv;
    const int n = to_int_count(checked_total(o.count));
    const MPI_Datatype dt = mpi_datatype(o.dtype);
    if (blocking()) {
      CB_CHECK_MPI(MPI_Scatter(o.send, n, dt, r, n, dt, o.root, comm_.get()));
      return;
    }
    MPI_Request req;
    CB_CHECK_MPI(MPI_Iscatter(o.send, n, dt, r, n, dt, o.root, comm_.get(), &req));
    finish(req);
  }

  static bool mpich_in_place_reduce_bug(int root) {
#if defined(MPICH_NUMVERSION)
    return root != 0 && MPICH_NUMVERSION >= 40000000 && MPICH_NUMVERSION < 40102000;
#else
    (void)root;
    return false;
#endif
  }

  // The blocking bound forms (mpi_bound.hpp); the method through the bound call otherwise.
  BoundCall bind_allreduce(const Operation& o) {
    if (!blocking()) return Comm::bind(checked_op(o, o.count));
    return bind_mpi_allreduce(comm_.get(), o.send, o.recv, o.count, o.dtype, o.redop);
  }
  BoundCall bind_reduce_scatter(const Operation& o) {
    if (!blocking()) return Comm::bind(checked_op(o, checked_total(o.count)));
    return bind_mpi_reduce_scatter(comm_.get(), size_, o.send, o.recv, o.count, o.dtype, o.redop);
  }
  BoundCall bind_allgather(const Operation& o) {
    if (!blocking()) return Comm::bind(checked_op(o, checked_total(o.count)));
    return bind_mpi_allgather(comm_.get(), rank_, size_, o.send, o.recv, o.count, o.dtype);
  }
  BoundCall bind_alltoall(const Operation& o) {
    if (!blocking() || posted_) return Comm::bind(checked_op(o, o.count));
    return bind_mpi_alltoall(comm_.get(), o.send, o.recv, o.count, o.dtype);
  }
  BoundCall bind_broadcast(const Operation& o) {
    if (!blocking()) return Comm::bind(checked_op(o, o.count));
    return bind_mpi_broadcast(comm_.get(), rank_, o.send, o.recv, o.count, o.dtype, o.root);
  }

  // `o` after checking `count` against MPI's int count, as the operations do.
  [[nodiscard]] static const Operation& checked_op(const Operation& o, std::size_t count) {
    to_int_count(count);
    return o;
  }

  // Blocking MPI calls only in spin mode outside a group; otherwise non-blocking + finish().
  [[nodiscard]] bool blocking() const {
    return progress_ == Progress::spin && !group_->open;
  }
  // `count` after checking it and count x size() against MPI's int count (reduce-scatter's and
  // all-gather's whole buffer).
  [[nodiscard]] std::size_t checked_total(std::size_t count) const {
    to_int_count(count);
    to_int_count(count * static_cast<std::size_t>(size_));
    return count;
  }
  // Waits for a request now, or leaves it to group_end() inside a group.
  void finish(MPI_Request& req) {
    if (group_->open) {
      group_->pending.push_back(req);
      return;
    }
    mpi_wait(req, progress_);
  }
  // Waits for a posted exchange now, or leaves its requests (and staged sends) to group_end().
  void finish_posted(PostedExchange ex) {
    if (!group_->open) return mpi_wait_all(ex.requests, progress_);
    group_->pending.insert(group_->pending.end(), ex.requests.begin(), ex.requests.end());
    if (!ex.staged.empty()) group_->staged.push_back(std::move(ex.staged));
  }

  MpiCommHandle comm_;
  Progress progress_;
  bool posted_ = false;  // --algo linear: all-to-all(v) as collbench's posted schedule
  std::shared_ptr<MpiGroup> group_;
  std::shared_ptr<CommTally> tally_;
  CommTicket ticket_;  // counted from creation to release (the handle frees the MPI_Comm after it)
  int rank_ = 0;
  int size_ = 1;
  std::map<int, std::unique_ptr<MpiComm>> blocks_;  // block_level(), by block size
  std::vector<unsigned char> reduce_stage_;         // reduce(): the root's input, staged (MPICH 4.0-4.1.1)
};

class WallTimer final : public Timer {
 public:
  void start() override { start_ = enter_ = MPI_Wtime(); }
  void enter() override { enter_ = MPI_Wtime(); }
  void stop() override { stop_ = MPI_Wtime(); }
  [[nodiscard]] double total_us() override { return (stop_ - start_) * 1e6; }
  [[nodiscard]] double inside_us() override { return (stop_ - enter_) * 1e6; }
  [[nodiscard]] bool reads_mpi_wtime() const override { return true; }

 private:
  double start_ = 0, enter_ = 0, stop_ = 0;
};

class MpiBackend final : public Backend {
 public:
  explicit MpiBackend(const BackendOptions& options) : options_(options) {
    if (options.buffers != "host" && options.buffers != "plain") {
      throw InputError("--buffers " + options.buffers +
                       " is not available on the mpi backend (host memory only); accepted: host");
    }
  }
  [[nodiscard]] std::string name() const override { return "mpi"; }
  [[nodiscard]] std::unique_ptr<Buffer> allocate(std::size_t bytes) override {
    return std::make_unique<HostBuffer>(bytes);
  }
  void upload(Buffer& dst, const void* host, std::size_t bytes) override { std::memcpy(dst.data(), host, bytes); }
  void download(void* host, Buffer& src, std::size_t bytes) override { std::memcpy(host, src.data(), bytes); }

  [[nodiscard]] std::unique_ptr<Comm> world() override {
    MPI_Comm dup = MPI_COMM_NULL;
    CB_CHECK_MPI(MPI_Comm_dup(MPI_COMM_WORLD, &dup));
    return std::make_unique<MpiComm>(MpiCommHandle(dup), options_.progress, group_, options_.tally, posted());
  }
  [[nodiscard]] std::unique_ptr<Comm> split(int color, int key) override {
    MPI_Comm sub = MPI_COMM_NULL;
    CB_CHECK_MPI(MPI_Comm_split(MPI_COMM_WORLD, color, key, &sub));
    return std::make_unique<MpiComm>(MpiCommHandle(sub), options_.progress, group_, options_.tally, posted());
  }
  [[nodiscard]] std::unique_ptr<Timer> timer() override { return std::make_unique<WallTimer>(); }
  [[nodiscard]] std::map<std::string, std::string> provenance() const override {
    int major = 0;
    int minor = 0;
    MPI_Get_version(&major, &minor);
    return {{"mpi_library", mpi_library_version()},
            {"mpi_standard", fmt::format("{}.{}", major, minor)},
            {"progress", options_.progress == Progress::spin ? "spin" : "yield"}};
  }

 private:
  [[nodiscard]] bool posted() const { return options_.algo == kPostedAlltoallAlgo; }
  BackendOptions options_;
  std::shared_ptr<MpiGroup> group_ = std::make_shared<MpiGroup>();
};

}  // namespace

std::unique_ptr<Backend> make_mpi_backend(const BackendOptions& options) {
  return std::make_unique<MpiBackend>(options);
}

}  // namespace collbench::backend
