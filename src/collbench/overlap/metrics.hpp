// Overlap metrics (docs/overlap.md): how much of a collective stays exposed when compute runs
// beside it. Pure C++, no hardware; every formula is a small function unit-tested against
// hand-computed values (tests/unit/test_overlap.cpp).
#pragma once

#include <optional>

namespace collbench::overlap {

struct OverlapMetrics {
  double t_comm_us = 0.0;     // the collective alone
  double t_compute_us = 0.0;  // the compute load alone
  double t_both_us = 0.0;     // both started together, until both finished
  // t_both - t_compute: what the collective adds to a step whose compute it should hide behind.
  // May be slightly negative from noise when the collective hides completely; never clamped.
  double exposed_us = 0.0;
  // (t_comm + t_compute - t_both) / min(t_comm, t_compute): the time saved by running both at
  // once, as a fraction of the most that could be saved. 1 = the shorter one hid completely,
  // 0 = no overlap (serial), < 0 = running both at once was slower than one after the other
  // (contention). Null when either time is not positive (nothing to hide, or nothing to hide
  // behind).
  std::optional<double> efficiency;
};

// Derivation: run serially, both take t_comm + t_compute; perfectly overlapped,
// max(t_comm, t_compute). The saving t_comm + t_compute - t_both is at most
// min(t_comm, t_compute), hence the normalisation. Exposed communication is measured from the
// compute's point of view (the step is compute-bound when the collective hides):
// exposed = t_both - t_compute. Throws std::invalid_argument for negative or non-finite times.
OverlapMetrics overlap_metrics(double t_comm_us, double t_compute_us, double t_both_us);

}  // namespace collbench::overlap
