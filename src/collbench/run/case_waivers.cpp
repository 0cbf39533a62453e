// Waivers before a case's shape (case_waivers.hpp).
#include "collbench/run/case_waivers.hpp"

#include <fmt/format.h>

#include "collbench/backend/hierarchical.hpp"
#include "collbench/backend/mpi/simulation.hpp"
#include "collbench/backend/policy.hpp"

namespace collbench::run {

std::optional<std::string> simulation_waiver(const plan::Case& c) {
  if (!backend::sim::active()) return std::nullopt;
  if (c.algo == "nvls" || c.algo == "nvlstree" || c.algo == "cb-multimem") {
    return fmt::format("simulation: SMPI models no in-switch reduction (NVLink SHARP), so '{}' cannot be simulated",
                       c.algo);
  }
  if (!c.overlap.empty()) {
    return std::string(
        "simulation: --overlap's compute load runs on host time, which does not advance the simulated "
        "clock");
  }
  return std::nullopt;
}

std::optional<std::string> algo_waiver(const plan::Case& c, const Placement& placement) {
  if (auto sim = simulation_waiver(c)) return sim;
  if (c.algo == "hierarchical") {
    if (c.scope != Scope::global) return std::string("hierarchical spans domains: use --scope global");
    return backend::hierarchical_waiver(c.collective, placement.uniform(), placement.num_domains());
  }
  return backend::backend_policy(c.backend).algo_waiver(c.algo, c.collective, c.graph);
}

}  // namespace collbench::run
