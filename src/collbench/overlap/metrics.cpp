// Overlap formulas (metrics.hpp).
#include "collbench/overlap/metrics.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace collbench::overlap {

OverlapMetrics overlap_metrics(double t_comm_us, double t_compute_us, double t_both_us) {
  for (const double t : {t_comm_us, t_compute_us, t_both_us}) {
    if (!std::isfinite(t) || t < 0.0) throw std::invalid_argument("overlap times must be finite and non-negative");
  }
  OverlapMetrics m;
  m.t_comm_us = t_comm_us;
  m.t_compute_us = t_compute_us;
  m.t_both_us = t_both_us;
  m.exposed_us = t_both_us - t_compute_us;
  const double shorter = std::min(t_comm_us, t_compute_us);
  if (shorter > 0.0) m.efficiency = (t_comm_us + t_compute_us - t_both_us) / shorter;
  return m;
}

}  // namespace collbench::overlap
