// NCCL backend implementation (host code; GPU needed at run time, not at build time): the
// Backend of `--backend nccl`. Its shared state, communicators, timers and setup are in
// nccl_context, nccl_comm, nccl_timer and nccl_setup (nccl_context.hpp says which is what).
#include "collbench/backend/nccl/nccl_backend.hpp"

#include <cuda_runtime.h>
#include <fmt/format.h>
#include <mpi.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "collbench/backend/mpi/mpi_check.hpp"
#include "collbench/backend/nccl/device_kernels.hpp"
#include "collbench/backend/nccl/gpu_loads.hpp"
#include "collbench/backend/nccl/nccl_check.hpp"
#include "collbench/backend/nccl/nccl_comm.hpp"
#include "collbench/backend/nccl/nccl_compat.hpp"
#include "collbench/backend/nccl/nccl_context.hpp"
#include "collbench/backend/nccl/nccl_graph.hpp"
#include "collbench/backend/nccl/nccl_setup.hpp"
#include "collbench/backend/nccl/nccl_timer.hpp"
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

  // The world communicator is created on first use and lives while a Comm (or a split of it)
  // holds it: the runner releases a set's communicators after its last case (docs/nccl-backend.md
  // "Ranks, devices and communicators"), and the next world() creates it again.
  [[nodiscard]] std::unique_ptr<Comm> world() override { return make_nccl_comm(ctx_, live_root()); }

  [[nodiscard]] std::unique_ptr<Comm> split(int color, int key) override {
    const std::shared_ptr<CommOwner> root = live_root();
    std::vector<int> members = split_members(color, key);
    return make_nccl_comm(
        ctx_, split_comm(ctx_, root, color, key, std::move(members), fmt::format("collbench-split-c{}", color)));
  }

  [[nodiscard]] std::unique_ptr<Timer> timer() override { return make_cuda_timer(ctx_); }

  // The dissemination barrier of nccl_host.hpp (dissemination_rounds) on the world communicator,
  // one element per round, not waited for (Backend::device_barrier). Point-to-point, so a forced
  // --algo whose all-reduce NCCL cannot run on the world communicator (nvls across nodes under
  // --scope domain) does not fail it. The world communicator is alive while the case's set is (a
  // split holds its parent): the barrier never creates one, so it never creates a communicator
  // inside a sample.
  void device_barrier() override {
    const std::shared_ptr<CommOwner> root = root_.lock();
    if (!root) throw RuntimeFailure("NCCL device barrier: no live world communicator (no communicator set is alive)");
    if (root->get() == nullptr) throw RuntimeFailure("NCCL communicator " + root->label() + " was aborted");
    enqueue_dissemination_barrier(*root, barrier_flag_.reserve(2 * sizeof(std::int32_t)), ctx_->s());
  }

  // --graph/-G: a CUDA graph of what `issue` enqueues (nccl_graph.hpp).
  [[nodiscard]] std::unique_ptr<Replay> capture(const std::function<void()>& issue) override {
    return capture_graph(ctx_, issue);
  }

  [[nodiscard]] std::map<std::string, std::string> provenance() const override { return provenance_; }

  // Overlap mode: the load on its own stream of this rank's GPU (gpu_loads.hpp).
  [[nodiscard]] std::unique_ptr<overlap::ComputeLoad> make_compute(const overlap::ComputeSpec& spec) override {
    CB_CHECK_CUDA(cudaSetDevice(ctx_->device));
    return make_gpu_load(spec);
  }

  [[nodiscard]] DevicePatterns* device_patterns() override { return this; }

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

 public:
  // See capability_waiver() in nccl_backend.hpp (in-switch algorithms, and PAT's node rule).
  // Outside the timed region: the verdicts it computes are cached on the communicator, where a
  // cb-multimem launch looks them up (CommOwner::in_switch_verdict).
  std::optional<std::string> in_switch_case_waiver(CommOwner& owner, std::string_view collective, Dtype dtype,
                                                   Redop redop) {
    // First what the loaded NCCL or this GPU lacks (nccl_compat.hpp): the rest of a sweep still
    // runs. Agreed by every rank (each may have loaded another libnccl or have another GPU).
    std::optional<std::string> lacks = ctx_->version_waiver;
    if (!lacks) {
      lacks = nccl_dtype_unsupported(dtype, NCCL_VERSION_CODE, ctx_->nccl_runtime_version, ctx_->cc_major,
                                     is_reduction(collective));
    }
    if (auto why = agree(lacks)) return why;
    const std::string& algo = ctx_->algo.algo;
    if (algo == "pat") return agree(pat_waiver(collective, owner.probe()));
    if (!is_in_switch_algo(algo)) return std::nullopt;
    owner.probe_lsa();  // NCCL's grouping, for every in-switch verdict (local, once)
    auto why = agree(owner.in_switch_verdict(algo, collective, dtype, redop));
    if (why || algo != "cb-multimem") return why;
    owner.probe_multimem();  // collective over the communicator, once
    return agree(owner.in_switch_verdict(algo, collective, dtype, redop));
  }

 private:
  std::shared_ptr<CommOwner> live_root() {
    std::shared_ptr<CommOwner> root = root_.lock();
    if (!root) {
      root = create_world(ctx_);
      root_ = root;
    }
    return root;
  }

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
  std::weak_ptr<CommOwner> root_;  // alive while a Comm or a split holds it
  std::map<std::string, std::string> provenance_;
  DeviceMemory segments_;
  DeviceMemory counter_;
  DeviceMemory barrier_flag_;  // device_barrier()
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
  ctx_->tally = options.tally;
  ctx_->share_splits = options.share_split_resources;
  // NCCL is loaded here, not when the binary starts (nccl_api.hpp): every rank learns whether
  // all ranks could load it.
  throw_first_problem(*ctx_, nccl_load_problem().value_or(std::string()));

  // Options first: pure checks with the same outcome on every rank.
  CB_CHECK_NCCL(api().ncclGetVersion(&ctx_->nccl_runtime_version));
  ctx_->algo = algo_settings(options.algo, ctx_->nccl_runtime_version);
  ctx_->buffers = parse_buffer_kind_for_nccl(options.buffers, ctx_->algo);
  // An NCCL older than the headers: what it lacks waives every case of this backend
  // (capability_waiver), and the buffers fall back to plain so that nothing calls it.
  ctx_->version_waiver = nccl_version_waiver(ctx_->algo.algo, ctx_->buffers, ctx_->nccl_runtime_version);
  if (ctx_->version_waiver && ctx_->buffers == BufferKind::symmetric) ctx_->buffers = BufferKind::plain;

  select_device(*ctx_);
  ctx_->stream.emplace();
  ctx_->sync_event.emplace(cudaEventDefault);
  provenance_ = gather_provenance(*ctx_);
  // No communicator yet: world() creates it when the runner's first case of this backend runs.
}

}  // namespace
}  // namespace nccl

std::unique_ptr<Backend> make_nccl_backend(const BackendOptions& options) {
  return std::make_unique<nccl::NcclBackend>(options);
}

namespace nccl {

DevicePatterns* device_patterns(Backend& backend) {
  return backend.device_patterns();
}

std::optional<std::string> capability_waiver(Backend& backend, Comm& comm, std::string_view collective, Dtype dtype,
                                             Redop redop) {
  auto* be = dynamic_cast<NcclBackend*>(&backend);
  CommOwner* owner = comm_owner(comm);
  if (be == nullptr || owner == nullptr) return std::nullopt;
  return be->in_switch_case_waiver(*owner, collective, dtype, redop);
}

}  // namespace nccl
}  // namespace collbench::backend
