// cudaMemGetInfo of the rank's GPU (device_memory.hpp).
#include "collbench/backend/nccl/device_memory.hpp"

#include <cuda_runtime.h>

#include <cstddef>
#include <string>

#include "collbench/backend/nccl/nccl_host.hpp"

namespace collbench::backend::nccl {

std::optional<backend::DeviceMemory> query_device_memory(int local_rank, int ranks_on_host) {
  int count = 0;
  if (cudaGetDeviceCount(&count) != cudaSuccess) {
    (void)cudaGetLastError();
    return std::nullopt;
  }
  // One visible GPU: the launcher's binding (or a single-GPU host); the backend's own check
  // refuses a second rank there.
  std::string why;
  const auto device = device_for_local_rank(local_rank, ranks_on_host, count, why, count == 1);
  if (!device) return std::nullopt;
  std::size_t free_bytes = 0, total_bytes = 0;
  if (cudaSetDevice(*device) != cudaSuccess || cudaMemGetInfo(&free_bytes, &total_bytes) != cudaSuccess) {
    (void)cudaGetLastError();
    return std::nullopt;
  }
  return backend::DeviceMemory{*device, free_bytes, total_bytes, "cudaMemGetInfo"};
}

}  // namespace collbench::backend::nccl
