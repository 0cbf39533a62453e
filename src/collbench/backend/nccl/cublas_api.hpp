// cuBLAS, loaded at run time like NCCL (nccl_api.hpp): only the overlap mode's `gemm` compute
// load uses it, so the binary does not link libcublas. The first use opens
// libcublas.so.<CUBLAS_VER_MAJOR> (COLLBENCH_CUBLAS_LIBRARY overrides the file; then the CUDA
// toolkit's library directory found at build time); a library that cannot be opened, or lacks a
// symbol, is an InputError (exit 2) naming the library and the symbol.
#pragma once

#include <cublas_v2.h>

// Every cuBLAS function collbench calls, by its exported name (cublas_v2.h maps cublasCreate to
// cublasCreate_v2, and so on), with its pointer type: cublasGemmEx has a C++ overload in the
// header (cudaDataType as compute type), so its C signature is spelled out.
using CublasGemmExFn = cublasStatus_t (*)(cublasHandle_t, cublasOperation_t, cublasOperation_t, int, int, int,
                                          const void*, const void*, cudaDataType, int, const void*, cudaDataType, int,
                                          const void*, void*, cudaDataType, int, cublasComputeType_t, cublasGemmAlgo_t);
#define CB_CUBLAS_SYMBOLS(X)                               \
  X(cublasCreate_v2, decltype(&::cublasCreate_v2))         \
  X(cublasDestroy_v2, decltype(&::cublasDestroy_v2))       \
  X(cublasSetStream_v2, decltype(&::cublasSetStream_v2))   \
  X(cublasGemmEx, CublasGemmExFn)                          \
  X(cublasGetStatusName, decltype(&::cublasGetStatusName)) \
  X(cublasGetStatusString, decltype(&::cublasGetStatusString))

namespace collbench::backend::nccl {

struct CublasApi {
#define CB_CUBLAS_API_MEMBER(name, type) type name = nullptr;
  CB_CUBLAS_SYMBOLS(CB_CUBLAS_API_MEMBER)
#undef CB_CUBLAS_API_MEMBER
};

// The table, loaded once per process. Throws InputError naming the library (and the missing
// symbol) when cuBLAS cannot be loaded.
[[nodiscard]] const CublasApi& blas();

}  // namespace collbench::backend::nccl
