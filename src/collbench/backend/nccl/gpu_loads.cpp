// The GPU load table: load name -> factory (the CPU table is overlap/cpu_loads.cpp).
#include "collbench/backend/nccl/gpu_loads.hpp"

#include <map>
#include <string>

#include "collbench/core/error.hpp"

namespace collbench::backend::nccl {

std::unique_ptr<overlap::ComputeLoad> make_gpu_load(const overlap::ComputeSpec& spec) {
  using Factory = std::unique_ptr<overlap::ComputeLoad> (*)(const overlap::ComputeSpec&);
  static const std::map<std::string, Factory> kFactories{
      {"gemm", &make_gpu_gemm}, {"stream", &make_gpu_stream}, {"sleep", &make_gpu_sleep}};
  const auto it = kFactories.find(spec.load);
  if (it == kFactories.end()) {
    throw InputError(unknown_name_message("GPU compute load", spec.load, overlap::compute_load_names()));
  }
  return it->second(spec);
}

}  // namespace collbench::backend::nccl
