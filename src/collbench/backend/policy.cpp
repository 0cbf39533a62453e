// The MPI backend's policy and the lookup by name (the default policy: policy_base.cpp).
#include "collbench/backend/policy.hpp"

#include <fmt/format.h>

#include "collbench/core/error.hpp"
#ifdef COLLBENCH_HAVE_NCCL
#include "collbench/backend/nccl/nccl_backend.hpp"
#include "collbench/backend/nccl/nccl_policy.hpp"
#endif

namespace collbench::backend {

namespace {

// MPI: host memory, the library's own algorithms (auto, flat; hierarchical is the runner's),
// one instance per run (and one for overlap mode, which polls).
class MpiPolicy final : public BackendPolicy {
 public:
  void check_buffers(std::string_view buffers) const override {
    if (buffers != "host" && buffers != "plain") {
      throw InputError(fmt::format("--buffers {} is not available on the mpi backend; accepted: host", buffers));
    }
  }
  std::optional<std::string> algo_waiver(std::string_view algo, std::string_view /*collective*/,
                                         int /*graph*/) const override {
    if (algo == "auto" || algo == "flat") return std::nullopt;
    return fmt::format("algorithm '{}' is not available on the mpi backend (it runs: auto, flat, hierarchical)", algo);
  }
  bool polls_for_overlap() const override { return true; }
  std::string instance_key(std::string_view name, std::string_view /*algo*/, std::string_view /*buffers*/,
                           bool overlap) const override {
    return overlap ? fmt::format("{}|overlap", name) : std::string(name);
  }
};

#ifndef COLLBENCH_HAVE_NCCL
// NCCL in a binary built without it: device buffers by default (make_backend refuses the rest).
class NcclNotBuiltPolicy final : public BackendPolicy {
 public:
  std::string default_buffers(std::string_view /*algo*/) const override { return "plain"; }
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

void request_abort_all() noexcept {
#ifdef COLLBENCH_HAVE_NCCL
  nccl::request_abort();
#endif
}

}  // namespace collbench::backend
