// Bound blocking MPI collectives (mpi_bound.hpp).
#include "collbench/backend/mpi/mpi_bound.hpp"

#include <fmt/format.h>

#include <climits>
#include <cstring>

#include "collbench/backend/mpi/mpi_check.hpp"
#include "collbench/backend/mpi/mpi_types.hpp"
#include "collbench/core/error.hpp"

namespace collbench::backend {

int to_int_count(std::size_t count) {
  if (count > static_cast<std::size_t>(INT_MAX)) {
    throw InputError(
        fmt::format("message of {} elements exceeds MPI's int count limit ({}); use a smaller size or a wider dtype",
                    count, INT_MAX));
  }
  return static_cast<int>(count);
}

namespace {

// Arguments of a reduction (all-reduce, reduce-scatter), of a data movement (all-gather,
// all-to-all: the same count and type on both sides) and of a broadcast.
struct ReduceArgs {
  const void* send;  // MPI_IN_PLACE in place
  void* recv;
  int count;
  MPI_Datatype dtype;
  MPI_Op op;
  MPI_Comm comm;
};
struct MoveArgs {
  const void* send;  // MPI_IN_PLACE in place
  void* recv;
  int count;
  MPI_Datatype dtype;
  MPI_Comm comm;
};
struct BroadcastArgs {
  const void* root_send;  // copied to recv first (the root, out of place: NCCL's semantics)
  void* recv;
  std::size_t copy_bytes;  // 0: no copy
  int count;
  int root;
  MPI_Datatype dtype;
  MPI_Comm comm;
};

void run_allreduce(const ReduceArgs& a) {
  CB_CHECK_MPI(MPI_Allreduce(a.send, a.recv, a.count, a.dtype, a.op, a.comm));
}
void run_reduce_scatter(const ReduceArgs& a) {
  CB_CHECK_MPI(MPI_Reduce_scatter_block(a.send, a.recv, a.count, a.dtype, a.op, a.comm));
}
void run_allgather(const MoveArgs& a) {
  CB_CHECK_MPI(MPI_Allgather(a.send, a.count, a.dtype, a.recv, a.count, a.dtype, a.comm));
}
void run_alltoall(const MoveArgs& a) {
  CB_CHECK_MPI(MPI_Alltoall(a.send, a.count, a.dtype, a.recv, a.count, a.dtype, a.comm));
}
void run_broadcast(const BroadcastArgs& a) {
  if (a.copy_bytes > 0) std::memcpy(a.recv, a.root_send, a.copy_bytes);
  CB_CHECK_MPI(MPI_Bcast(a.recv, a.count, a.dtype, a.root, a.comm));
}

const void* send_or_in_place(const void* send, bool in_place) {
  return in_place ? MPI_IN_PLACE : send;
}

}  // namespace

BoundCall bind_mpi_allreduce(MPI_Comm comm, const void* send, void* recv, std::size_t count, Dtype dtype, Redop redop) {
  const int n = to_int_count(count);
  return BoundCall::of<&run_allreduce>(
      ReduceArgs{send_or_in_place(send, send == recv), recv, n, mpi_datatype(dtype), mpi_op(redop, dtype), comm});
}

BoundCall bind_mpi_reduce_scatter(MPI_Comm comm, int comm_size, const void* send, void* recv, std::size_t recvcount,
                                  Dtype dtype, Redop redop) {
  const int n = to_int_count(recvcount);
  to_int_count(recvcount * static_cast<std::size_t>(comm_size));
  return BoundCall::of<&run_reduce_scatter>(
      ReduceArgs{send_or_in_place(send, send == recv), recv, n, mpi_datatype(dtype), mpi_op(redop, dtype), comm});
}

BoundCall bind_mpi_allgather(MPI_Comm comm, int comm_rank, int comm_size, const void* send, void* recv,
                             std::size_t sendcount, Dtype dtype) {
  const bool in_place =
      static_cast<const char*>(send) ==
      static_cast<const char*>(recv) + static_cast<std::size_t>(comm_rank) * sendcount * dtype_size(dtype);
  const int n = to_int_count(sendcount);
  to_int_count(sendcount * static_cast<std::size_t>(comm_size));
  return BoundCall::of<&run_allgather>(MoveArgs{send_or_in_place(send, in_place), recv, n, mpi_datatype(dtype), comm});
}

BoundCall bind_mpi_alltoall(MPI_Comm comm, const void* send, void* recv, std::size_t count_per_peer, Dtype dtype) {
  const int n = to_int_count(count_per_peer);
  return BoundCall::of<&run_alltoall>(
      MoveArgs{send_or_in_place(send, send == recv), recv, n, mpi_datatype(dtype), comm});
}

BoundCall bind_mpi_broadcast(MPI_Comm comm, int comm_rank, const void* send, void* recv, std::size_t count, Dtype dtype,
                             int root) {
  const std::size_t copy = comm_rank == root && send != recv ? count * dtype_size(dtype) : 0;
  const int n = to_int_count(count);
  return BoundCall::of<&run_broadcast>(BroadcastArgs{send, recv, copy, n, root, mpi_datatype(dtype), comm});
}

}  // namespace collbench::backend
