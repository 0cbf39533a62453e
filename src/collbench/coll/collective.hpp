// A collective family's traits: its name, byte convention, busbw factor, buffer shapes, how to
// fill inputs so that results are exactly known, how to verify, and how to launch it on any
// backend communicator. One file per family (allreduce.cpp, alltoall.cpp, ...) defines one
// subclass; registry.cpp lists them. A new collective is one new file plus its tests.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "collbench/backend/backend.hpp"
#include "collbench/core/dtype.hpp"
#include "collbench/core/redop.hpp"

namespace collbench::coll {

// Sizes of one case on one communicator, from the rank's point of view.
struct Shape {
  std::uint64_t bytes = 0;       // nccl-tests convention (CONTEXT section 3), after rounding down
  std::uint64_t count = 0;       // elements as nccl-tests prints them
  std::size_t send_elems = 0;    // out-of-place send buffer
  std::size_t recv_elems = 0;    // out-of-place recv buffer
  std::uint64_t bytes_per_rank_send = 0;  // bytes this rank sends (incl. to itself)
  std::uint64_t bytes_per_rank_recv = 0;
  std::optional<std::uint64_t> bytes_max_rank;       // all-to-all-v: max over ranks of send/recv
  std::optional<std::uint64_t> bytes_logical_total;  // all-to-all-v: bytes sent by all ranks together
  // all-to-all-v: this rank's per-peer counts and displacements, in elements.
  std::vector<std::size_t> send_counts, send_displs, recv_counts, recv_displs;

  [[nodiscard]] std::size_t in_place_elems() const { return send_elems > recv_elems ? send_elems : recv_elems; }
};

struct CaseContext {
  Dtype dtype = Dtype::float32;
  Redop redop = Redop::sum;
  int rank = 0;
  int num_ranks = 1;
  bool in_place = false;
  int root = 0;
};

class Collective {
 public:
  virtual ~Collective() = default;
  [[nodiscard]] virtual std::string_view name() const = 0;
  [[nodiscard]] virtual std::string_view description() const = 0;
  // What `bytes` means for this family (printed by --list and in docs).
  [[nodiscard]] virtual std::string_view bytes_convention() const = 0;
  [[nodiscard]] virtual bool has_redop() const { return false; }
  [[nodiscard]] virtual bool supports_in_place() const { return true; }
  // busbw = algbw x factor(n) (nccl-tests conventions; n = the communicator's rank count).
  [[nodiscard]] virtual double busbw_factor(int num_ranks) const = 0;
  [[nodiscard]] virtual Shape shape(std::uint64_t requested_bytes, Dtype dtype, int rank, int num_ranks) const = 0;

  // Writes this rank's input (shape.send_elems elements) into host memory.
  virtual void fill(void* host_send, const Shape& shape, const CaseContext& ctx) const = 0;
  // In place: element offset in the single buffer where the input is placed, and where the
  // result is found after the launch.
  [[nodiscard]] virtual std::size_t in_place_input_offset(const Shape&, const CaseContext&) const { return 0; }
  [[nodiscard]] virtual std::size_t in_place_result_offset(const Shape&, const CaseContext&, const backend::Comm&) const {
    return 0;
  }
  // Counts wrong elements in this rank's result (shape.recv_elems elements of host memory).
  [[nodiscard]] virtual std::uint64_t verify(const void* host_result, const Shape& shape, const CaseContext& ctx) const = 0;

  virtual void launch(backend::Comm& comm, const void* send, void* recv, const Shape& shape,
                      const CaseContext& ctx) const = 0;
};

const std::vector<std::unique_ptr<Collective>>& collective_registry();
const Collective& find_collective(std::string_view name);  // InputError with the accepted names
std::vector<std::string> collective_names();

// Shared helpers for the family files.

// Per-rank chunk of reduce-scatter, all-gather and all-to-all, as current nccl-tests computes
// it: floor(total / n) elements, rounded down to a whole number of 16-byte units (16/elem
// elements), so that every rank's block stays 16-byte aligned.
constexpr std::uint64_t aligned_chunk_elems(std::uint64_t total_elems, std::uint64_t num_ranks, std::uint64_t elem_bytes) {
  const std::uint64_t per_16_bytes = elem_bytes >= 16 ? 1 : 16 / elem_bytes;
  return (total_elems / num_ranks) / per_16_bytes * per_16_bytes;
}

std::uint64_t count_wrong_reduce(const void* result, std::size_t elems, std::uint64_t first_global_elem,
                                 const CaseContext& ctx);
std::uint64_t count_wrong_moved(const void* result, std::size_t elems, Dtype dtype, int src, int dst,
                                std::uint64_t first_src_elem);

// Factories, one per family file.
std::unique_ptr<Collective> make_allreduce();
std::unique_ptr<Collective> make_reducescatter();
std::unique_ptr<Collective> make_allgather();
std::unique_ptr<Collective> make_alltoall();
std::unique_ptr<Collective> make_alltoallv();
std::unique_ptr<Collective> make_broadcast();
std::unique_ptr<Collective> make_sendrecv();

}  // namespace collbench::coll
