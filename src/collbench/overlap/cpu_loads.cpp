// The CPU load table: load name -> factory (the GPU table is in backend/nccl/gpu_loads.cpp).
#include <map>

#include "collbench/core/error.hpp"
#include "collbench/overlap/load.hpp"

namespace collbench::overlap {

std::unique_ptr<ComputeLoad> make_cpu_load(const ComputeSpec& spec) {
  using Factory = std::unique_ptr<ComputeLoad> (*)(const ComputeSpec&);
  static const std::map<std::string, Factory> kFactories{
      {"gemm", &make_cpu_gemm}, {"stream", &make_cpu_stream}, {"sleep", &make_cpu_sleep}};
  const auto it = kFactories.find(spec.load);
  if (it == kFactories.end()) {
    throw InputError(unknown_name_message("CPU compute load", spec.load, compute_load_names()));
  }
  return it->second(spec);
}

}  // namespace collbench::overlap
