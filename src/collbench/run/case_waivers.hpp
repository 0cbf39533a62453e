// Waivers the runner gives a case before it has a shape: what a simulation does not model, and
// the algorithms the placement or the backend cannot run (runner.cpp). Pure: the same outcome on
// every rank.
#pragma once

#include <optional>
#include <string>

#include "collbench/core/placement.hpp"
#include "collbench/plan/case.hpp"

namespace collbench::run {

// What a simulation (SimGrid SMPI, docs/simulation.md) does not model: the reason, else nullopt.
std::optional<std::string> simulation_waiver(const plan::Case& c);

// Algorithms a case can run with; others become waived records with the reason.
std::optional<std::string> algo_waiver(const plan::Case& c, const Placement& placement);

}  // namespace collbench::run
