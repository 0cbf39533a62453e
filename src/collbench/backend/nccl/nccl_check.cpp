// Error translation for CUDA runtime and NCCL calls.
#include "collbench/backend/nccl/nccl_check.hpp"

#include <fmt/format.h>
#include <sched.h>

#include <atomic>
#include <string_view>

#include "collbench/backend/nccl/nccl_api.hpp"

namespace collbench::backend::nccl {
namespace {
std::atomic<bool> g_failure{false};

// A checked call's text as written, less the loader's "api()." (nccl_api.hpp): ncclAllReduce(...).
std::string_view call_text(std::string_view call) {
  constexpr std::string_view kPrefix = "api().";
  if (call.substr(0, kPrefix.size()) == kPrefix) call.remove_prefix(kPrefix.size());
  return call;
}
}  // namespace

ncclResult_t wait_in_progress(ncclComm_t comm) noexcept {
  if (comm == nullptr) return ncclInProgress;
  for (;;) {
    ncclResult_t state = ncclSuccess;
    const ncclResult_t rc = api().ncclCommGetAsyncError(comm, &state);
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
  std::string text = fmt::format("{} ({})", api().ncclGetErrorString(code), static_cast<int>(code));
  const char* last = api().ncclGetLastError(comm);
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
  throw RuntimeFailure(fmt::format("{}:{}: {} failed: {}", file, line, call_text(call), nccl_error_text(code, comm)));
}

}  // namespace collbench::backend::nccl
