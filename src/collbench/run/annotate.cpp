// A case's record: its identity before the run, its measurement, and the model's bound and
// expected value beside it (see annotate.hpp).
#include "collbench/run/annotate.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "collbench/core/units.hpp"
#include "collbench/model/estimate.hpp"
#include "collbench/model/placement_model.hpp"
#include "collbench/stats/summary.hpp"

namespace collbench::run {
namespace {

// Scope domain over several domains: every domain's own statistics (its per-iteration time is
// the max over its ranks), so each domain can be judged separately.
nlohmann::json per_domain_json(const Measurement& m, const coll::Collective& coll, const std::vector<int>& sizes,
                               std::uint64_t bytes) {
  nlohmann::json out = nlohmann::json::array();
  int first = 0;
  for (std::size_t d = 0; d < m.domain_samples_us.size() && d < sizes.size(); ++d) {
    const auto s = stats::summarize(m.domain_samples_us[d]);
    const double algbw = gbps(static_cast<double>(bytes), s.p50);
    out.push_back({{"domain", d},
                   {"first_rank", first},
                   {"num_ranks", sizes[d]},
                   {"iterations", m.domain_samples_us[d].size()},
                   {"time_us",
                    {{"p50", s.p50},
                     {"p5", s.p5},
                     {"p95", s.p95},
                     {"min", s.min},
                     {"max", s.max},
                     {"mean", s.mean},
                     {"cv", s.cv},
                     {"ci95_low", s.ci95_low},
                     {"ci95_high", s.ci95_high}}},
                   {"algbw_gbps", algbw},
                   {"busbw_gbps", algbw * coll.busbw_factor(sizes[d])}});
    first += sizes[d];
  }
  return out;
}

// The model fields of a record from an estimate (of a collective, or of a traffic matrix).
void set_model(record::CaseRecord& r, const model::SystemProfile& system, const model::Estimate& e) {
  r.model = model::model_fields_from(system, e, r.time_us->p50);
}

// A run faster than its bound is flagged, never hidden.
void note_bound_check(record::CaseRecord& r, const model::BoundCheck& check) {
  if (!check.beats_bound) return;
  r.extra["bound_check"] = check.beyond_margin
                               ? "faster than the bound beyond the profile's margin: the model or profile is wrong"
                               : "faster than the bound within the calibration margin (noise)";
}

// Concurrent parts (ep-dp-concurrent): each part alone (its side operation "<name>_alone"),
// all at once (the case's p50), and interference = both / slowest part alone.
nlohmann::json concurrent_json(const record::CaseRecord& r, const std::vector<coll::ConcurrentPart>& parts,
                               const std::map<std::string, double>& side_us) {
  nlohmann::json j = nlohmann::json::object();
  double slowest_alone = 0.0;
  bool all_alone = true;
  for (const auto& p : parts) {
    j[p.name + "_bytes"] = p.bytes;
    j[p.name + "_ranks"] = p.ranks;
    const auto it = side_us.find(p.name + "_alone");
    if (it == side_us.end()) {
      j[p.name + "_alone_us"] = nullptr;
      all_alone = false;
    } else {
      j[p.name + "_alone_us"] = it->second;
      slowest_alone = std::max(slowest_alone, it->second);
    }
  }
  j["both_us"] = r.time_us ? nlohmann::json(r.time_us->p50) : nlohmann::json(nullptr);
  j["interference"] = all_alone && r.time_us && slowest_alone > 0.0 ? nlohmann::json(r.time_us->p50 / slowest_alone)
                                                                    : nlohmann::json(nullptr);
  return j;
}

// The bound of concurrent parts: the slowest part's, as the parts use disjoint links
// (docs/model.md, "Concurrent parts"); each part's bound and expected time go into `j`.
void model_concurrent(record::CaseRecord& r, nlohmann::json& j, const std::vector<coll::ConcurrentPart>& parts,
                      const plan::Case& c, const model::SystemProfile& system) {
  std::optional<model::Estimate> worst;
  double expected_us = 0.0;
  double wire = 0.0;
  std::vector<std::string> notes;
  for (const auto& p : parts) {
    model::CaseGeometry g;
    g.collective = p.collective;
    g.algo = "auto";
    g.dtype = c.dtype;
    g.bytes = p.bytes;
    g.placement = p.placement;
    g.scope = p.scope;
    const auto out = model::model_case(system, g);
    if (!out.estimate) {
      r.extra["model_note"] =
          fmt::format("part {} ({} of {} B) is not modelled: {}", p.name, p.collective, p.bytes, out.why_not);
      return;
    }
    j[p.name + "_bound_us"] = out.estimate->bound_time_us;
    j[p.name + "_expected_us"] = out.estimate->expected_time_us;
    expected_us = std::max(expected_us, out.estimate->expected_time_us);
    wire += out.estimate->wire_bytes_per_rank;
    notes.push_back(fmt::format("{}: {} bound {:.4g} us", p.name, p.collective, out.estimate->bound_time_us));
    if (!worst || out.estimate->bound_time_us > worst->bound_time_us) worst = out.estimate;
  }
  record::ModelFields mf;
  mf.system = system.name;
  mf.bound_time_us = worst->bound_time_us;
  mf.bound_algbw_gbps = gbps(static_cast<double>(r.bytes), worst->bound_time_us);
  mf.expected_time_us = expected_us;
  mf.wire_bytes_per_rank = wire;
  const auto check = model::check_against_bound(*worst, r.time_us->p50);
  mf.efficiency = check.efficiency;
  r.model = mf;  // busbw fields 0: no bus bandwidth for concurrent parts, judged on time
  r.extra["model_algo"] = std::string("concurrent");
  r.extra["model_note"] = "concurrent parts on disjoint links: bound = the slowest part (" + join(notes, "; ") + ")";
  note_bound_check(r, check);
}

}  // namespace

record::CaseRecord skeleton(const plan::Case& c, const coll::Collective& coll, const coll::Shape& shape,
                            const Placement& placement, int comm_size, const std::string& run_id) {
  record::CaseRecord r;
  r.run_id = run_id;
  r.collective = c.collective;
  if (coll.has_redop()) r.redop = std::string(to_string(c.redop));
  r.dtype = std::string(to_string(c.dtype));
  r.backend = c.backend;
  r.algo_requested = c.algo;
  r.scope = std::string(to_string(c.scope));
  r.in_place = c.in_place;
  r.timing = std::string(to_string(c.timing));
  r.buffers = c.buffers;
  r.graph = c.graph;
  r.bytes = shape.bytes;
  r.count = shape.count;
  r.bytes_per_rank_send = shape.bytes_per_rank_send;
  r.bytes_per_rank_recv = shape.bytes_per_rank_recv;
  r.bytes_max_rank = shape.bytes_max_rank;
  r.bytes_logical_total = shape.bytes_logical_total;
  r.num_ranks = placement.num_ranks();
  r.domain_sizes = placement.domain_sizes;
  r.num_domains = placement.num_domains();
  r.warmup = c.stop.warmup;
  r.comm_ranks = comm_size;
  if (record::rooted_collective(r.collective)) r.root = c.root;
  r.case_key = record::make_case_key(r);
  return r;
}

void fill_measurement(record::CaseRecord& r, const Measurement& m, const coll::Collective& coll, int comm_size,
                      std::size_t max_kept) {
  const auto summary = stats::summarize(m.samples_us);
  r.iterations = m.iterations;
  r.time_us = record::TimeStats::from(summary);
  r.samples_us.assign(m.samples_us.begin(),
                      m.samples_us.begin() + static_cast<std::ptrdiff_t>(std::min(max_kept, m.samples_us.size())));
  r.samples_dropped = m.samples_us.size() - r.samples_us.size();
  r.per_rank = record::PerRank{m.rank_mean_us, m.rank_max_us, m.rank_wait_us};
  if (!m.rank_p50_us.empty()) r.extra["per_rank_p50_us"] = m.rank_p50_us;
  if (!m.domain_samples_us.empty()) r.extra["per_domain"] = per_domain_json(m, coll, r.domain_sizes, r.bytes);
  r.stop_reason = m.stop_reason;
  r.algbw_gbps = gbps(static_cast<double>(r.bytes), summary.p50);
  r.busbw_gbps = r.algbw_gbps * coll.busbw_factor(comm_size);
  r.checked = m.checked;
  for (std::size_t rank = 0; rank < m.wrong_by_rank.size(); ++rank) {
    if (m.wrong_by_rank[rank] > 0) r.wrong_by_rank[static_cast<int>(rank)] = m.wrong_by_rank[rank];
    r.wrong_total += m.wrong_by_rank[rank];
  }
  if (r.wrong_total > 0) {
    r.status = "failed";
    std::string ranks;
    for (const auto& [rank, n] : r.wrong_by_rank)
      ranks += fmt::format("{}{} on rank {}", ranks.empty() ? "" : ", ", n, rank);
    r.reason = fmt::format("{} wrong element(s): {}", r.wrong_total, ranks);
  }
}

// Bound, expected value and efficiency from the system profile (issue 3). A case the model
// does not cover says why; a run faster than its bound is flagged, never hidden.
void annotate_with_model(record::CaseRecord& r, const plan::Case& c, const Placement& placement,
                         const model::SystemProfile& system) {
  model::CaseGeometry g;
  g.collective = c.collective;
  g.algo = c.algo;
  g.dtype = c.dtype;
  g.bytes = r.bytes;
  g.placement = placement;
  g.scope = c.scope;
  const auto outcome = model::model_case(system, g);
  if (!outcome.estimate || !r.time_us) {
    r.extra["model_note"] = outcome.why_not.empty() ? std::string("not measured") : outcome.why_not;
    return;
  }
  const auto& e = *outcome.estimate;
  set_model(r, system, e);
  if (!e.algo_modelled.empty()) r.extra["model_algo"] = e.algo_modelled;
  note_bound_check(r, model::check_against_bound(e, r.time_us->p50));
}

// Irregular exchanges (MoE): the bound for the summary of the case's traffic matrix (model/traffic.hpp).
void annotate_with_traffic_model(record::CaseRecord& r, const model::TrafficSummary& traffic,
                                 const Placement& placement, const model::SystemProfile& system) {
  if (!r.time_us) {
    r.extra["model_note"] = std::string("not measured");
    return;
  }
  const auto t = model::estimate_from_summary(system, traffic, placement);
  const auto& e = t.estimate;
  set_model(r, system, e);
  r.extra["model_algo"] = e.algo_modelled;
  r.extra["model_note"] = e.note;
  note_bound_check(r, model::check_against_bound(e, r.time_us->p50));
}

void annotate_concurrent(record::CaseRecord& r, const std::vector<coll::ConcurrentPart>& parts,
                         const std::map<std::string, double>& side_us, const plan::Case& c,
                         const model::SystemProfile* system) {
  nlohmann::json j = concurrent_json(r, parts, side_us);
  if (system == nullptr || !r.time_us) {
    if (!r.time_us) r.extra["model_note"] = std::string("not measured");
  } else {
    model_concurrent(r, j, parts, c, *system);
  }
  r.extra["concurrent"] = j;
}

}  // namespace collbench::run
