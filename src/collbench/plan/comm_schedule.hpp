// The order a sweep's cases run in, and when each communicator set is released. A set is what
// one backend instance key needs (run/runner.cpp: backend x algorithm setting x buffers x
// progress; NCCL reads NCCL_ALGO when a communicator is created, and registered buffers belong to
// it): the world communicator and its domain and cross-domain splits. The runner creates a set at
// its first case and releases it after its last (docs/measurement.md "Communicator lifecycle"),
// so the order decides how many sets are alive at once. Pure: tested in tests/unit.
//
// Orders kept (a case never moves past another case of its own set, and):
//   - regrouped (run, sweep): sets run one after the other, in the order of their first case in
//     the sweep; inside a set, the sweep's order. With one set (every MPI sweep without overlap
//     cases) that is the sweep's order. Cases with the same case key keep their sweep order
//     whenever they share a set (the case key names backend and algorithm, so only a sweep that
//     lists one case under two --buffers kinds can have two sets under one key), so the case
//     measured for a repeated key is still the first one in the sweep; a --resume matches
//     finished cases by key, not position, and the order is a function of the configuration,
//     which --resume requires to be the same; --repeats k runs every pass in this order.
//   - kept (accept, locate): the caller's order, untouched; their repetitions interleave on
//     purpose (A B A B: drift falls on both). Sets are still released after their last case.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

namespace collbench::plan {

struct CaseSchedule {
  std::vector<std::size_t> order;          // case indices in run order
  std::vector<int> set_of;                 // per case index: its set, numbered by first appearance
  std::vector<std::size_t> last_position;  // per set: the position in `order` of its last case
  int max_live_sets = 0;                   // the most sets alive at once in this order
};

// `set_keys[i]`: case i's set key. keep_order: run in the given order (see above).
CaseSchedule schedule_cases(const std::vector<std::string>& set_keys, bool keep_order);

// Whether the set of the case at `position` of the schedule's order is released after it runs.
bool releases_after(const CaseSchedule& schedule, std::size_t position);

}  // namespace collbench::plan
