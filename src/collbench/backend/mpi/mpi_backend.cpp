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

namespace {

// Completes every request together: MPI_Waitall (spin), or MPI_Testall and sched_yield (yield).
void mpi_wait_all(std::vector<MPI_Request>& requests, Progress progress) {
  if (requests.empty()) return;
  const int n = static_cast<int>(requests.size());
  if (progress == Progress::spin) {
    CB_CHECK_MPI(MPI_Waitall(n, requests.data(), MPI_STATUSES_IGNORE));
    return;
  }
  int done = 0;
  for (;;) {
    CB_CHECK_MPI(MPI_Testall(n, requests.data(), &done, MPI_STATUSES_IGNORE));
    if (done != 0) return;
    sched_yield();
  }
}

}  // namespace

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

  void allreduce(const void* send, void* recv, std::size_t count, Dtype dtype, Redop redop) override {
    const void* s = send == recv ? MPI_IN_PLACE : send;
    const int n = to_int_count(count);
    if (blocking()) {
      CB_CHECK_MPI(MPI_Allreduce(s, recv, n, mpi_datatype(dtype), mpi_op(redop, dtype), comm_.get()));
      return;
    }
    MPI_Request req;
    CB_CHECK_MPI(MPI_Iallreduce(s, recv, n, mpi_datatype(dtype), mpi_op(redop, dtype), comm_.get(), &req));
    finish(req);
  }

  void reduce_scatter(const void* send, void* recv, std::size_t recvcount, Dtype dtype, Redop redop) override {
    const void* s = send == recv ? MPI_IN_PLACE : send;
    const int n = to_int_count(recvcount);
    to_int_count(recvcount * static_cast<std::size_t>(size_));
    if (blocking()) {
      CB_CHECK_MPI(MPI_Reduce_scatter_block(s, recv, n, mpi_datatype(dtype), mpi_op(redop, dtype), comm_.get()));
      return;
    }
    MPI_Request req;
    CB_CHECK_MPI(MPI_Ireduce_scatter_block(s, recv, n, mpi_datatype(dtype), mpi_op(redop, dtype), comm_.get(), &req));
    finish(req);
  }

  // MPI_IN_PLACE reduce_scatter_block leaves this rank's block at the start of the buffer.
  [[nodiscard]] std::size_t reduce_scatter_in_place_offset(std::size_t /*recvcount*/) const override { return 0; }

  void allgather(const void* send, void* recv, std::size_t sendcount, Dtype dtype) override {
    const auto elem = dtype_size(dtype);
    const bool in_place = static_cast<const char*>(send) ==
                          static_cast<const char*>(recv) + static_cast<std::size_t>(rank_) * sendcount * elem;
    const void* s = in_place ? MPI_IN_PLACE : send;
    const int n = to_int_count(sendcount);
    to_int_count(sendcount * static_cast<std::size_t>(size_));
    const MPI_Datatype dt = mpi_datatype(dtype);
    if (blocking()) {
      CB_CHECK_MPI(MPI_Allgather(s, n, dt, recv, n, dt, comm_.get()));
      return;
    }
    MPI_Request req;
    CB_CHECK_MPI(MPI_Iallgather(s, n, dt, recv, n, dt, comm_.get(), &req));
    finish(req);
  }

  void alltoall(const void* send, void* recv, std::size_t count_per_peer, Dtype dtype) override {
    if (posted_) return finish_posted(post_alltoall(comm_.get(), rank_, size_, send, recv, count_per_peer, dtype));
    const void* s = send == recv ? MPI_IN_PLACE : send;
    const int n = to_int_count(count_per_peer);
    const MPI_Datatype dt = mpi_datatype(dtype);
    if (blocking()) {
      CB_CHECK_MPI(MPI_Alltoall(s, n, dt, recv, n, dt, comm_.get()));
      return;
    }
    MPI_Request req;
    CB_CHECK_MPI(MPI_Ialltoall(s, n, dt, recv, n, dt, comm_.get(), &req));
    finish(req);
  }

  void alltoallv(const void* send, std::span<const std::size_t> send_counts, std::span<const std::size_t> send_displs,
                 void* recv, std::span<const std::size_t> recv_counts, std::span<const std::size_t> recv_displs,
                 Dtype dtype) override {
    if (posted_) {
      return finish_posted(
          post_alltoallv(comm_.get(), rank_, send, send_counts, send_displs, recv, recv_counts, recv_displs, dtype));
    }
    std::vector<int> sc = to_int_counts(send_counts);
    std::vector<int> sd = to_int_counts(send_displs);
    std::vector<int> rc = to_int_counts(recv_counts);
    std::vector<int> rd = to_int_counts(recv_displs);
    const MPI_Datatype dt = mpi_datatype(dtype);
    if (blocking()) {
      CB_CHECK_MPI(MPI_Alltoallv(send, sc.data(), sd.data(), dt, recv, rc.data(), rd.data(), dt, comm_.get()));
      return;
    }
    const int* const arrays[4] = {sc.data(), sd.data(), rc.data(), rd.data()};
    if (group_->open) {
      // The request completes at group_end: the group keeps the arrays it reads until then (a
      // moved vector keeps its elements where they are, so the pointers above stay valid).
      for (auto* v : {&sc, &sd, &rc, &rd}) group_->keep_alive.push_back(std::move(*v));
    }
    MPI_Request req;
    CB_CHECK_MPI(MPI_Ialltoallv(send, arrays[0], arrays[1], dt, recv, arrays[2], arrays[3], dt, comm_.get(), &req));
    finish(req);
  }

  void broadcast(const void* send, void* recv, std::size_t count, Dtype dtype, int root) override {
    // Out-of-place semantics as NCCL: the root's send buffer ends up in every recv buffer.
    if (rank_ == root && send != recv) std::memcpy(recv, send, count * dtype_size(dtype));
    const int n = to_int_count(count);
    if (blocking()) {
      CB_CHECK_MPI(MPI_Bcast(recv, n, mpi_datatype(dtype), root, comm_.get()));
      return;
    }
    MPI_Request req;
    CB_CHECK_MPI(MPI_Ibcast(recv, n, mpi_datatype(dtype), root, comm_.get(), &req));
    finish(req);
  }

  void sendrecv(const void* send, int send_peer, void* recv, int recv_peer, std::size_t count, Dtype dtype) override {
    const int n = to_int_count(count);
    const MPI_Datatype dt = mpi_datatype(dtype);
    constexpr int kTag = 7301;
    if (blocking()) {
      CB_CHECK_MPI(
          MPI_Sendrecv(send, n, dt, send_peer, kTag, recv, n, dt, recv_peer, kTag, comm_.get(), MPI_STATUS_IGNORE));
      return;
    }
    MPI_Request reqs[2];
    CB_CHECK_MPI(MPI_Irecv(recv, n, dt, recv_peer, kTag, comm_.get(), &reqs[0]));
    CB_CHECK_MPI(MPI_Isend(send, n, dt, send_peer, kTag, comm_.get(), &reqs[1]));
    finish(reqs[0]);
    finish(reqs[1]);
  }

  // Blocking mode: the MPI call with its arguments converted once (mpi_bound.hpp); otherwise the
  // method through the bound call. Counts are checked here in both.
  [[nodiscard]] BoundCall bind_allreduce(const void* send, void* recv, std::size_t count, Dtype dtype,
                                         Redop redop) override {
    if (!blocking()) return Comm::bind_allreduce(send, recv, checked(count), dtype, redop);
    return bind_mpi_allreduce(comm_.get(), send, recv, count, dtype, redop);
  }
  [[nodiscard]] BoundCall bind_reduce_scatter(const void* send, void* recv, std::size_t recvcount, Dtype dtype,
                                              Redop redop) override {
    if (!blocking()) return Comm::bind_reduce_scatter(send, recv, checked_total(recvcount), dtype, redop);
    return bind_mpi_reduce_scatter(comm_.get(), size_, send, recv, recvcount, dtype, redop);
  }
  [[nodiscard]] BoundCall bind_allgather(const void* send, void* recv, std::size_t sendcount, Dtype dtype) override {
    if (!blocking()) return Comm::bind_allgather(send, recv, checked_total(sendcount), dtype);
    return bind_mpi_allgather(comm_.get(), rank_, size_, send, recv, sendcount, dtype);
  }
  [[nodiscard]] BoundCall bind_alltoall(const void* send, void* recv, std::size_t count_per_peer,
                                        Dtype dtype) override {
    if (!blocking() || posted_) return Comm::bind_alltoall(send, recv, checked(count_per_peer), dtype);
    return bind_mpi_alltoall(comm_.get(), send, recv, count_per_peer, dtype);
  }
  [[nodiscard]] BoundCall bind_broadcast(const void* send, void* recv, std::size_t count, Dtype dtype,
                                         int root) override {
    if (!blocking()) return Comm::bind_broadcast(send, recv, checked(count), dtype, root);
    return bind_mpi_broadcast(comm_.get(), rank_, send, recv, count, dtype, root);
  }
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
  // Blocking MPI calls only in spin mode outside a group; otherwise non-blocking + finish().
  [[nodiscard]] bool blocking() const { return progress_ == Progress::spin && !group_->open; }
  // `count` after checking it against MPI's int count, as the methods do.
  [[nodiscard]] static std::size_t checked(std::size_t count) {
    to_int_count(count);
    return count;
  }
  // `count` after checking it and count x size() against MPI's int count (reduce-scatter's and
  // all-gather's whole buffer), as the methods do.
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
    if (!group_->open) return wait_posted(ex.requests, progress_);
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
