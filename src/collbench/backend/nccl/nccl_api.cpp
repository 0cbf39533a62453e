// The NCCL loader (nccl_api.hpp).
#include "collbench/backend/nccl/nccl_api.hpp"

#include <fmt/format.h>

#include "collbench/backend/nccl/dynamic_library.hpp"
#include "collbench/backend/nccl/gpu_libraries.hpp"
#include "collbench/core/error.hpp"

#ifndef COLLBENCH_NCCL_LIBDIR
#define COLLBENCH_NCCL_LIBDIR ""
#endif

namespace collbench::backend::nccl {
namespace {

using Loaded = LoadedLibrary<NcclApi>;

std::string soname() {
  return fmt::format("libnccl.so.{}", NCCL_MAJOR);
}

// Resolves every symbol; the first missing required one is the problem.
std::optional<std::string> resolve(const DynamicLibrary& lib, NcclApi& t) {
  std::optional<std::string> missing;
#define CB_NCCL_RESOLVE(name)                                     \
  t.name = reinterpret_cast<decltype(t.name)>(lib.symbol(#name)); \
  if (t.name == nullptr && !missing) missing = #name;
  CB_NCCL_REQUIRED_SYMBOLS(CB_NCCL_RESOLVE)
#undef CB_NCCL_RESOLVE
#define CB_NCCL_RESOLVE_OPTIONAL(name) t.name = reinterpret_cast<decltype(t.name)>(lib.symbol(#name));
  CB_NCCL_OPTIONAL_SYMBOLS(CB_NCCL_RESOLVE_OPTIONAL)
#undef CB_NCCL_RESOLVE_OPTIONAL
  if (!missing) return std::nullopt;
  return fmt::format(
      "backend 'nccl': {} has no symbol {} (collbench was built against NCCL {}.{}.{}; install a matching libnccl, or "
      "set COLLBENCH_NCCL_LIBRARY to one), or use --backend mpi",
      lib.path(), *missing, NCCL_MAJOR, NCCL_MINOR, NCCL_PATCH);
}

Loaded load() {
  Loaded l;
  const auto candidates = library_candidates("COLLBENCH_NCCL_LIBRARY", soname(), COLLBENCH_NCCL_LIBDIR);
  std::string error;
  if (!l.lib.open(candidates, error)) {
    l.problem = fmt::format(
        "backend 'nccl': cannot load the NCCL library ({}); install NCCL {} (Debian/Ubuntu: libnccl2), put it on "
        "LD_LIBRARY_PATH or set COLLBENCH_NCCL_LIBRARY to its file, or use --backend mpi",
        error, NCCL_MAJOR);
    return l;
  }
  l.problem = resolve(l.lib, l.table);
  return l;
}

const Loaded& loaded() {
  static const Loaded l = load();
  return l;
}

}  // namespace

const std::optional<std::string>& nccl_load_problem() {
  return loaded().problem;
}

const NcclApi& api() {
  return loaded().table_or_throw();
}

std::string nccl_library_path() {
  const Loaded& l = loaded();
  return l.problem ? std::string() : l.lib.path();
}

void* nccl_symbol(const char* name) {
  const Loaded& l = loaded();
  return l.problem ? nullptr : l.lib.symbol(name);
}

void throw_missing_symbol(const char* name) {
  throw RuntimeFailure(fmt::format("the loaded NCCL library {} has no symbol {}: it is older than this call needs",
                                   nccl_library_path(), name));
}

std::optional<std::string> try_load_nccl() {
  return load().problem;
}

NcclLoadCheck check_nccl_library() {
  const Loaded l = load();
  NcclLoadCheck c;
  c.problem = l.problem;
  if (c.problem) return c;
  if (l.table.ncclGetVersion(&c.version) != ncclSuccess) c.version = 0;
#define CB_NCCL_ABSENT(name) \
  if (l.table.name == nullptr) c.absent_optional.emplace_back(#name);
  CB_NCCL_OPTIONAL_SYMBOLS(CB_NCCL_ABSENT)
#undef CB_NCCL_ABSENT
  return c;
}

}  // namespace collbench::backend::nccl
