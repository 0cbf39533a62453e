// The NCCL backend's Comm (nccl_comm.cpp): one per communicator handed to the runner.
#pragma once

#include <memory>

#include "collbench/backend/nccl/nccl_context.hpp"

namespace collbench::backend::nccl {

// A Comm over `owner`'s communicator, issuing on `ctx`'s stream.
std::unique_ptr<Comm> make_nccl_comm(std::shared_ptr<Context> ctx, std::shared_ptr<CommOwner> owner);

// The communicator behind a Comm of this backend, or nullptr for any other Comm.
CommOwner* comm_owner(Comm& comm);

}  // namespace collbench::backend::nccl
