// collbench's own all-to-all schedule on the MPI backend, `--algo linear`: every peer posted at
// once, as NCCL runs its all-to-all (one group of ncclSend/ncclRecv, one pair per peer) and as
// Open MPI and SMPI name it (`basic_linear`): MPI_Irecv from every peer, then MPI_Isend to every
// peer, then one wait for all of them. Beside it the MPI library's MPI_Alltoall(v) (`--algo auto`
// or `flat`), whose algorithm the library picks (MPICH: a pairwise exchange from 32 KiB per peer,
// below it four peers at a time). docs/simulation.md says why the simulated figures use this one.
#pragma once

#include <mpi.h>

#include <cstddef>
#include <span>
#include <string_view>
#include <vector>

#include "collbench/backend/options.hpp"
#include "collbench/core/dtype.hpp"

namespace collbench::backend {

// The --algo value that selects the posted schedule; the record's algo_used says it ran.
inline constexpr std::string_view kPostedAlltoallAlgo = "linear";

// The requests of one posted exchange, and the staged copy of an in-place send buffer that the
// sends read until they complete.
struct PostedExchange {
  std::vector<MPI_Request> requests;
  std::vector<std::byte> staged;
};

// Posts a uniform all-to-all on `comm` (this rank `rank` of `size`): block p of `send`
// (`count_per_peer` elements) to rank p, block p of `recv` from rank p. In place (send == recv)
// the blocks to send are staged first. This rank's own block is copied on the host, not sent.
// Peers are taken in the order rank+1, rank+2, ... (receives from rank-1, rank-2, ...), so that
// the ranks do not all start with the same peer. Nothing is posted for an empty block.
[[nodiscard]] PostedExchange post_alltoall(MPI_Comm comm, int rank, int size, const void* send, void* recv,
                                           std::size_t count_per_peer, Dtype dtype);

// The same with MPI_Alltoallv's arguments (per-peer counts and displacements, in elements): a
// peer with a zero count on one side gets no request on that side (the counts of a case are
// consistent: rank a sends to b what b expects from a, so both sides skip the same pairs).
[[nodiscard]] PostedExchange post_alltoallv(MPI_Comm comm, int rank, const void* send,
                                            std::span<const std::size_t> send_counts,
                                            std::span<const std::size_t> send_displs, void* recv,
                                            std::span<const std::size_t> recv_counts,
                                            std::span<const std::size_t> recv_displs, Dtype dtype);

// Completes every request together, for a posted exchange and for a group's operations alike:
// MPI_Waitall (spin; in a simulation one MPI_Wait per request in order, the same completion,
// because SMPI 3.32's MPI_Waitall rescans every pending request per completion) or MPI_Testall
// and sched_yield (yield).
void mpi_wait_all(std::vector<MPI_Request>& requests, Progress progress);

}  // namespace collbench::backend
