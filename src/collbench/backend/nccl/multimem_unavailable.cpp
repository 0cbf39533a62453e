// cb-multimem for a build without NCCL's device API (cmake/CollbenchCuda.cmake,
// collbench_nccl_device_api: NCCL headers older than 2.28, or a CUDA compiler other than nvcc).
// multimem_not_built() gives the reason; the in-switch probe carries it and in_switch_waiver
// waives every cb-multimem case with it (nvls_host.hpp), so nothing below is reached by a run.
#include <stdexcept>
#include <string>

#include "collbench/backend/nccl/multimem_kernels.hpp"

#ifndef COLLBENCH_NCCL_DEVICE_API_REASON
#error "COLLBENCH_NCCL_DEVICE_API_REASON: set by src/collbench/backend/nccl/CMakeLists.txt"
#endif

namespace collbench::backend::nccl {
namespace {

[[noreturn]] void unreachable(const char* what) {
  throw std::logic_error(std::string("cb-multimem ") + what +
                         " called in a build without it: " + COLLBENCH_NCCL_DEVICE_API_REASON);
}

}  // namespace

struct MultimemDevComm::Impl {};

const char* multimem_not_built() {
  return COLLBENCH_NCCL_DEVICE_API_REASON;
}

MultimemDevComm::MultimemDevComm(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

ncclResult_t MultimemDevComm::create(ncclComm_t /*comm*/, std::unique_ptr<MultimemDevComm>& /*out*/,
                                     uint32_t /*max_blocks*/) {
  return ncclInvalidUsage;
}

MultimemDevComm::~MultimemDevComm() = default;

void MultimemDevComm::forget() noexcept {}

int MultimemDevComm::lsa_rank() const {
  unreachable("lsa_rank");
}

int MultimemDevComm::lsa_size() const {
  unreachable("lsa_size");
}

uint32_t MultimemDevComm::max_blocks() const {
  unreachable("max_blocks");
}

void MultimemDevComm::allreduce(ncclWindow_t, std::uint64_t, ncclWindow_t, std::uint64_t, std::uint64_t, Dtype,
                                cudaStream_t) const {
  unreachable("allreduce");
}

void MultimemDevComm::reduce_scatter(ncclWindow_t, std::uint64_t, void*, std::uint64_t, Dtype, cudaStream_t) const {
  unreachable("reduce_scatter");
}

void MultimemDevComm::allgather(const void*, ncclWindow_t, std::uint64_t, std::uint64_t, Dtype, cudaStream_t) const {
  unreachable("allgather");
}

int lsa_team_size(ncclComm_t /*comm*/) {
  return -1;
}

}  // namespace collbench::backend::nccl
