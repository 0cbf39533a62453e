// Error translation for CUDA runtime and NCCL calls.
#include "collbench/backend/nccl/nccl_check.hpp"

#include <fmt/format.h>
#include <sched.h>

#include <atomic>

namespace collbench::backend::nccl {
namespace {
std::atomic<bool> g_failure{false};
}  // namespace

ncclResult_t wait_in_progress(ncclComm_t comm) noexcept {
  if (comm == nullptr) return ncclInProgress;
  for (;;) {
    ncclResult_t state = ncclSuccess;
    const ncclResult_t rc = ncclCommGetAsyncError(comm, &state);
    if (rc != ncclSuccess) return rc;
    if (state != ncclInProgress) return state;
    sched_yield();
  }
}

bool failure_seen() noexcept {
  return g_failure.load(std::memory_order_relaxed);
}
void mark_failure() noexcept {
  g_failure.store(true, std::memory_order_relaxed);
}

std::string cuda_error_text(cudaError_t code) {
  return fmt::format("{} ({}): {}", cudaGetErrorName(code), static_cast<int>(code), cudaGetErrorString(code));
}

std::string nccl_error_text(ncclResult_t code, ncclComm_t comm) {
  std::string text = fmt::format("{} ({})", ncclGetErrorString(code), static_cast<int>(code));
  const char* last = ncclGetLastError(comm);
  if (last != nullptr && last[0] != '\0') text += fmt::format("; NCCL: {}", last);
  return text;
}

void throw_cuda_error(cudaError_t code, const char* call, const char* file, int line) {
  mark_failure();
  (void)cudaGetLastError();  // clear a sticky-free error so later diagnostics are not confused
  throw RuntimeFailure(fmt::format("{}:{}: {} failed: {}", file, line, call, cuda_error_text(code)));
}

void throw_nccl_error(ncclResult_t code, ncclComm_t comm, const char* call, const char* file, int line) {
  mark_failure();
  throw RuntimeFailure(fmt::format("{}:{}: {} failed: {}", file, line, call, nccl_error_text(code, comm)));
}

}  // namespace collbench::backend::nccl
