// Backend registry: name -> factory. `mpi` is always built; `nccl` when the binary was built
// with CUDA (COLLBENCH_WITH_CUDA). Asking for a backend this binary or machine cannot serve
// is an InputError (exit 2) that says why.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "collbench/backend/backend.hpp"
#include "collbench/backend/options.hpp"

namespace collbench::backend {

struct BackendEntry {
  std::string name;
  std::string description;
  bool built;
  std::unique_ptr<Backend> (*make)(const BackendOptions&);
  // Its backends offer device_patterns() (fill and check on the device, --verify device).
  bool device_verification = false;
};

const std::vector<BackendEntry>& backend_registry();
std::unique_ptr<Backend> make_backend(const std::string& name, const BackendOptions& options);
// The entry of a known backend name (InputError with the accepted names otherwise).
const BackendEntry& backend_entry(const std::string& name);

}  // namespace collbench::backend
