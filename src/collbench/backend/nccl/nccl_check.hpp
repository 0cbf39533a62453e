// CB_CHECK_CUDA / CB_CHECK_NCCL: turn a failing CUDA runtime or NCCL call into an exception
// (RuntimeFailure, exit 3) carrying file, line, the call's text and the library's own error
// string (for NCCL also ncclGetLastError, which names the cause). A failure also marks the
// process's NCCL state as failed, so communicators are aborted rather than finalised on the way
// out (finalising waits for peers that may never come).
#pragma once

#include <cuda_runtime.h>
#include <nccl.h>

#include <string>

#include "collbench/core/error.hpp"

namespace collbench::backend::nccl {

// "cudaErrorNoDevice (100): no CUDA-capable device is detected"
std::string cuda_error_text(cudaError_t code);
// "unhandled cuda error (1); last error: ..."
std::string nccl_error_text(ncclResult_t code, ncclComm_t comm);

[[noreturn]] void throw_cuda_error(cudaError_t code, const char* call, const char* file, int line);
[[noreturn]] void throw_nccl_error(ncclResult_t code, ncclComm_t comm, const char* call, const char* file, int line);

// NCCL in non-blocking mode (NCCL_COMM_BLOCKING=0 overrides ncclConfig_t.blocking) answers
// ncclInProgress and finishes the call in the background: polls ncclCommGetAsyncError(comm) until
// the communicator leaves that state and returns its result. The backend creates communicators
// in blocking mode (docs/nccl-backend.md), so this is the fallback for a mode it did not ask for.
// nullptr: nothing to poll, ncclInProgress is returned.
ncclResult_t wait_in_progress(ncclComm_t comm) noexcept;

// True once any CUDA or NCCL call of this process failed (or an abort was requested).
bool failure_seen() noexcept;
void mark_failure() noexcept;

}  // namespace collbench::backend::nccl

#define CB_CHECK_CUDA(call)                                                                 \
  do {                                                                                      \
    const cudaError_t cb_cuda_rc_ = (call);                                                 \
    if (cb_cuda_rc_ != cudaSuccess)                                                         \
      ::collbench::backend::nccl::throw_cuda_error(cb_cuda_rc_, #call, __FILE__, __LINE__); \
  } while (0)

// `comm` may be nullptr (NCCL then reports the thread's last error). It is read after the call,
// so a call that creates a communicator names it (ncclInProgress is then waited for on it).
#define CB_CHECK_NCCL_COMM(comm, call)                                                                     \
  do {                                                                                                     \
    ncclResult_t cb_nccl_rc_ = (call);                                                                     \
    if (cb_nccl_rc_ == ncclInProgress) cb_nccl_rc_ = ::collbench::backend::nccl::wait_in_progress((comm)); \
    if (cb_nccl_rc_ != ncclSuccess)                                                                        \
      ::collbench::backend::nccl::throw_nccl_error(cb_nccl_rc_, (comm), #call, __FILE__, __LINE__);        \
  } while (0)

#define CB_CHECK_NCCL(call) CB_CHECK_NCCL_COMM(nullptr, call)
