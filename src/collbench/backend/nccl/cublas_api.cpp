// The cuBLAS loader (cublas_api.hpp).
#include "collbench/backend/nccl/cublas_api.hpp"

#include <fmt/format.h>

#include <optional>
#include <string>

#include "collbench/backend/nccl/dynamic_library.hpp"
#include "collbench/backend/nccl/gpu_libraries.hpp"

#ifndef COLLBENCH_CUBLAS_LIBDIR
#define COLLBENCH_CUBLAS_LIBDIR ""
#endif

namespace collbench::backend::nccl {
namespace {

using Loaded = LoadedLibrary<CublasApi>;

Loaded load() {
  Loaded l;
  const std::string soname = fmt::format("libcublas.so.{}", CUBLAS_VER_MAJOR);
  std::string error;
  if (!l.lib.open(library_candidates("COLLBENCH_CUBLAS_LIBRARY", soname, COLLBENCH_CUBLAS_LIBDIR), error)) {
    l.problem = fmt::format(
        "overlap compute load 'gemm': cannot load cuBLAS ({}); install the CUDA {} math libraries (libcublas), put "
        "them on LD_LIBRARY_PATH or set COLLBENCH_CUBLAS_LIBRARY, or use another --overlap load (stream, sleep)",
        error, CUBLAS_VER_MAJOR);
    return l;
  }
#define CB_CUBLAS_RESOLVE(name, type)                                                                 \
  l.table.name = reinterpret_cast<type>(l.lib.symbol(#name));                                         \
  if (l.table.name == nullptr && !l.problem) {                                                        \
    l.problem = fmt::format("overlap compute load 'gemm': {} has no symbol {}", l.lib.path(), #name); \
  }
  CB_CUBLAS_SYMBOLS(CB_CUBLAS_RESOLVE)
#undef CB_CUBLAS_RESOLVE
  return l;
}

const Loaded& loaded() {
  static const Loaded l = load();
  return l;
}

}  // namespace

const std::optional<std::string>& cublas_load_problem() {
  return loaded().problem;
}

const CublasApi& blas() {
  return loaded().table_or_throw();
}

std::optional<std::string> try_load_cublas() {
  return load().problem;
}

}  // namespace collbench::backend::nccl
