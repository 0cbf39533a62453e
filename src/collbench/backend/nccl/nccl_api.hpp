// NCCL, loaded at run time: the binary does not link libnccl, so it starts (and runs --backend
// mpi) on machines without NVIDIA's libraries. The first use opens libnccl.so.<NCCL_MAJOR>
// (COLLBENCH_NCCL_LIBRARY overrides the file; then the directory CMake found NCCL in) and
// resolves every symbol below into typed function pointers; a library that cannot be opened, or
// lacks a required symbol, is an InputError (exit 2) naming the library and the symbol.
// docs/nccl-backend.md, "Linking".
//
// Call sites write api().ncclAllReduce(...): the same name and signature as nccl.h.
// C++17 (the .cu files include it).
#pragma once

#include <nccl.h>

#include <optional>
#include <string>

#include "collbench/backend/nccl/gpu_libraries.hpp"

// Every NCCL host function collbench calls. Required: a library without one is refused.
#define CB_NCCL_REQUIRED_SYMBOLS(X) \
  X(ncclGetVersion)                 \
  X(ncclGetErrorString)             \
  X(ncclGetLastError)               \
  X(ncclGetUniqueId)                \
  X(ncclCommInitRankConfig)         \
  X(ncclCommSplit)                  \
  X(ncclCommUserRank)               \
  X(ncclCommCount)                  \
  X(ncclCommGetAsyncError)          \
  X(ncclCommFinalize)               \
  X(ncclCommDestroy)                \
  X(ncclCommAbort)                  \
  X(ncclCommRegister)               \
  X(ncclCommDeregister)             \
  X(ncclMemAlloc)                   \
  X(ncclMemFree)                    \
  X(ncclGroupStart)                 \
  X(ncclGroupEnd)                   \
  X(ncclAllReduce)                  \
  X(ncclReduceScatter)              \
  X(ncclAllGather)                  \
  X(ncclBroadcast)                  \
  X(ncclReduce)                     \
  X(ncclSend)                       \
  X(ncclRecv)

// Newer than the oldest NCCL collbench runs with: nullptr when the loaded library predates them.
// Each use is gated on ncclGetVersion() (kNcclWindowVersion, kNcclAlltoAllVersion) and goes
// through need(). The device API's host functions (ncclDevCommCreate, ncclDevCommDestroy,
// ncclTeamLsa) have types from nccl_device.h, so multimem_kernels.cu resolves them with
// nccl_symbol().
#define CB_NCCL_OPTIONAL_SYMBOLS(X) \
  X(ncclCommWindowRegister)         \
  X(ncclCommWindowDeregister)       \
  X(ncclAlltoAll)

namespace collbench::backend::nccl {

struct NcclApi {
#define CB_NCCL_API_MEMBER(name) decltype(&::name) name = nullptr;
  CB_NCCL_REQUIRED_SYMBOLS(CB_NCCL_API_MEMBER)
  CB_NCCL_OPTIONAL_SYMBOLS(CB_NCCL_API_MEMBER)
#undef CB_NCCL_API_MEMBER
};

// The table, loaded on first use. Throws InputError with nccl_load_problem()'s text
// (gpu_libraries.hpp) when NCCL could not be loaded.
[[nodiscard]] const NcclApi& api();

// Another symbol of the loaded libnccl (nullptr when it has none, or NCCL is not loaded).
[[nodiscard]] void* nccl_symbol(const char* name);

// An optional entry point, or RuntimeFailure naming it when the loaded library lacks it (the
// version checks should have prevented the call).
template <class F>
F need(F fn, const char* name);

[[noreturn]] void throw_missing_symbol(const char* name);

template <class F>
F need(F fn, const char* name) {
  if (fn == nullptr) throw_missing_symbol(name);
  return fn;
}

}  // namespace collbench::backend::nccl

// api().ncclAlltoAll with the check that the loaded library has it.
#define CB_NCCL_OPTIONAL(name) ::collbench::backend::nccl::need(::collbench::backend::nccl::api().name, #name)
