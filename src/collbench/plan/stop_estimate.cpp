// The stopping rule's time limits for estimates before a run (stop_estimate.hpp).
#include "collbench/plan/stop_estimate.hpp"

#include <algorithm>
#include <limits>

namespace collbench::plan {
namespace {

constexpr double kInfinity = std::numeric_limits<double>::infinity();

// Iterations the budget needs besides its seconds (the measure loop's stop test, min_iters first).
int budget_iterations(const StopRule& rule) {
  return std::max(rule.budget_iters, rule.min_iters);
}

bool budget_can_stop(const StopRule& rule) {
  return rule.budget_s > 0.0 && rule.max_iters >= budget_iterations(rule);
}

}  // namespace

double timed_seconds(const StopRule& rule, double iteration_s) {
  double t = rule.max_time_s;
  if (iteration_s < kInfinity) t = std::min(t, rule.max_iters * iteration_s);
  if (budget_can_stop(rule)) t = std::min(t, std::max(rule.budget_s, budget_iterations(rule) * iteration_s));
  return t;
}

double budget_iteration_s(const StopRule& rule) {
  return rule.budget_s > 0.0 ? rule.budget_s / budget_iterations(rule) : kInfinity;
}

}  // namespace collbench::plan
