// collbench's own in-switch collectives (`--algo cb-multimem`, multimem_kernels.cu), written on
// the NCCL 2.28 device API: a device communicator with lsaMultimem, multimem pointers into
// symmetric windows, LSA barriers in multimem mode, and inline PTX multimem.ld_reduce /
// multimem.st. Needs GPUs behind an NVSwitch with NVLink SHARP (sm_90 or newer, multicast).
// Index math: multimem_plan.hpp; capability decisions: nvls_host.hpp; docs/nvls.md.
//
// This header needs nccl.h and the CUDA runtime types only; the device API headers
// (nccl_device.h, CUDA-only) stay inside the .cu behind the pimpl.
#pragma once

#include <cuda_runtime.h>
#include <nccl.h>

#include <cstdint>
#include <memory>
#include <string>

#include "collbench/backend/nccl/multimem_plan.hpp"
#include "collbench/core/dtype.hpp"

namespace collbench::backend::nccl {

// Owns one ncclDevComm created with lsaMultimem and one LSA barrier per block of the largest
// grid (the depth, multimem_plan.hpp: `max_blocks`, default kMaxBlocks, about 4 MiB in flight);
// destroyed with ncclDevCommDestroy. Its launches are
// collective over the communicator: every rank must make the same calls in the same order with
// the same counts (the grid and barrier indices follow from them).
class MultimemDevComm {
 public:
  // ncclDevCommCreate on `comm` (collective; every rank passes the same `max_blocks`). Returns
  // ncclSuccess and sets `out`, or NCCL's error code with `out` untouched (ncclInvalidUsage when
  // the loaded libnccl has no device API).
  static ncclResult_t create(ncclComm_t comm, std::unique_ptr<MultimemDevComm>& out,
                             uint32_t max_blocks = mm::kMaxBlocks);
  MultimemDevComm(const MultimemDevComm&) = delete;
  MultimemDevComm& operator=(const MultimemDevComm&) = delete;
  ~MultimemDevComm();

  // Skips ncclDevCommDestroy at destruction: the communicator was aborted and took it along.
  void forget() noexcept;

  [[nodiscard]] int lsa_rank() const;
  [[nodiscard]] int lsa_size() const;
  // The depth: the largest grid of any launch (= the LSA barriers requested).
  [[nodiscard]] uint32_t max_blocks() const;

  // Windows are symmetric windows registered on this communicator (ncclCommWindowRegister with
  // NCCL_WIN_COLL_SYMMETRIC); offsets are byte offsets inside them, the same on every rank.
  // float32, bfloat16 and float16 with sum (accumulation in float32).
  void allreduce(ncclWindow_t in, std::uint64_t in_offset, ncclWindow_t out, std::uint64_t out_offset,
                 std::uint64_t count, Dtype dtype, cudaStream_t stream) const;
  // Reads every rank's chunk lsa_rank() of `in` (at in_offset + rank x recvcount elements) and
  // writes the sum to local memory `out`.
  void reduce_scatter(ncclWindow_t in, std::uint64_t in_offset, void* out, std::uint64_t recvcount, Dtype dtype,
                      cudaStream_t stream) const;
  // Writes local memory `in` to every rank's chunk lsa_rank() of `out`; any dtype.
  void allgather(const void* in, ncclWindow_t out, std::uint64_t out_offset, std::uint64_t sendcount, Dtype dtype,
                 cudaStream_t stream) const;

 private:
  struct Impl;
  explicit MultimemDevComm(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

// Why this build has no cb-multimem kernels (multimem_unavailable.cpp: NCCL headers without the
// device API, or a CUDA compiler other than nvcc); "" when it has them (multimem_kernels.cu).
const char* multimem_not_built();

// ncclTeamLsa(comm).nRanks: the ranks of `comm` this GPU reaches by NVLink load/store; -1 when
// the loaded libnccl has no device API.
int lsa_team_size(ncclComm_t comm);

}  // namespace collbench::backend::nccl
