// Checks of a sweep against the ranks it runs on, made before anything is allocated or written
// (docs/errors.md, "Sizes, roots and memory"): a broadcast root that is not a rank of its
// communicator, sizes that round down to 0 bytes on it (all-to-all 4 B on 2 ranks), buffers
// that do not fit in the memory of a node (run/memory_budget.hpp). Pure except
// checked_sweep, which agrees the memory verdict over all ranks.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "collbench/coll/collective.hpp"
#include "collbench/core/placement.hpp"
#include "collbench/plan/sweep.hpp"
#include "collbench/run/session.hpp"

namespace collbench::run {

// Ranks of the communicator a case runs on: the world under scope global (hierarchical
// algorithms and the concurrent families included), the largest domain under scope domain.
int case_comm_size(const plan::Case& c, const Placement& placement);

// InputError when a broadcast's root is not a rank of its communicator (under scope domain: of
// the smallest domain's); `source` is the sweep's (a file, or "<command line>" for -r/--root).
void check_root(const plan::Case& c, const coll::Collective& coll, const Placement& placement,
                const std::string& source);

// The smallest requested size whose shape is not empty for this dtype on comm_size ranks
// (all-to-all: 16 B per peer, so 32 B on 2 ranks); 0 when no size up to 2^50 B is (families
// sized by other parameters).
std::uint64_t smallest_measured_size(const plan::Case& c, const coll::Collective& coll, const Placement& placement,
                                     int comm_size);

struct SizeCheck {
  plan::Sweep sweep;               // the cases that measure something
  std::vector<std::string> notes;  // one per group of skipped sizes
};

// Leaves out the cases whose requested size rounds down to 0 B on their communicator, with a
// note per collective, dtype and rank count naming the sizes and the smallest accepted one;
// InputError when that leaves none of such a group (every size of it too small).
SizeCheck drop_empty_sizes(const plan::Sweep& sweep, const Placement& placement);

// The checks above and the memory check, on every rank: the sweep that runs (rank 0 prints the
// notes on skipped sizes), or an InputError that every rank throws alike.
plan::Sweep checked_sweep(const plan::Sweep& sweep, const Control& control, const ProcessInfo& info,
                          const Placement& placement);

// Every case checked up front, before anything is allocated (the same outcome on every rank: pure
// checks): the family's parameters, the overlap spec and its chunks, the buffer kind and --graph for
// the backend. InputError naming the flag and the value.
void validate_cases(const plan::Sweep& sweep);

}  // namespace collbench::run
