// Synthetic acceptance fixtures shared by the accept unit tests: a parsed and planned profile
// with one record per planned case, ok records and their model fields.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "collbench/accept/judge.hpp"
#include "collbench/accept/profile.hpp"
#include "collbench/core/dtype.hpp"
#include "collbench/core/names.hpp"
#include "collbench/core/placement.hpp"
#include "collbench/core/units.hpp"
#include "collbench/record/record.hpp"

namespace collbench::accept_fixtures {

using collbench::record::CaseRecord;
using namespace collbench::accept;

struct Fixture {
  AcceptanceProfile profile;
  std::vector<PlacementGroup> groups;
  std::vector<GroupRecords> records;
};

// Parses `yaml`, plans it on `n` ranks (domains of `rpd` when a check asks) and makes one record
// per planned case with `make`.
inline Fixture build(const std::string& yaml, int n,
                     const std::function<CaseRecord(const PlannedCase&, int index)>& make) {
  Fixture f;
  f.profile = parse_acceptance_profile(yaml, "t.yaml");
  f.groups = plan_acceptance(f.profile, [n](const std::optional<int>& rpd, const std::optional<std::string>& sizes) {
    if (sizes) return collbench::placement_from_sizes(n, collbench::parse_domain_sizes(*sizes));
    return collbench::placement_from_ranks_per_domain(n, rpd.value_or(n));
  });
  for (const auto& g : f.groups) {
    GroupRecords gr;
    gr.group = &g;
    for (std::size_t i = 0; i < g.cases.size(); ++i) gr.records.push_back(make(g.cases[i], static_cast<int>(i)));
    f.records.push_back(std::move(gr));
  }
  return f;
}

// An ok record of `bytes` at p50 `p50_us` on `n` ranks (busbw factor `factor`).
inline CaseRecord ok_record(const PlannedCase& pc, double p50_us, int n, double factor) {
  CaseRecord r;
  r.collective = pc.spec.collective;
  r.algo_requested = pc.spec.algo;
  r.backend = pc.spec.backend;
  r.dtype = std::string(collbench::to_string(pc.spec.dtype));
  r.scope = std::string(collbench::to_string(pc.spec.scope));
  r.bytes = pc.bytes;
  r.num_ranks = n;
  r.domain_sizes = {n};
  r.num_domains = 1;
  collbench::record::TimeStats t;
  t.p50 = t.mean = t.min = t.max = t.p99 = p50_us;
  r.time_us = t;
  r.algbw_gbps = collbench::gbps(static_cast<double>(pc.bytes), p50_us);
  r.busbw_gbps = r.algbw_gbps * factor;
  r.per_rank = collbench::record::PerRank{std::vector<double>(static_cast<std::size_t>(n), p50_us),
                                          std::vector<double>(static_cast<std::size_t>(n), p50_us),
                                          std::vector<double>(static_cast<std::size_t>(n), p50_us * 0.5)};
  return r;
}

inline void set_model(CaseRecord& r, double bound_busbw, double expected_busbw) {
  collbench::record::ModelFields m;
  m.system = "synthetic";
  m.bound_busbw_gbps = bound_busbw;
  m.expected_busbw_gbps = expected_busbw;
  // bytes / time x factor = busbw: the factor cancels in the time, as for the measured values.
  const double factor = r.busbw_gbps / r.algbw_gbps;
  m.bound_time_us = static_cast<double>(r.bytes) / (bound_busbw / factor) / 1e3;
  m.expected_time_us = static_cast<double>(r.bytes) / (expected_busbw / factor) / 1e3;
  r.model = m;
}

}  // namespace collbench::accept_fixtures
