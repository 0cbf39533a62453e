// Sweep checks against the ranks: roots, sizes that round to nothing, memory.
#include "collbench/run/case_checks.hpp"

#include <fmt/format.h>

#include <cstdio>
#include <map>
#include <tuple>

#include "collbench/backend/policy.hpp"
#include "collbench/coll/collective.hpp"
#include "collbench/core/error.hpp"
#include "collbench/core/units.hpp"
#include "collbench/overlap/spec.hpp"
#include "collbench/run/control_row_gather.hpp"
#include "collbench/run/measure.hpp"
#include "collbench/run/memory_budget.hpp"

namespace collbench::run {
namespace {

constexpr std::uint64_t kLargestProbe = std::uint64_t{1} << 50;

// "-r/--root" on the command line, the key `root` in a sweep file.
std::string root_flag(const std::string& source) {
  return source == "<command line>" ? std::string("-r/--root") : fmt::format("{}: key 'root':", source);
}

// The shape rank 0 of the case's communicator sees (the record's).
coll::Shape rank0_shape(const plan::Case& c, std::uint64_t bytes, const coll::Collective& coll,
                        const Placement& placement, int comm_size) {
  return coll.shape_for(bytes, case_context(c, 0, comm_size, &placement));
}

// A too-small size: requested bytes that the family's rounding turns into an empty case.
bool rounds_to_nothing(const plan::Case& c, const coll::Collective& coll, const Placement& placement, int comm_size) {
  return c.bytes > 0 && rank0_shape(c, c.bytes, coll, placement, comm_size).bytes == 0;
}

// "4 B, 8 B and 16 B"
std::string size_list(const std::vector<std::uint64_t>& sizes) {
  std::string out;
  for (std::size_t i = 0; i < sizes.size(); ++i) {
    if (i > 0) out += i + 1 == sizes.size() ? " and " : ", ";
    out += fmt::format("{} B", sizes[i]);
  }
  return out;
}

// Cases of one collective, dtype and communicator size whose sizes round to nothing.
struct EmptyGroup {
  std::vector<std::uint64_t> sizes;  // requested, in sweep order, without repeats
  std::size_t cases = 0;             // cases of the group (too small or not)
  std::size_t empty = 0;             // of which too small
  std::uint64_t smallest = 0;
};

std::string group_text(const std::tuple<std::string, Dtype, int>& key, const EmptyGroup& g,
                       const coll::Collective& coll) {
  return fmt::format("{}: {} of {} on {} ranks round{} down to 0 B (bytes = {}, rounded down as nccl-tests does)",
                     std::get<0>(key), size_list(g.sizes), to_string(std::get<1>(key)), std::get<2>(key),
                     g.sizes.size() == 1 ? "s" : "", coll.bytes_convention());
}

}  // namespace

int case_comm_size(const plan::Case& c, const Placement& placement) {
  if (c.scope == Scope::domain && placement.num_domains() > 0) return placement.largest_domain();
  return placement.num_ranks();
}

void check_root(const plan::Case& c, const coll::Collective& coll, const Placement& placement,
                const std::string& source) {
  if (coll.facts().nccl_op != NcclOp::broadcast) return;
  // Under scope domain the root is a rank of every domain's communicator: of the smallest one.
  const bool domain = c.scope == Scope::domain && placement.num_domains() > 0;
  const int ranks = domain ? placement.smallest_domain() : placement.num_ranks();
  if (c.root >= 0 && c.root < ranks) return;
  throw InputError(fmt::format("{} {} is not a rank of the {} communicator of {} ranks; accepted: 0 to {}",
                               root_flag(source), c.root, coll.name(), ranks, ranks - 1) +
                   (domain ? " (--scope domain: the smallest domain's ranks)" : ""));
}

std::uint64_t smallest_measured_size(const plan::Case& c, const coll::Collective& coll, const Placement& placement,
                                     int comm_size) {
  if (rank0_shape(c, kLargestProbe, coll, placement, comm_size).bytes == 0) return 0;
  std::uint64_t lo = 1, hi = kLargestProbe;  // invariant: hi measures something
  while (lo < hi) {
    const std::uint64_t mid = lo + (hi - lo) / 2;
    if (rank0_shape(c, mid, coll, placement, comm_size).bytes > 0) {
      hi = mid;
    } else {
      lo = mid + 1;
    }
  }
  return hi;
}

SizeCheck drop_empty_sizes(const plan::Sweep& sweep, const Placement& placement) {
  SizeCheck out;
  out.sweep = sweep;
  out.sweep.cases.clear();
  using Key = std::tuple<std::string, Dtype, int>;
  std::map<Key, EmptyGroup> groups;
  std::vector<Key> order;  // groups in sweep order, for the notes
  for (const auto& c : sweep.cases) {
    const coll::Collective& coll = coll::find_collective(c.collective);
    const int n = case_comm_size(c, placement);
    const Key key{c.collective, c.dtype, n};
    auto [it, fresh] = groups.try_emplace(key);
    if (fresh) order.push_back(key);
    EmptyGroup& g = it->second;
    ++g.cases;
    if (!rounds_to_nothing(c, coll, placement, n)) {
      out.sweep.cases.push_back(c);
      continue;
    }
    ++g.empty;
    if (std::find(g.sizes.begin(), g.sizes.end(), c.bytes) == g.sizes.end()) g.sizes.push_back(c.bytes);
    if (g.smallest == 0) g.smallest = smallest_measured_size(c, coll, placement, n);
  }
  for (const auto& key : order) {
    const EmptyGroup& g = groups.at(key);
    if (g.empty == 0) continue;
    const std::string text = group_text(key, g, coll::find_collective(std::get<0>(key)));
    if (g.empty == g.cases) {
      throw InputError(fmt::format("{}; nothing to measure: the smallest accepted size is {} B", text, g.smallest));
    }
    out.notes.push_back(
        fmt::format("{}: skipped; the smallest size that measures something is {} B", text, g.smallest));
  }
  return out;
}

plan::Sweep checked_sweep(const plan::Sweep& sweep, const Control& control, const ProcessInfo& info,
                          const Placement& placement) {
  for (const auto& c : sweep.cases) check_root(c, coll::find_collective(c.collective), placement, sweep.source);
  share_case_inputs(sweep, control, placement);
  SizeCheck sizes = drop_empty_sizes(sweep, placement);
  check_memory(sizes.sweep, control, info, placement);
  if (control.rank() == 0) {
    for (const auto& n : sizes.notes) std::fprintf(stderr, "collbench: note: %s\n", n.c_str());
  }
  return std::move(sizes.sweep);
}

void validate_cases(const plan::Sweep& sweep) {
  for (const auto& c : sweep.cases) {
    coll::find_collective(c.collective).check_params(c.params);
    if (!c.overlap.empty()) {
      overlap::parse_compute_spec(c.overlap);
      const int stages = coll::find_collective(c.collective).num_stages();
      if (c.overlap_chunks > 0 && stages > 2) {
        throw InputError(
            fmt::format("--overlap-chunks: {} has {} stages; the pipeline takes 1 or 2", c.collective, stages));
      }
      if (c.overlap_chunks > 0) pipeline_chunk_case(c, c.overlap_chunks);
    } else if (c.overlap_chunks > 0) {
      throw InputError("--overlap-chunks needs --overlap COMPUTE (e.g. --overlap gemm:workload=deepseek-v3)");
    }
    backend::backend_policy(c.backend).check_buffers(c.buffers);
    backend::check_graph(c.backend, c.graph);
    if (c.graph > 0 && !c.overlap.empty()) {
      throw InputError(
          fmt::format("--graph/-G {} with --overlap: overlap mode times each launch beside its compute "
                      "load, not a graph replay; drop one of them",
                      c.graph));
    }
  }
}

}  // namespace collbench::run
