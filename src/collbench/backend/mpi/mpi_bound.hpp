// The MPI communicator's bound calls (Comm::bind_*): count, datatype, op, in-place marker and
// MPI communicator converted once, so that a launch is one indirect call and the blocking MPI
// collective (the timed loop's launch target, docs/performance.md section 5).
#pragma once

#include <mpi.h>

#include <cstddef>

#include "collbench/backend/bound_call.hpp"
#include "collbench/core/dtype.hpp"
#include "collbench/core/redop.hpp"

namespace collbench::backend {

// `count` as MPI's int count; InputError naming the count and INT_MAX when it does not fit.
int to_int_count(std::size_t count);

// Blocking MPI collectives on `comm` with the arguments of the Comm methods of the same name (the
// same in-place conventions, backend.hpp); each checks its counts when it binds.
BoundCall bind_mpi_allreduce(MPI_Comm comm, const void* send, void* recv, std::size_t count, Dtype dtype, Redop redop);
BoundCall bind_mpi_reduce_scatter(MPI_Comm comm, int comm_size, const void* send, void* recv, std::size_t recvcount,
                                  Dtype dtype, Redop redop);
BoundCall bind_mpi_allgather(MPI_Comm comm, int comm_rank, int comm_size, const void* send, void* recv,
                             std::size_t sendcount, Dtype dtype);
BoundCall bind_mpi_alltoall(MPI_Comm comm, const void* send, void* recv, std::size_t count_per_peer, Dtype dtype);
BoundCall bind_mpi_broadcast(MPI_Comm comm, int comm_rank, const void* send, void* recv, std::size_t count, Dtype dtype,
                             int root);

}  // namespace collbench::backend
