// Helpers shared by the GPU test files: rank agreement and the host verification path the
// runner uses (fill on the host, upload, launch, download, verify). Needs MPI (label `gpu`).
#pragma once

#include <mpi.h>

#include <algorithm>
#include <cstdint>
#include <memory>
#include <vector>

#include "collbench/backend/backend.hpp"
#include "collbench/coll/collective.hpp"

namespace collbench::gpu_test {

inline int world_size() {
  int n = 1;
  MPI_Comm_size(MPI_COMM_WORLD, &n);
  return n;
}

// Sum of a count over all ranks (every rank must see the same verdict).
inline std::uint64_t sum_over_ranks(std::uint64_t v) {
  std::uint64_t total = 0;
  MPI_Allreduce(&v, &total, 1, MPI_UINT64_T, MPI_SUM, MPI_COMM_WORLD);
  return total;
}

// What run/measure.cpp does before timing: fill on the host, upload, launch, download, verify.
inline std::uint64_t run_and_verify_host(backend::Backend& be, backend::Comm& comm, const coll::Collective& c,
                                         coll::CaseContext ctx, std::uint64_t bytes) {
  ctx.rank = comm.rank();
  ctx.num_ranks = comm.size();
  const std::size_t elem = dtype_size(ctx.dtype);
  const coll::Shape s = c.shape(bytes, ctx.dtype, ctx.rank, ctx.num_ranks);
  std::unique_ptr<backend::Buffer> send;
  std::unique_ptr<backend::Buffer> recv;
  const void* send_ptr = nullptr;
  void* recv_ptr = nullptr;
  std::size_t result_offset = 0;
  if (ctx.in_place) {
    std::vector<unsigned char> host(std::max<std::size_t>(s.in_place_elems() * elem, 1), 0);
    const std::size_t in_off = c.in_place_input_offset(s, ctx);
    c.fill(host.data() + in_off * elem, s, ctx);
    recv = be.allocate(host.size());
    be.upload(*recv, host.data(), host.size());
    auto* base = static_cast<unsigned char*>(recv->data());
    send_ptr = base + in_off * elem;
    recv_ptr = base;
    result_offset = c.in_place_result_offset(s, ctx, comm);
  } else {
    std::vector<unsigned char> host(std::max<std::size_t>(s.send_elems * elem, 1), 0);
    c.fill(host.data(), s, ctx);
    send = be.allocate(host.size());
    be.upload(*send, host.data(), host.size());
    recv = be.allocate(std::max<std::size_t>(s.recv_elems * elem, 1));
    send_ptr = send->data();
    recv_ptr = recv->data();
  }
  c.launch(comm, send_ptr, recv_ptr, s, ctx);
  comm.synchronize();
  std::vector<unsigned char> result(std::max<std::size_t>(recv->bytes(), 1));
  be.download(result.data(), *recv, recv->bytes());
  return c.verify(result.data() + result_offset * elem, s, ctx);
}

}  // namespace collbench::gpu_test
