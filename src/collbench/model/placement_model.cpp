// Placement and model for imported records (placement_model.hpp).
#include "collbench/model/placement_model.hpp"

#include <fmt/format.h>

#include "collbench/core/dtype.hpp"
#include "collbench/core/error.hpp"
#include "collbench/core/names.hpp"
#include "collbench/core/placement.hpp"
#include "collbench/model/estimate.hpp"
#include "collbench/record/nccltests_convert.hpp"

namespace collbench::model {

DomainChoice choose_ranks_per_domain(std::optional<int> ranks_per_domain, const SystemProfile* system) {
  DomainChoice c;
  const int system_domain = system && !system->is_cpu() ? system->scale_up.domain_size : 0;
  if (ranks_per_domain) {
    if (*ranks_per_domain < 1) {
      throw InputError(fmt::format("--ranks-per-domain {}: expected a positive number of ranks", *ranks_per_domain));
    }
    if (system_domain > 0 && *ranks_per_domain > system_domain) {
      throw InputError(fmt::format("--ranks-per-domain {} exceeds the {}-GPU scale-up domain of '{}'",
                                   *ranks_per_domain, system_domain, system->name));
    }
    c.ranks_per_domain = ranks_per_domain;
    c.from = "--ranks-per-domain";
  } else if (system_domain > 0) {
    c.ranks_per_domain = system_domain;
    c.from = fmt::format("system {} ({}-GPU domain)", system->name, system_domain);
  }
  return c;
}

record::ModelFields model_fields_from(const SystemProfile& system, const Estimate& e, std::optional<double> p50_us) {
  record::ModelFields mf;
  mf.system = system.name;
  mf.bound_time_us = e.bound_time_us;
  mf.bound_algbw_gbps = e.bound_algbw_gbps;
  mf.bound_busbw_gbps = e.bound_busbw_gbps;
  mf.expected_time_us = e.expected_time_us;
  mf.expected_busbw_gbps = e.expected_busbw_gbps;
  mf.wire_bytes_per_rank = e.wire_bytes_per_rank;
  if (p50_us) mf.efficiency = model::check_against_bound(e, *p50_us).efficiency;
  return mf;
}

std::optional<record::ModelFields> model_fields_for(const SystemProfile& system, const record::CaseRecord& r,
                                                    std::string& why) {
  model::CaseGeometry g;
  try {
    g.collective = r.collective;
    g.algo = r.algo_requested;
    g.dtype = parse_dtype(r.dtype);
    g.bytes = r.bytes;
    g.placement = placement_from_sizes(r.num_ranks, r.domain_sizes);
    g.scope = parse_scope(r.scope);
  } catch (const InputError& e) {
    why = e.what();
    return std::nullopt;
  }
  const auto outcome = model::model_case(system, g);
  if (!outcome.estimate) {
    why = outcome.why_not.empty() ? "not modelled" : outcome.why_not;
    return std::nullopt;
  }
  const bool timed = r.time_us && r.time_us->p50 > 0.0;
  return model_fields_from(system, *outcome.estimate, timed ? std::optional<double>(r.time_us->p50) : std::nullopt);
}

namespace {

bool place(record::CaseRecord& r, const DomainChoice& choice) {
  if (!choice.ranks_per_domain || !record::placement_unknown(r)) return false;
  r.domain_sizes = placement_from_ranks_per_domain(r.num_ranks, *choice.ranks_per_domain).domain_sizes;
  r.num_domains = static_cast<int>(r.domain_sizes.size());
  r.extra["placement_note"] =
      fmt::format("placement given to report ({}): domains of {} ranks in rank order, the last one partial",
                  choice.from, *choice.ranks_per_domain);
  r.case_key = record::make_case_key(r);
  return true;
}

}  // namespace

Annotated place_and_model(std::vector<record::InputFile>& files, const DomainChoice& choice,
                          const SystemProfile* system) {
  Annotated out;
  for (auto& f : files) {
    for (auto& r : f.cases) {
      if (place(r, choice)) ++out.placed;
      if (!system || r.model || r.status != "ok") continue;
      std::string why;
      if (auto mf = model_fields_for(*system, r, why)) {
        r.model = std::move(mf);
        r.extra.erase("model_note");
        ++out.modelled;
      } else {
        r.extra["model_note"] =
            record::placement_unknown(r) ? fmt::format("{} (placement unknown: give --ranks-per-domain M)", why) : why;
      }
    }
  }
  return out;
}

}  // namespace collbench::model
