// The MPI backend's policy and the lookup by name (the default policy: policy_base.cpp).
#include "collbench/backend/policy.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <string>
#include <vector>

#include "collbench/backend/mpi/mpi_alltoall_posted.hpp"
#include "collbench/backend/registry.hpp"
#include "collbench/core/collective_facts.hpp"
#include "collbench/core/error.hpp"
#ifdef COLLBENCH_HAVE_NCCL
#include "collbench/backend/nccl/nccl_backend.hpp"
#include "collbench/backend/nccl/nccl_policy.hpp"
#endif

namespace collbench::backend {

namespace {

// MPI: host memory, the library's own algorithms (auto, flat; hierarchical is the runner's) and
// collbench's posted all-to-all (linear, mpi_alltoall_posted.hpp), one instance per run and
// schedule (and one for overlap mode, which polls).
class MpiPolicy final : public BackendPolicy {
 public:
  void check_buffers(std::string_view buffers) const override {
    if (buffers != "host" && buffers != "plain") {
      throw InputError(fmt::format("--buffers {} is not available on the mpi backend; accepted: host", buffers));
    }
  }
  std::optional<std::string> algo_waiver(std::string_view algo, std::string_view collective,
                                         int /*graph*/) const override {
    if (algo == "auto" || algo == "flat") return std::nullopt;
    if (algo == kPostedAlltoallAlgo) return posted_waiver(collective);
    return fmt::format(
        "algorithm '{}' is not available on the mpi backend (it runs: auto, flat, hierarchical; linear for "
        "all-to-all)",
        algo);
  }
  bool polls_for_overlap() const override { return true; }
  std::string instance_key(std::string_view name, std::string_view algo, std::string_view /*buffers*/,
                           bool overlap) const override {
    std::string key(name);
    if (algo == kPostedAlltoallAlgo) key += fmt::format("|{}", algo);
    return overlap ? key + "|overlap" : key;
  }

 private:
  // The posted schedule is an all-to-all(v): collectives that run one (alltoall, alltoallv, MoE).
  static std::optional<std::string> posted_waiver(std::string_view collective) {
    const CollectiveFacts* facts = find_collective_facts(collective);
    if (facts != nullptr && (facts->nccl_op == NcclOp::alltoall || facts->nccl_op == NcclOp::alltoallv)) {
      return std::nullopt;
    }
    return fmt::format(
        "algorithm '{}' is an all-to-all schedule (alltoall, alltoallv, moe-dispatch, moe-combine, "
        "moe-roundtrip); {} runs none",
        kPostedAlltoallAlgo, collective);
  }
};

#ifndef COLLBENCH_HAVE_NCCL
// NCCL in a binary built without it: device buffers by default (make_backend refuses the rest).
class NcclNotBuiltPolicy final : public BackendPolicy {
 public:
  std::string default_buffers(std::string_view /*algo*/) const override { return "plain"; }
  bool replays_graphs() const override { return true; }  // make_backend says it is not built
};
#endif

}  // namespace

const BackendPolicy& backend_policy(std::string_view name) {
  static const BackendPolicy kDefault;
  static const MpiPolicy kMpi;
  if (name == "mpi") return kMpi;
#ifdef COLLBENCH_HAVE_NCCL
  if (name == "nccl") return nccl::nccl_policy();
#else
  static const NcclNotBuiltPolicy kNccl;
  if (name == "nccl") return kNccl;
#endif
  return kDefault;
}

void check_graph(std::string_view name, int graph) {
  if (graph < 0) {
    throw InputError(fmt::format("--graph/-G {}: must be 0 (off) or the number of launches a CUDA graph holds", graph));
  }
  if (graph == 0 || backend_policy(name).replays_graphs()) return;
  std::vector<std::string> able;
  for (const auto& entry : backend_registry()) {
    if (backend_policy(entry.name).replays_graphs()) able.push_back(entry.name);
  }
  throw InputError(fmt::format(
      "--graph/-G {}: CUDA-graph replay is not available on the {} backend (it runs each operation when it is "
      "called); backends that support it: {}",
      graph, name, fmt::join(able, ", ")));
}

void request_abort_all() noexcept {
#ifdef COLLBENCH_HAVE_NCCL
  nccl::request_abort();
#endif
}

}  // namespace collbench::backend
