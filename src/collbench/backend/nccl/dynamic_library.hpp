// RAII owner of one shared library opened with dlopen, for the GPU libraries the binary must not
// need at load time (NCCL, cuBLAS: nccl_api.hpp, cublas_api.hpp; docs/nccl-backend.md "Linking").
// No CUDA or NCCL header: usable from every translation unit, C++17 as well (the .cu files).
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace collbench::backend::nccl {

class DynamicLibrary {
 public:
  DynamicLibrary() = default;
  DynamicLibrary(const DynamicLibrary&) = delete;
  DynamicLibrary& operator=(const DynamicLibrary&) = delete;
  DynamicLibrary(DynamicLibrary&& other) noexcept;
  DynamicLibrary& operator=(DynamicLibrary&& other) noexcept;
  ~DynamicLibrary();

  // Opens the first of `candidates` (names for the dynamic loader's search, or paths) that
  // loads. On failure the library stays closed and `error` lists every candidate with dlerror().
  // RTLD_NODELETE: closing the handle never unmaps a library whose threads may still run.
  bool open(const std::vector<std::string>& candidates, std::string& error);
  [[nodiscard]] bool is_open() const { return handle_ != nullptr; }
  // The file that was opened (its path as the loader found it, or the name given).
  [[nodiscard]] const std::string& path() const { return path_; }
  // dlsym: nullptr when the library does not export `name`.
  [[nodiscard]] void* symbol(const char* name) const;

 private:
  void close() noexcept;
  void* handle_ = nullptr;
  std::string path_;
};

// The candidates for a library: `env_override` when that variable is set (only it), else `soname`
// (the loader's search: LD_LIBRARY_PATH, the runpath, ld.so.cache) and then `soname` in
// `fallback_dir` (the directory CMake found it in at build time) when that is not empty.
std::vector<std::string> library_candidates(const char* env_override, const std::string& soname,
                                            const std::string& fallback_dir);

// InputError (exit 2) with `problem`: a library the user asked for cannot be used.
[[noreturn]] void throw_load_problem(const std::string& problem);

// A library with its table of typed function pointers (nccl_api.hpp, cublas_api.hpp), loaded once
// per process: `problem` says why it cannot be used (nullopt: every required symbol resolved).
template <class Table>
struct LoadedLibrary {
  DynamicLibrary lib;
  Table table{};
  std::optional<std::string> problem;

  [[nodiscard]] const Table& table_or_throw() const {
    if (problem) throw_load_problem(*problem);
    return table;
  }
};

}  // namespace collbench::backend::nccl
