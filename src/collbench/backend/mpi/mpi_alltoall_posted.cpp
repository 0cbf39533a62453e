// collbench's posted all-to-all schedule (mpi_alltoall_posted.hpp).
#include "collbench/backend/mpi/mpi_alltoall_posted.hpp"

#include <sched.h>

#include <algorithm>
#include <cstring>

#include "collbench/backend/mpi/mpi_bound.hpp"
#include "collbench/backend/mpi/mpi_check.hpp"
#include "collbench/backend/mpi/mpi_types.hpp"
#include "collbench/backend/mpi/simulation.hpp"

namespace collbench::backend {
namespace {

// Not the tag of Comm::sendrecv (7301): a posted exchange and a sendrecv on one communicator
// never match each other's messages.
constexpr int kPostedTag = 7302;

// One side of an exchange in bytes: block p starts at offset[p] and holds bytes[p].
struct Blocks {
  std::vector<std::size_t> offset, bytes;
};

Blocks uniform_blocks(int size, std::size_t block_bytes) {
  Blocks b;
  b.offset.resize(static_cast<std::size_t>(size));
  b.bytes.assign(static_cast<std::size_t>(size), block_bytes);
  for (std::size_t p = 0; p < b.offset.size(); ++p) b.offset[p] = p * block_bytes;
  return b;
}

Blocks varying_blocks(std::span<const std::size_t> counts, std::span<const std::size_t> displs, std::size_t elem) {
  if (counts.size() != displs.size()) {
    throw RuntimeFailure("posted all-to-all-v: counts and displacements differ in length");
  }
  Blocks b;
  for (std::size_t p = 0; p < counts.size(); ++p) {
    b.offset.push_back(displs[p] * elem);
    b.bytes.push_back(counts[p] * elem);
  }
  return b;
}

// The bytes a side spans: the end of its last block.
std::size_t extent(const Blocks& b) {
  std::size_t end = 0;
  for (std::size_t p = 0; p < b.bytes.size(); ++p) {
    if (b.bytes[p] > 0) end = std::max(end, b.offset[p] + b.bytes[p]);
  }
  return end;
}

// Receives from every peer, then sends to every peer, then this rank's own block on the host.
PostedExchange post(MPI_Comm comm, int rank, const void* send, const Blocks& out, void* recv, const Blocks& in,
                    Dtype dtype) {
  const int size = static_cast<int>(out.bytes.size());
  if (static_cast<int>(in.bytes.size()) != size) {
    throw RuntimeFailure("posted all-to-all: send and receive sides name different peer counts");
  }
  PostedExchange ex;
  const auto* src = static_cast<const std::byte*>(send);
  auto* dst = static_cast<std::byte*>(recv);
  if (send == recv) {  // in place: the receives overwrite what the sends still read
    ex.staged.assign(src, src + extent(out));
    src = ex.staged.data();
  }
  const MPI_Datatype dt = mpi_datatype(dtype);
  const std::size_t elem = dtype_size(dtype);
  ex.requests.reserve(2 * static_cast<std::size_t>(size));
  for (int i = 1; i < size; ++i) {
    const int peer = (rank - i + size) % size;
    const auto p = static_cast<std::size_t>(peer);
    if (in.bytes[p] == 0) continue;
    MPI_Request& req = ex.requests.emplace_back();
    CB_CHECK_MPI(MPI_Irecv(dst + in.offset[p], to_int_count(in.bytes[p] / elem), dt, peer, kPostedTag, comm, &req));
  }
  for (int i = 1; i < size; ++i) {
    const int peer = (rank + i) % size;
    const auto p = static_cast<std::size_t>(peer);
    if (out.bytes[p] == 0) continue;
    MPI_Request& req = ex.requests.emplace_back();
    CB_CHECK_MPI(MPI_Isend(src + out.offset[p], to_int_count(out.bytes[p] / elem), dt, peer, kPostedTag, comm, &req));
  }
  const auto self = static_cast<std::size_t>(rank);
  if (out.bytes[self] != in.bytes[self]) {
    throw RuntimeFailure("posted all-to-all: this rank's block to itself differs in size on the two sides");
  }
  if (out.bytes[self] > 0 && src + out.offset[self] != dst + in.offset[self]) {
    std::memcpy(dst + in.offset[self], src + out.offset[self], out.bytes[self]);
  }
  return ex;
}

}  // namespace

PostedExchange post_alltoall(MPI_Comm comm, int rank, int size, const void* send, void* recv,
                             std::size_t count_per_peer, Dtype dtype) {
  to_int_count(count_per_peer);
  const Blocks blocks = uniform_blocks(size, count_per_peer * dtype_size(dtype));
  return post(comm, rank, send, blocks, recv, blocks, dtype);
}

PostedExchange post_alltoallv(MPI_Comm comm, int rank, const void* send, std::span<const std::size_t> send_counts,
                              std::span<const std::size_t> send_displs, void* recv,
                              std::span<const std::size_t> recv_counts, std::span<const std::size_t> recv_displs,
                              Dtype dtype) {
  const std::size_t elem = dtype_size(dtype);
  return post(comm, rank, send, varying_blocks(send_counts, send_displs, elem), recv,
              varying_blocks(recv_counts, recv_displs, elem), dtype);
}

void mpi_wait_all(std::vector<MPI_Request>& requests, Progress progress) {
  if (requests.empty()) return;
  const int n = static_cast<int>(requests.size());
  if (progress == Progress::spin) {
    if (!sim::active()) {
      CB_CHECK_MPI(MPI_Waitall(n, requests.data(), MPI_STATUSES_IGNORE));
      return;
    }
    for (auto& req : requests) CB_CHECK_MPI(MPI_Wait(&req, MPI_STATUS_IGNORE));
    return;
  }
  int done = 0;
  for (;;) {
    CB_CHECK_MPI(MPI_Testall(n, requests.data(), &done, MPI_STATUSES_IGNORE));
    if (done != 0) return;
    sched_yield();
  }
}

}  // namespace collbench::backend
