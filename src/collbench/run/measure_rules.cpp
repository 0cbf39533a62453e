// The pure parts of a measurement (measure.hpp): the case's context on a communicator, a pipeline
// chunk's case, the stopping rule, the next round's length and the choice of clock. measure.cpp
// runs the steps that use them.
#include <fmt/format.h>

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "collbench/coll/moe_plan.hpp"
#include "collbench/core/collective_facts.hpp"
#include "collbench/core/error.hpp"
#include "collbench/run/measure.hpp"
#include "collbench/stats/summary.hpp"
#include "collbench/workload/profile.hpp"

namespace collbench::run {

coll::CaseContext case_context(const plan::Case& spec, int rank, int num_ranks, const Placement* placement) {
  coll::CaseContext ctx;
  ctx.dtype = spec.dtype;
  ctx.redop = spec.redop;
  ctx.rank = rank;
  ctx.num_ranks = num_ranks;
  ctx.in_place = spec.in_place;
  ctx.root = spec.root;
  ctx.params = &spec.params;
  ctx.algo = spec.algo;
  if (spec.scope == Scope::global && placement != nullptr && placement->num_ranks() == num_ranks) {
    ctx.placement = *placement;
  } else {
    ctx.placement = placement_from_sizes(num_ranks, {num_ranks});
  }
  return ctx;
}

plan::Case pipeline_chunk_case(const plan::Case& spec, int chunks) {
  plan::Case c = spec;
  if (chunks < 1) throw InputError(fmt::format("--overlap-chunks {}: must be at least 1", chunks));
  if (is_moe_collective(spec.collective)) {
    const coll::MoeParams p = coll::parse_moe_params(spec.params);
    const int tokens = p.tokens ? *p.tokens : workload::load_workload_profile(p.workload).tokens_per_rank;
    if (tokens < chunks) {
      throw InputError(fmt::format("--overlap-chunks {}: {} tokens per rank cannot be split into {} chunks", chunks,
                                   tokens, chunks));
    }
    c.params["tokens"] = std::to_string((tokens + chunks - 1) / chunks);
  } else {
    if (spec.bytes / static_cast<std::uint64_t>(chunks) == 0) {
      throw InputError(
          fmt::format("--overlap-chunks {}: {} B cannot be split into {} chunks", chunks, spec.bytes, chunks));
    }
    c.bytes = spec.bytes / static_cast<std::uint64_t>(chunks);
  }
  c.overlap_chunks = 0;
  return c;
}

std::string stop_reason(const plan::StopRule& rule, const std::vector<double>& samples, double elapsed_s) {
  const auto n = static_cast<int>(samples.size());
  if (n >= rule.max_iters) return "max_iters";
  if (elapsed_s >= rule.max_time_s) return "max_time";
  if (n < rule.min_iters) return {};
  if (elapsed_s >= rule.min_time_s && stats::summarize(samples).relative_ci_half_width() <= rule.max_noise) {
    return "converged";
  }
  if (rule.budget_s > 0 && n >= rule.budget_iters && elapsed_s >= rule.budget_s) return "budget";
  return {};
}

int next_round_size(const plan::StopRule& rule, int iterations, int round, double elapsed_s) {
  const double per_iter_s = elapsed_s / static_cast<double>(std::max(iterations, 1));
  // Iterations that fill `seconds` at the rate so far (rounded down, plus one).
  const auto iters_in = [per_iter_s](double seconds) {
    return static_cast<long long>(std::max(seconds, 0.0) / per_iter_s) + 1;
  };
  long long next = std::min<long long>(2LL * round, static_cast<long long>(rule.max_iters) - iterations);
  if (per_iter_s > 0) next = std::min(next, iters_in(rule.max_time_s - elapsed_s));
  if (rule.budget_s > 0 && per_iter_s > 0) {
    const long long to_iters = static_cast<long long>(std::max(rule.budget_iters, rule.min_iters)) - iterations;
    const long long to_time = elapsed_s < rule.budget_s ? iters_in(rule.budget_s - elapsed_s) : 0;
    const long long to_budget = std::max(to_iters, to_time);
    if (to_budget > 0) next = std::min(next, to_budget);
  }
  return static_cast<int>(std::clamp<long long>(next, 1, 4096));
}

bool use_inline_clock(bool timer_reads_mpi_wtime, bool case_has_faults) {
  return timer_reads_mpi_wtime && !case_has_faults;
}

}  // namespace collbench::run
