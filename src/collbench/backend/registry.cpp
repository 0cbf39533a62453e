// The backend table.
#include "collbench/backend/registry.hpp"

#include "collbench/backend/mpi/mpi_backend.hpp"
#include "collbench/core/error.hpp"
#include "collbench/core/names.hpp"
#ifdef COLLBENCH_HAVE_NCCL
#include "collbench/backend/nccl/nccl_backend.hpp"
#endif

namespace collbench::backend {

const std::vector<BackendEntry>& backend_registry() {
  static const std::vector<BackendEntry> kEntries{
      {"mpi", "MPI collectives on host buffers (CPU)", true, &make_mpi_backend, false},
#ifdef COLLBENCH_HAVE_NCCL
      {"nccl", "NCCL collectives on GPU buffers, one rank per GPU", true, &make_nccl_backend, true},
#else
      {"nccl", "NCCL collectives on GPU buffers (not built: configured without CUDA/NCCL)", false, nullptr, true},
#endif
  };
  return kEntries;
}

const BackendEntry& backend_entry(const std::string& name) {
  parse_backend(name);  // unknown names: InputError with the accepted list
  for (const auto& entry : backend_registry()) {
    if (entry.name == name) return entry;
  }
  throw InputError("backend '" + name + "' has no implementation");
}

std::unique_ptr<Backend> make_backend(const std::string& name, const BackendOptions& options) {
  parse_backend(name);  // unknown names: InputError with the accepted list
  for (const auto& entry : backend_registry()) {
    if (entry.name != name) continue;
    if (!entry.built || entry.make == nullptr) {
      throw InputError("backend '" + name +
                       "' is not built into this binary (it was configured without the CUDA toolkit and "
                       "NCCL); rebuild with -DCOLLBENCH_WITH_CUDA=ON, or use --backend mpi");
    }
    return entry.make(options);
  }
  throw InputError("backend '" + name + "' has no implementation");
}

}  // namespace collbench::backend
