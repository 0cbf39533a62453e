// The free memory of the GPU a rank will use, read before the NCCL backend exists (run's memory
// check, run/memory_budget.hpp): the device select_device() will pick for the local rank
// (nccl_host.hpp device_for_local_rank), its cudaMemGetInfo.
#pragma once

#include <optional>

#include "collbench/backend/policy.hpp"

namespace collbench::backend::nccl {

// backend::DeviceMemory (policy.hpp), not the allocation handle nccl::DeviceMemory: the name is
// qualified so a unity batch that sees both picks the right one.
// nullopt when no device can be picked or read; select_device() then refuses the run with the
// reason when the backend is created.
std::optional<backend::DeviceMemory> query_device_memory(int local_rank, int ranks_on_host);

}  // namespace collbench::backend::nccl
