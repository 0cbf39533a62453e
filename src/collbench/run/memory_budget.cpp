// Host memory check of a sweep's buffers.
#include "collbench/run/memory_budget.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <climits>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <vector>

#include "collbench/backend/mpi/simulation.hpp"
#include "collbench/backend/policy.hpp"
#include "collbench/core/error.hpp"
#include "collbench/core/units.hpp"
#include "collbench/run/case_checks.hpp"
#include "collbench/run/measure.hpp"

namespace collbench::run {
namespace {

// Host bytes of one case on one rank (pipelined overlap chunks included), and the case as the
// message names it: "allreduce 1TiB float32 out of place", MoE with its size label.
struct CaseNeed {
  std::uint64_t bytes = 0;
  std::string label;
};

// `on_device`: the case's device buffers (send and receive) instead of its host bytes.
CaseNeed case_need(const plan::Case& c, const Placement& placement, int rank, bool on_device = false) {
  const coll::Collective& coll = coll::find_collective(c.collective);
  const int n = case_comm_size(c, placement);
  const coll::CaseContext ctx = case_context(c, rank < n ? rank : 0, n, &placement);
  const bool host = on_device || c.buffers == "host";
  const coll::Shape shape = coll.shape_for(c.bytes, ctx);
  CaseNeed need{host_buffer_bytes(shape, c.dtype, c.in_place, host), {}};
  if (!c.overlap.empty() && c.overlap_chunks > 0) {
    const plan::Case chunk = pipeline_chunk_case(c, c.overlap_chunks);
    const coll::Shape s = coll.shape_for(chunk.bytes, case_context(chunk, ctx.rank, n, &placement));
    need.bytes += static_cast<std::uint64_t>(c.overlap_chunks) * host_buffer_bytes(s, c.dtype, c.in_place, host);
  }
  const std::string size_label = coll.size_label(shape, ctx);
  need.label = fmt::format("{} {}{} {} {}", c.collective, format_bytes(c.bytes > 0 ? c.bytes : shape.bytes),
                           size_label.empty() ? "" : " (" + size_label + ")", to_string(c.dtype),
                           c.in_place ? "in place" : "out of place");
  return need;
}

// The rank (or the world size when none) whose node lacks memory first, agreed by all ranks,
// and that rank's message.
std::optional<std::string> agreed_refusal(const Control& control, const std::optional<std::string>& mine) {
  const int candidate = mine ? control.rank() : INT_MAX;
  int first = INT_MAX;
  MPI_Allreduce(&candidate, &first, 1, MPI_INT, MPI_MIN, control.comm());
  if (first == INT_MAX) return std::nullopt;
  std::string text = first == control.rank() ? *mine : std::string();
  int length = static_cast<int>(text.size());
  MPI_Bcast(&length, 1, MPI_INT, first, control.comm());
  text.resize(static_cast<std::size_t>(length));
  MPI_Bcast(text.data(), length, MPI_CHAR, first, control.comm());
  return text;
}

}  // namespace

std::optional<std::uint64_t> parse_mem_available(std::string_view meminfo) {
  constexpr std::string_view kKey = "MemAvailable:";
  std::size_t pos = 0;
  while (pos < meminfo.size()) {
    const std::size_t end = std::min(meminfo.find('\n', pos), meminfo.size());
    std::string_view line = meminfo.substr(pos, end - pos);
    pos = end + 1;
    if (line.substr(0, kKey.size()) != kKey) continue;
    line.remove_prefix(kKey.size());
    while (!line.empty() && line.front() == ' ') line.remove_prefix(1);
    std::uint64_t kib = 0;
    const auto res = std::from_chars(line.data(), line.data() + line.size(), kib);
    if (res.ec != std::errc{} || std::string_view(res.ptr, line.data() + line.size() - res.ptr) != " kB") {
      return std::nullopt;
    }
    return kib * 1024;
  }
  return std::nullopt;
}

std::optional<MemoryAvailable> host_memory_available() {
  if (const char* env = std::getenv(kTestMemAvailableEnv); env != nullptr && *env != '\0') {
    try {
      return MemoryAvailable{parse_bytes(env), fmt::format("{}, a test override", kTestMemAvailableEnv)};
    } catch (const InputError& e) {
      throw InputError(fmt::format("{}: {}", kTestMemAvailableEnv, e.what()));
    }
  }
  std::ifstream in("/proc/meminfo");
  if (!in) return std::nullopt;
  std::ostringstream text;
  text << in.rdbuf();
  const auto bytes = parse_mem_available(text.str());
  if (!bytes) return std::nullopt;
  return MemoryAvailable{*bytes, "MemAvailable in /proc/meminfo"};
}

std::uint64_t host_buffer_bytes(const coll::Shape& shape, Dtype dtype, bool in_place, bool host_buffers) {
  const std::uint64_t elem = dtype_size(dtype);
  const std::uint64_t send = shape.send_elems * elem;
  const std::uint64_t recv = shape.recv_elems * elem;
  if (!host_buffers || in_place) return std::max(send, recv);
  return send + recv;
}

namespace {

// The largest need over the sweep's cases that `counts` accepts (host bytes, or device buffers).
template <typename Filter>
MemoryNeed largest_need(const plan::Sweep& sweep, const Placement& placement, int rank, bool on_device, Filter counts) {
  MemoryNeed need;
  for (const auto& c : sweep.cases) {
    if (!counts(c)) continue;
    CaseNeed one = case_need(c, placement, rank, on_device);
    if (one.bytes <= need.per_rank) continue;
    need.per_rank = one.bytes;
    need.case_label = std::move(one.label);
  }
  return need;
}

}  // namespace

MemoryNeed sweep_memory_need(const plan::Sweep& sweep, const Placement& placement, int rank) {
  return largest_need(sweep, placement, rank, false, [](const plan::Case&) { return true; });
}

std::optional<std::string> memory_refusal(const MemoryNeed& need, int ranks_on_node, const MemoryAvailable& available,
                                          const std::string& host) {
  const auto ranks = static_cast<std::uint64_t>(std::max(ranks_on_node, 1));
  const bool overflow = need.per_rank > UINT64_MAX / ranks;
  const std::uint64_t node = overflow ? UINT64_MAX : need.per_rank * ranks;
  if (node <= available.bytes) return std::nullopt;
  return fmt::format(
      "not enough memory for {}: its buffers need {} per rank, {} on host '{}' ({} rank(s) x {}), and {} is "
      "available there ({}); use smaller sizes (-b/-e, --tokens) or fewer ranks per node",
      need.case_label, format_bytes(need.per_rank), overflow ? std::string("more than 16EiB") : format_bytes(node),
      host, ranks, format_bytes(need.per_rank), format_bytes(available.bytes), available.source);
}

std::uint64_t device_buffer_bytes(const coll::Shape& shape, Dtype dtype, bool in_place) {
  return host_buffer_bytes(shape, dtype, in_place, true);
}

MemoryNeed sweep_device_need(const plan::Sweep& sweep, const Placement& placement, int rank, std::string_view backend) {
  return largest_need(sweep, placement, rank, true,
                      [backend](const plan::Case& c) { return c.backend == backend && c.buffers != "host"; });
}

std::optional<std::string> device_memory_refusal(const MemoryNeed& need, const backend::DeviceMemory& device, int rank,
                                                 const std::string& host) {
  if (need.per_rank <= device.free_bytes) return std::nullopt;
  return fmt::format(
      "not enough GPU memory for {}: its device buffers need {} per rank, and GPU {} of rank {} on host '{}' has {} "
      "free of {} ({}); use smaller sizes (-b/-e, --tokens), or free the GPU",
      need.case_label, format_bytes(need.per_rank), device.device, rank, host, format_bytes(device.free_bytes),
      format_bytes(device.total_bytes), device.source);
}

namespace {

// This rank's refusal for its GPU: per backend whose cases hold device buffers and that reports
// its device's memory, the largest of those cases against the free memory.
std::optional<std::string> device_refusal(const plan::Sweep& sweep, const ProcessInfo& info, const Placement& placement,
                                          const std::string& host) {
  std::vector<std::string> backends;
  for (const auto& c : sweep.cases) {
    if (c.buffers != "host" && std::find(backends.begin(), backends.end(), c.backend) == backends.end())
      backends.push_back(c.backend);
  }
  for (const auto& name : backends) {
    const auto device = backend::backend_policy(name).device_memory(info.local_rank, info.ranks_on_host);
    if (!device) continue;
    if (auto refusal =
            device_memory_refusal(sweep_device_need(sweep, placement, info.rank, name), *device, info.rank, host)) {
      return refusal;
    }
  }
  return std::nullopt;
}

}  // namespace

void check_memory(const plan::Sweep& sweep, const Control& control, const ProcessInfo& info,
                  const Placement& placement) {
  if (backend::sim::active()) return;
  const std::string host =
      static_cast<std::size_t>(info.rank) < info.hosts.size() ? info.hosts[info.rank].host : std::string("?");
  std::optional<std::string> mine;
  if (const auto available = host_memory_available()) {
    mine = memory_refusal(sweep_memory_need(sweep, placement, info.rank), info.ranks_on_host, *available, host);
  }
  if (const auto refusal = agreed_refusal(control, mine)) throw InputError(*refusal);
  if (const auto refusal = agreed_refusal(control, device_refusal(sweep, info, placement, host))) {
    throw InputError(*refusal);
  }
}

}  // namespace collbench::run
