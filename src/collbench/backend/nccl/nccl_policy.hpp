// The NCCL backend's answers to the runner (backend/policy.hpp).
#pragma once

#include "collbench/backend/policy.hpp"

namespace collbench::backend::nccl {

const BackendPolicy& nccl_policy();

}  // namespace collbench::backend::nccl
