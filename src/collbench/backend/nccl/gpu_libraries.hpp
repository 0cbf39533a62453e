// Whether the NVIDIA libraries the NCCL backend opens at run time can be loaded (nccl_api.hpp,
// cublas_api.hpp). No CUDA, NCCL or cuBLAS header, so CPU tests can ask.
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace collbench::backend::nccl {

// Loads libnccl and resolves the symbols collbench uses, once per process (thread-safe).
// nullopt when NCCL is usable, else the reason, naming the library (and the missing symbol).
[[nodiscard]] const std::optional<std::string>& nccl_load_problem();

// The file NCCL was loaded from ("" when it could not be loaded).
[[nodiscard]] std::string nccl_library_path();

// The same for cuBLAS (the overlap mode's gemm load).
[[nodiscard]] const std::optional<std::string>& cublas_load_problem();

// A fresh attempt to load each library (opened and closed again), uncached: what the process's
// first use would conclude with the current environment. For tests and diagnostics.
[[nodiscard]] std::optional<std::string> try_load_nccl();
[[nodiscard]] std::optional<std::string> try_load_cublas();

// What a fresh load of libnccl finds (uncached, like try_load_nccl): the problem, or the library's
// ncclGetVersion and the optional symbols it lacks (nccl_api.hpp CB_NCCL_OPTIONAL_SYMBOLS), which
// an NCCL older than the headers (2.21-2.27) is expected to lack (nccl_compat.hpp).
struct NcclLoadCheck {
  std::optional<std::string> problem;
  int version = 0;
  std::vector<std::string> absent_optional;
};
[[nodiscard]] NcclLoadCheck check_nccl_library();

}  // namespace collbench::backend::nccl
