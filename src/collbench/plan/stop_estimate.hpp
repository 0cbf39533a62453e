// How long the stopping rule (docs/measurement.md step 6) lets a case time, for estimates made
// before anything runs (`collbench sweep --dry-run`). Pure C++.
#pragma once

#include "collbench/plan/case.hpp"

namespace collbench::plan {

// The timed seconds of a case whose every iteration (sample) takes `iteration_s`, under the
// rule's limits that do not depend on the samples' spread: the earliest of --max-time,
// --max-iters iterations and the budget (at least max(budget_iters, min_iters) iterations and
// --budget seconds; off when budget_s is 0). An upper estimate: a case that converges (its
// interval within --max-noise) stops sooner. iteration_s = infinity: --max-time.
double timed_seconds(const StopRule& rule, double iteration_s);

// The longest iteration for which the budget's seconds, not its iteration count, end the case:
// budget_s / max(budget_iters, min_iters) (0.1 ms by default); infinity when the budget is off.
double budget_iteration_s(const StopRule& rule);

}  // namespace collbench::plan
