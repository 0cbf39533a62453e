// Composition of the formulas in bounds.hpp into per-case estimates.
//
// Each algorithm is described as a Plan (algorithm_plans.cpp): phases run one after another (or, when pipelined,
// overlapped), each phase moving some bytes per rank over some link classes at once. The
// bound and the expected value are the same Plan evaluated with two sets of rates:
//   bound:    line rates (per direction), no latency, no calibrated caps;
//   expected: line rate x calibrated efficiency (and the switch's calibrated reduction cap,
//             and on CPU the measured concurrent memory-copy rate), plus latency terms.
// Because expected rates never exceed bound rates and latencies are >= 0, expected can never
// beat the bound; tests check this property over every profile and algorithm.
#include "collbench/model/estimate.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <variant>

#include "collbench/core/collective_facts.hpp"
#include "collbench/core/error.hpp"
#include "collbench/core/units.hpp"
#include "collbench/model/algorithm_plans.hpp"

namespace collbench::model {
namespace {

using namespace detail;

std::string protocol_names(const Plan& plan) {
  std::vector<std::string> names;
  for (const auto& p : plan.protocols) names.push_back(p.name);
  return join(names, "/");
}

Estimate estimate_from_plan(const Ctx& c, const Plan& plan) {
  const SystemProfile& s = c.system;
  const int domains = c.shape.num_domains;
  const double bound_s = plan_transfer_time_s(plan, bound_rates(s, domains), false);
  const ExpectedTime expected = plan_expected_time(plan, s, domains);
  const double expected_s = expected.seconds;
  const double factor = collbench::busbw_factor(c.collective, c.shape.n);
  Estimate e;
  e.system = s.name;
  e.bound_time_us = bound_s * 1e6;
  e.bound_algbw_gbps = gbps(c.bytes, e.bound_time_us);
  e.bound_busbw_gbps = e.bound_algbw_gbps * factor;
  e.expected_time_us = expected_s * 1e6;
  e.expected_algbw_gbps = gbps(c.bytes, e.expected_time_us);
  e.expected_busbw_gbps = e.expected_algbw_gbps * factor;
  e.wire_bytes_per_rank = plan.wire_bytes_per_rank;
  e.algo_modelled = plan.algo;
  e.note = plan.note;
  e.protocol = expected.protocol;
  if (!expected.protocol.empty()) {
    e.note = fmt::format("{}protocol {} (lowest expected of {})", e.note.empty() ? "" : e.note + "; ",
                         expected.protocol, protocol_names(plan));
  }
  e.busbw_ranks = c.shape.n;
  e.bound_margin = s.calibrated ? s.calibrated->margin : 0.0;
  return e;
}

void append_note(Estimate& e, const std::string& text) {
  if (text.empty()) return;
  e.note = e.note.empty() ? text : e.note + "; " + text;
}

// One communicator (global scope, or one domain of a domain-scoped case).
ModelOutcome model_communicator(const SystemProfile& s, const CaseGeometry& g, const std::vector<int>& sizes) {
  const CollectiveId id = collective_id(g.collective).value_or(CollectiveId::reduce);
  const Ctx c{s, g, id, shape_of(sizes), static_cast<double>(g.bytes)};
  const bool is_auto = g.algo == "auto" || (g.algo == "flat" && !flat_is_direct(id));
  if (!is_auto) {
    const Planned p = plan_for(c, g.algo);
    if (const auto* why = std::get_if<NotModelled>(&p)) return {std::nullopt, why->reason};
    return {estimate_from_plan(c, std::get<Plan>(p)), ""};
  }
  // auto: the library picks the candidate it models fastest; the bound is the fastest any
  // candidate could go (a measurement must not beat it whichever the library ran).
  std::optional<Estimate> best;
  double min_bound_us = kInf;
  std::vector<std::string> considered;
  for (const auto& algo : auto_candidates(c)) {
    const Planned p = plan_for(c, algo);
    if (std::holds_alternative<NotModelled>(p)) continue;
    const Estimate e = estimate_from_plan(c, std::get<Plan>(p));
    considered.push_back(algo);
    min_bound_us = std::min(min_bound_us, e.bound_time_us);
    if (!best || e.expected_time_us < best->expected_time_us) best = e;
  }
  if (!best) return {std::nullopt, fmt::format("no modelled algorithm for {} on '{}'", g.collective, s.name)};
  if (considered.size() > 1) {
    best->bound_time_us = min_bound_us;
    best->bound_algbw_gbps = gbps(c.bytes, min_bound_us);
    best->bound_busbw_gbps = best->bound_algbw_gbps * collbench::busbw_factor(id, c.shape.n);
    append_note(*best, fmt::format("{}: predicted {} (lowest expected of {}); bound = fastest candidate", g.algo,
                                   best->algo_modelled, join(considered, "/")));
  }
  return {best, ""};
}

}  // namespace

const std::vector<std::string>& modelled_collectives() {
  static const std::vector<std::string> kNames = collective_names_where(&CollectiveFacts::modelled);
  return kNames;
}

double busbw_factor(std::string_view collective, int num_ranks) {
  const CollectiveFacts* f = find_collective_facts(collective);
  if (f == nullptr || !f->modelled) {
    throw InputError(unknown_name_message("collective", collective, modelled_collectives()));
  }
  return collbench::busbw_factor(f->busbw, num_ranks);
}

std::string packing_string(const Placement& placement) {
  std::vector<std::string> parts;
  const auto& sizes = placement.domain_sizes;
  for (std::size_t i = 0; i < sizes.size();) {
    std::size_t j = i;
    while (j < sizes.size() && sizes[j] == sizes[i]) ++j;
    const std::size_t run = j - i;
    parts.push_back(run > 1 ? fmt::format("{}x{}", run, sizes[i]) : fmt::format("{}", sizes[i]));
    i = j;
  }
  return join(parts, "+");
}

ModelOutcome model_case(const SystemProfile& system, const CaseGeometry& geometry) {
  const auto& sizes = geometry.placement.domain_sizes;
  if (sizes.empty() || std::any_of(sizes.begin(), sizes.end(), [](int s) { return s <= 0; })) {
    return {std::nullopt, "empty placement"};
  }
  const CollectiveFacts* facts = find_collective_facts(geometry.collective);
  if (facts == nullptr || !facts->modelled) {
    return {std::nullopt, fmt::format("collective '{}' is not modelled per case (modelled: {}); MoE cases use the "
                                      "traffic-matrix model",
                                      geometry.collective, join(modelled_collectives()))};
  }
  const int limit = system.scale_up.domain_size;
  if (!system.is_cpu() && limit > 0) {
    const int largest = *std::max_element(sizes.begin(), sizes.end());
    if (largest > limit) {
      return {std::nullopt, fmt::format("a domain of {} ranks exceeds the {}-GPU scale-up domain of '{}'", largest,
                                        limit, system.name)};
    }
  }
  if (geometry.scope == Scope::global) {
    ModelOutcome out = model_communicator(system, geometry, sizes);
    if (out.estimate && sizes.size() > 1 && !geometry.placement.uniform() &&
        out.estimate->note.find("uneven packing") == std::string::npos) {
      append_note(*out.estimate, "uneven packing " + packing_string(geometry.placement));
    }
    return out;
  }
  // Domain scope: every domain runs its own communicator at the same time over its own links;
  // the case completes with the slowest domain.
  std::vector<int> distinct = sizes;
  std::sort(distinct.begin(), distinct.end());
  distinct.erase(std::unique(distinct.begin(), distinct.end()), distinct.end());
  std::optional<Estimate> worst;
  double worst_expected_us = 0.0;
  for (const int m : distinct) {
    ModelOutcome one = model_communicator(system, geometry, {m});
    if (!one.estimate) return one;
    worst_expected_us = std::max(worst_expected_us, one.estimate->expected_time_us);
    if (!worst || one.estimate->bound_time_us > worst->bound_time_us) worst = one.estimate;
  }
  if (worst->expected_time_us < worst_expected_us) {
    worst->expected_time_us = worst_expected_us;
    worst->expected_algbw_gbps = gbps(static_cast<double>(geometry.bytes), worst_expected_us);
    worst->expected_busbw_gbps = worst->expected_algbw_gbps * collbench::busbw_factor(facts->busbw, worst->busbw_ranks);
  }
  append_note(*worst, sizes.size() == 1
                          ? std::string("scope domain: one domain")
                          : fmt::format("scope domain: {} domains at once, the {}-rank domain sets the bound",
                                        sizes.size(), worst->busbw_ranks));
  return {worst, ""};
}

std::optional<Estimate> estimate(const SystemProfile& system, const CaseGeometry& geometry) {
  return model_case(system, geometry).estimate;
}

double efficiency(const Estimate& estimate, double measured_p50_us) {
  return measured_p50_us > 0.0 ? estimate.bound_time_us / measured_p50_us : 0.0;
}

BoundCheck check_against_bound(const Estimate& estimate, double measured_p50_us) {
  BoundCheck c;
  c.efficiency = efficiency(estimate, measured_p50_us);
  c.beats_bound = measured_p50_us > 0.0 && measured_p50_us < estimate.bound_time_us;
  c.beyond_margin = measured_p50_us > 0.0 && measured_p50_us < estimate.bound_time_us * (1.0 - estimate.bound_margin);
  return c;
}

}  // namespace collbench::model
