// Setting up the NCCL backend (nccl_setup.cpp): collective over the backend's private duplicate
// of MPI_COMM_WORLD, so every rank gets the same outcome.
#pragma once

#include <map>
#include <memory>
#include <string>

#include "collbench/backend/nccl/nccl_context.hpp"

namespace collbench::backend::nccl {

// Collective: returns when `problem` is empty on every rank; otherwise every rank throws
// InputError (exit 2) with the text of the lowest failing world rank (rank 0 prints it), so a
// partial failure does not leave the others waiting in NCCL's initialisation.
void throw_first_problem(const Context& ctx, const std::string& problem);

// One rank per GPU, by local rank (or the launcher's one GPU per task): sets ctx.device,
// ctx.local_rank, ctx.ranks_on_host and ctx.cc_major, or throws InputError on every rank.
void select_device(Context& ctx);

// The world communicator: rank 0's unique id broadcast over MPI, ncclCommInitRankConfig.
std::shared_ptr<CommOwner> create_world(const std::shared_ptr<Context>& ctx);

// Versions, settings and every rank's GPU facts ("rank.<r>.<key>"); also fills
// ctx.world_in_switch (nvls_host.hpp).
std::map<std::string, std::string> gather_provenance(Context& ctx);

}  // namespace collbench::backend::nccl
