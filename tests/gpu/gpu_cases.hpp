// The host-side setup of the GPU tests (tests/gpu/*.cpp): which cases each test runs, with their
// contexts, shapes and device plans. Header-only host code (no CUDA, no MPI, no GPU), so that the
// CPU unit test tests/unit/test_gpu_cases.cpp builds every case the GPU tests can reach, on the
// rank counts they run on: a collective, routing or workload change that breaks a GPU test's
// setup fails in CI (label unit), not first on a GPU. (The first H200 run found such a drift:
// a routing that refused the rank count the device-pattern test used.)
#pragma once

#include <algorithm>
#include <cstdint>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "collbench/coll/collective.hpp"
#include "collbench/coll/device_plan.hpp"
#include "collbench/core/dtype.hpp"
#include "collbench/core/placement.hpp"
#include "collbench/core/redop.hpp"

namespace collbench::gpu_test {

inline std::vector<Redop> redops_for(const coll::Collective& c) {
  if (!c.has_redop()) return {Redop::sum};
  return {Redop::sum, Redop::prod, Redop::min, Redop::max};
}

// Whether the NCCL backend fills and checks the family on the device (device_plan.hpp).
inline bool has_device_plan(const coll::Collective& c) {
  const coll::CaseContext probe;
  return backend::nccl::fill_plan(c.name(), c.shape(64, Dtype::float32, 0, 1), probe).has_value();
}

// Why the runner would waive the family on a communicator of `n` ranks in one domain with the
// default parameters (e.g. MoE: 256 experts do not split over 72 ranks), or nullopt.
inline std::optional<std::string> waiver_at(const coll::Collective& c, int n) {
  coll::CaseContext ctx;
  ctx.num_ranks = n;
  ctx.placement = placement_from_sizes(n, {n});
  return c.waiver(ctx);
}

// ---- DevicePatternsTest (device fill and check kernels against the host path) ----------------

// A plan for rank r of n is data, so these rank counts are simulated on one GPU; 3 and 72 are
// not powers of two. Only families with device plans take part (MoE has none).
inline constexpr int kPatternRankCounts[] = {1, 3, 72};
inline constexpr std::uint64_t kPatternBytes[] = {0, 1000, 65536 + 24};

struct PatternCase {
  const coll::Collective* collective = nullptr;
  coll::CaseContext ctx;
  coll::Shape shape;
  std::vector<backend::nccl::hd::Segment> fill;
  std::vector<backend::nccl::hd::Segment> verify;
  std::string where;  // for failure messages
};

inline std::string describe(const coll::Collective& c, const coll::CaseContext& ctx, std::uint64_t bytes) {
  return std::string(c.name()) + " " + std::string(to_string(ctx.dtype)) + " " + std::string(to_string(ctx.redop)) +
         " n=" + std::to_string(ctx.num_ranks) + " rank " + std::to_string(ctx.rank) + " bytes " +
         std::to_string(bytes);
}

// One case: the shape of rank `rank` of `n`, root n - 1, and the family's device plans.
inline std::optional<PatternCase> pattern_case(const coll::Collective& c, Dtype dtype, Redop redop, int n, int rank,
                                               std::uint64_t bytes) {
  PatternCase pc;
  pc.collective = &c;
  pc.ctx.dtype = dtype;
  pc.ctx.redop = redop;
  pc.ctx.rank = rank;
  pc.ctx.num_ranks = n;
  pc.ctx.root = n - 1;
  pc.shape = c.shape(bytes, dtype, rank, n);
  auto fplan = backend::nccl::fill_plan(c.name(), pc.shape, pc.ctx);
  auto vplan = backend::nccl::verify_plan(c.name(), pc.shape, pc.ctx);
  if (!fplan || !vplan) return std::nullopt;
  pc.fill = std::move(*fplan);
  pc.verify = std::move(*vplan);
  pc.where = describe(c, pc.ctx, bytes);
  return pc;
}

// Calls f(const PatternCase&) for every case of KernelsMatchHostFillAndVerify; returns how many.
template <class F>
int for_each_pattern_case(F&& f) {
  int cases = 0;
  for (const auto& c : coll::collective_registry()) {
    if (!has_device_plan(*c)) continue;
    for (const auto& info : all_dtypes()) {
      for (Redop redop : redops_for(*c)) {
        for (int n : kPatternRankCounts) {
          for (int rank : std::set<int>{0, n / 2, n - 1}) {
            for (std::uint64_t bytes : kPatternBytes) {
              if (const auto pc = pattern_case(*c, info.dtype, redop, n, rank, bytes)) {
                f(*pc);
                ++cases;
              }
            }
          }
        }
      }
    }
  }
  return cases;
}

// LargeBuffers: a 3 GiB all-reduce input of rank 5 of 72 (grid-stride loops, 2^31+ byte offsets).
inline PatternCase large_buffer_case(Dtype dtype) {
  auto pc = pattern_case(coll::find_collective("allreduce"), dtype, Redop::sum, 72, 5, std::uint64_t{3} << 30);
  return std::move(*pc);
}

// ---- cases run through a communicator (upload, launch, download, verify) ----------------------

// The communicator's rank and size are filled in at run time (gpu_verify.hpp).
struct CommCase {
  const coll::Collective* collective = nullptr;
  coll::CaseContext ctx;
  std::uint64_t bytes = 0;
  std::string where;
};

// What the tests leave out on a communicator of some size, with the family's own reason.
using Waived = std::vector<std::pair<std::string, std::string>>;  // (family, reason)

inline CommCase comm_case(const coll::Collective& c, Dtype dtype, Redop redop, bool in_place, int root,
                          std::uint64_t bytes) {
  CommCase cc;
  cc.collective = &c;
  cc.ctx.dtype = dtype;
  cc.ctx.redop = redop;
  cc.ctx.in_place = in_place;
  cc.ctx.root = root;
  cc.bytes = bytes;
  cc.where = std::string(c.name()) + " " + std::string(to_string(dtype)) + " " + std::string(to_string(redop)) +
             (in_place ? " in place " : " ") + std::to_string(bytes) + " bytes";
  return cc;
}

// The families a plain communicator runs on `n` ranks (not uses_levels(), which needs the
// runner's levels), skipping those the runner would waive there (reasons into `waived`).
inline std::vector<const coll::Collective*> runnable_families(int n, Waived* waived) {
  std::vector<const coll::Collective*> out;
  for (const auto& c : coll::collective_registry()) {
    if (c->uses_levels()) continue;
    if (const auto why = waiver_at(*c, n)) {
      if (waived != nullptr) waived->emplace_back(std::string(c->name()), *why);
      continue;
    }
    out.push_back(c.get());
  }
  return out;
}

// NcclBackendTest.EveryCollectiveVerifiesOnEveryBufferKind on the world (n ranks): every family
// x dtype x reduction x in-place form at three sizes, root n - 1.
inline std::vector<CommCase> every_collective_cases(int n, Waived* waived = nullptr) {
  std::vector<CommCase> out;
  for (const coll::Collective* c : runnable_families(n, waived)) {
    for (const auto& info : all_dtypes()) {
      for (Redop redop : redops_for(*c)) {
        for (bool in_place : {false, true}) {
          if (in_place && !c->supports_in_place()) continue;
          for (std::uint64_t bytes : {std::uint64_t{0}, std::uint64_t{4096 + 8}, std::uint64_t{3} << 20}) {
            out.push_back(comm_case(*c, info.dtype, redop, in_place, n - 1, bytes));
          }
        }
      }
    }
  }
  return out;
}

// NcclBackendTest.SplitCommunicatorRunsCollectives on a split of `n` ranks: bfloat16, 1 MiB.
inline std::vector<CommCase> split_cases(int n, Waived* waived = nullptr) {
  std::vector<CommCase> out;
  for (const coll::Collective* c : runnable_families(n, waived)) {
    out.push_back(comm_case(*c, Dtype::bfloat16, Redop::sum, false, 0, 1 << 20));
  }
  return out;
}

// NcclBackendTest.DeviceFastPathVerifies: the families with device plans, every dtype and
// reduction, 1 MiB.
inline std::vector<CommCase> device_fast_path_cases() {
  std::vector<CommCase> out;
  for (const auto& c : coll::collective_registry()) {
    if (!has_device_plan(*c)) continue;
    for (const auto& info : all_dtypes()) {
      for (Redop redop : redops_for(*c)) out.push_back(comm_case(*c, info.dtype, redop, false, 0, 1 << 20));
    }
  }
  return out;
}

// CbMultimem.EveryCollectiveDtypeSizeAndPlacementVerifies on m ranks: awkward sizes (2 bytes,
// not a multiple of 16 B, smaller than m x 16 B, a few MiB + a tail), the types the switch
// reduces, in and out of place; then all-gather of other types.
inline std::vector<CommCase> multimem_cases(int m) {
  const std::vector<std::uint64_t> sizes{2,         6,       100,           static_cast<std::uint64_t>(m) * 16 - 4,
                                         4096 + 24, 1000002, (8u << 20) + 6};
  std::vector<CommCase> out;
  for (const char* name : {"allreduce", "reducescatter", "allgather"}) {
    for (Dtype d : {Dtype::float32, Dtype::bfloat16, Dtype::float16}) {
      for (bool in_place : {false, true}) {
        for (std::uint64_t bytes : sizes) {
          out.push_back(comm_case(coll::find_collective(name), d, Redop::sum, in_place, 0, bytes));
        }
      }
    }
  }
  for (Dtype d : {Dtype::int32, Dtype::float64, Dtype::float8e4m3}) {
    out.push_back(comm_case(coll::find_collective("allgather"), d, Redop::sum, false, 0, 1 << 20));
  }
  return out;
}

// The shape gpu_verify.hpp's run_and_verify_host builds for the case on rank `rank` of `n`.
inline coll::Shape host_shape(const CommCase& cc, int rank, int n) {
  return cc.collective->shape(cc.bytes, cc.ctx.dtype, rank, n);
}

}  // namespace collbench::gpu_test
