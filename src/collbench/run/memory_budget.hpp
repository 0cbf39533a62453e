// The memory a sweep's buffers need on a node against what the node has, checked before the
// first case allocates anything (docs/errors.md, "Sizes, roots and memory"): a case that cannot
// fit is bad input (exit 2), not a run that the kernel's OOM killer ends minutes later.
// Host memory: MemAvailable of /proc/meminfo against the host bytes every rank of the node
// holds (its buffers, or for device buffers the staging copy of one). Device memory: for a
// backend that reports its device's free memory (NCCL: cudaMemGetInfo of the rank's GPU,
// backend::BackendPolicy::device_memory), each rank's device buffers against its GPU's free
// memory.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "collbench/backend/policy.hpp"
#include "collbench/coll/collective.hpp"
#include "collbench/plan/sweep.hpp"
#include "collbench/run/session.hpp"

namespace collbench::run {

// Test-only override of the host memory available, a size such as 8G (1024^n); documented in
// docs/errors.md. Unset: MemAvailable of /proc/meminfo.
inline constexpr const char* kTestMemAvailableEnv = "COLLBENCH_TEST_MEM_AVAILABLE";

// MemAvailable of /proc/meminfo text, in bytes; nullopt when the line is absent or malformed.
std::optional<std::uint64_t> parse_mem_available(std::string_view meminfo);

struct MemoryAvailable {
  std::uint64_t bytes = 0;
  std::string source;  // "MemAvailable in /proc/meminfo", or the test override
};

// The host memory available on this node: the test override when set (InputError when it is not
// a size), else MemAvailable; nullopt when neither can be read (then nothing is checked).
std::optional<MemoryAvailable> host_memory_available();

// Host bytes one rank holds for one case's buffers: send + receive (in place: the larger one)
// in host memory; for device buffers the host staging copy of the larger one.
std::uint64_t host_buffer_bytes(const coll::Shape& shape, Dtype dtype, bool in_place, bool host_buffers);

struct MemoryNeed {
  std::uint64_t per_rank = 0;  // of the case that needs the most
  std::string case_label;      // "allreduce 1TiB float32 out of place"
};

// The largest host need over the sweep's cases, for rank `rank` (pipelined overlap cases hold
// their chunks' buffers besides the case's).
MemoryNeed sweep_memory_need(const plan::Sweep& sweep, const Placement& placement, int rank);

// The refusal when ranks_on_node x need.per_rank exceeds what is available, else nullopt.
std::optional<std::string> memory_refusal(const MemoryNeed& need, int ranks_on_node, const MemoryAvailable& available,
                                          const std::string& host);

// Device bytes one rank holds for one case's device buffers: send + receive (in place: the
// larger one).
std::uint64_t device_buffer_bytes(const coll::Shape& shape, Dtype dtype, bool in_place);

// The largest device need over the cases of backend `backend` whose buffers are on the device
// (every kind but host), for rank `rank`; per_rank 0 when there is none.
MemoryNeed sweep_device_need(const plan::Sweep& sweep, const Placement& placement, int rank, std::string_view backend);

// The refusal when need.per_rank exceeds the device's free memory, else nullopt.
std::optional<std::string> device_memory_refusal(const MemoryNeed& need, const backend::DeviceMemory& device, int rank,
                                                 const std::string& host);

// On every rank: an InputError, the same on every rank (the first rank whose node, then the
// first whose GPU, lacks the memory), when the sweep's largest case does not fit. Nothing under a simulation, whose
// ranks share one process and its buffers.
void check_memory(const plan::Sweep& sweep, const Control& control, const ProcessInfo& info,
                  const Placement& placement);

}  // namespace collbench::run
