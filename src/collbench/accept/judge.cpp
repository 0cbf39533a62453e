// Acceptance planning and judging: the cases each check runs, the rows read from their records,
// the policy values and the verdicts. Who is slow (the evidence) is in judge_evidence.cpp.
#include "collbench/accept/judge.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <stdexcept>

#include "collbench/accept/judge_detail.hpp"
#include "collbench/accept/metric.hpp"
#include "collbench/accept/verdict.hpp"
#include "collbench/core/error.hpp"
#include "collbench/core/pairing.hpp"
#include "collbench/core/units.hpp"
#include "collbench/model/estimate.hpp"

namespace collbench::accept {

using judge_detail::DomainNumbers;
using judge_detail::median;
using judge_detail::Repetition;
using judge_detail::Round;
using judge_detail::RowRecords;

std::string_view to_string(Verdict v) {
  switch (v) {
    case Verdict::pass:
      return "PASS";
    case Verdict::fail:
      return "FAIL";
    case Verdict::waived:
      return "WAIVED";
  }
  return "FAIL";
}

std::size_t AcceptReport::count(Verdict v) const {
  return static_cast<std::size_t>(
      std::count_if(rows.begin(), rows.end(), [v](const Row& r) { return r.verdict == v; }));
}

int AcceptReport::exit_code() const {
  return count(Verdict::fail) > 0 ? 1 : 0;
}

namespace {

std::string group_label(const Check& c) {
  if (c.ranks_per_domain) return fmt::format("ranks-per-domain-{}", *c.ranks_per_domain);
  if (c.domain_sizes) {
    std::string s = *c.domain_sizes;
    std::replace(s.begin(), s.end(), ',', '-');
    s.erase(std::remove(s.begin(), s.end(), ' '), s.end());
    return "domain-sizes-" + s;
  }
  return "default";
}

// The rounds a check runs: {0} for a single exchange; every round of the round robin (or the
// check's sample of them) for a pairwise check.
std::vector<int> rounds_for(const Check& c, const Placement& p) {
  if (!c.all_rounds) return {0};
  const int n = judge_detail::round_robin_size(c, p);
  if (round_robin_rounds(n) < 1) return {0};
  return sampled_rounds(n, c.sampled_rounds);
}

std::optional<DomainNumbers> numbers_for(const record::CaseRecord& r, int domain) {
  if (!r.time_us) return std::nullopt;
  if (domain >= 0) {
    const auto it = r.extra.find("per_domain");
    if (it != r.extra.end() && it->is_array()) {
      if (static_cast<std::size_t>(domain) >= it->size()) return std::nullopt;
      const auto& d = (*it)[static_cast<std::size_t>(domain)];
      return DomainNumbers{d.at("time_us").at("p50").get<double>(), d.at("algbw_gbps").get<double>(),
                           d.at("busbw_gbps").get<double>()};
    }
    if (domain > 0) return std::nullopt;  // one domain only: the record is domain 0
  }
  return DomainNumbers{r.time_us->p50, r.algbw_gbps, r.busbw_gbps};
}

// The interference ratio of a concurrent family's record (its `concurrent` object), or nullopt.
std::optional<double> interference_of(const record::CaseRecord& r) {
  const auto cc = r.extra.find("concurrent");
  if (cc == r.extra.end() || !cc->is_object()) return std::nullopt;
  const auto it = cc->find("interference");
  if (it == cc->end() || !it->is_number()) return std::nullopt;
  return it->get<double>();
}

std::string domain_label(int domain, int first, int count) {
  const std::string ranks =
      count == 1 ? fmt::format("rank {}", first) : fmt::format("ranks {}-{}", first, first + count - 1);
  if (domain < 0) return fmt::format("all ({})", ranks);
  return fmt::format("domain {} ({})", domain, ranks);
}

void set_model(Row& row, const Check& check, const record::CaseRecord& rec, int domain_size,
               const model::SystemProfile* system) {
  if (check.base.scope == Scope::global) {
    if (rec.model) {
      row.bound_busbw_gbps = rec.model->bound_busbw_gbps;
      row.expected_busbw_gbps = rec.model->expected_busbw_gbps;
      row.bound_time_us = rec.model->bound_time_us;
      row.expected_time_us = rec.model->expected_time_us;
    } else {
      const auto note = rec.extra.find("model_note");
      row.model_note = note != rec.extra.end() && note->is_string()
                           ? note->get<std::string>()
                           : std::string("no system profile: pass --system NAME or calibrate cpu-local");
    }
    return;
  }
  // Scope domain: this domain's own bound (domains may differ in size).
  if (system != nullptr) {
    model::CaseGeometry g;
    g.collective = rec.collective;
    g.algo = rec.algo_requested;
    g.dtype = check.base.dtype;
    g.bytes = rec.bytes;
    g.placement = placement_from_sizes(domain_size, {domain_size});
    g.scope = Scope::domain;
    const auto out = model::model_case(*system, g);
    if (out.estimate) {
      row.bound_busbw_gbps = out.estimate->bound_busbw_gbps;
      row.expected_busbw_gbps = out.estimate->expected_busbw_gbps;
      row.bound_time_us = out.estimate->bound_time_us;
      row.expected_time_us = out.estimate->expected_time_us;
    } else {
      row.model_note = out.why_not;
    }
    return;
  }
  row.model_note = "no system profile: pass --system NAME or calibrate cpu-local";
}

}  // namespace

std::vector<PlacementGroup> plan_acceptance(const AcceptanceProfile& profile, const PlacementResolver& resolve) {
  std::vector<PlacementGroup> groups;
  std::vector<std::vector<std::size_t>> members;
  for (std::size_t i = 0; i < profile.checks.size(); ++i) {
    const Check& c = profile.checks[i];
    const std::string label = group_label(c);
    auto it = std::find_if(groups.begin(), groups.end(), [&label](const auto& g) { return g.label == label; });
    if (it == groups.end()) {
      PlacementGroup g;
      g.label = label;
      g.ranks_per_domain = c.ranks_per_domain;
      g.domain_sizes = c.domain_sizes;
      g.placement = resolve(c.ranks_per_domain, c.domain_sizes);
      groups.push_back(std::move(g));
      members.emplace_back();
      it = groups.end() - 1;
    }
    members[static_cast<std::size_t>(it - groups.begin())].push_back(i);
  }
  for (std::size_t g = 0; g < groups.size(); ++g) {
    int max_reps = 0;
    for (const auto i : members[g]) max_reps = std::max(max_reps, profile.checks[i].repetitions);
    for (int rep = 0; rep < max_reps; ++rep) {
      for (const auto i : members[g]) {
        const Check& c = profile.checks[i];
        if (rep >= c.repetitions) continue;
        const std::vector<int> rounds = rounds_for(c, groups[g].placement);
        for (const auto bytes : c.sizes) {
          for (const int round : rounds) {
            PlannedCase pc;
            pc.check_index = i;
            pc.bytes = bytes;
            pc.repetition = rep;
            pc.spec = c.base;
            pc.spec.bytes = bytes;
            if (c.all_rounds) {
              pc.round = round;
              pc.spec.params["round"] = std::to_string(round);
            }
            groups[g].cases.push_back(std::move(pc));
          }
        }
      }
    }
  }
  return groups;
}

namespace {

// This check's records at `bytes`, by repetition, and the placement group that ran them.
std::pair<const PlacementGroup*, std::map<int, Repetition>> records_of(std::size_t ci, std::uint64_t bytes,
                                                                       const std::vector<GroupRecords>& groups) {
  const PlacementGroup* group = nullptr;
  std::map<int, Repetition> reps;
  for (const auto& g : groups) {
    for (std::size_t k = 0; k < g.group->cases.size(); ++k) {
      const auto& pc = g.group->cases[k];
      if (pc.check_index != ci || pc.bytes != bytes) continue;
      group = g.group;
      reps[pc.repetition].rounds.emplace_back(pc.round, &g.records[k]);
    }
  }
  return {group, std::move(reps)};
}

// The rows of a check: one per domain under scope domain, else one over all ranks (first rank, size).
std::vector<std::pair<int, int>> row_domains(const Check& check, const Placement& placement) {
  std::vector<std::pair<int, int>> domains;  // domain index = position
  if (check.base.scope == Scope::domain && placement.num_domains() > 0) {
    for (int d = 0; d < placement.num_domains(); ++d) {
      domains.emplace_back(placement.domain_offset(d), placement.domain_sizes[static_cast<std::size_t>(d)]);
    }
  } else {
    domains = {{0, placement.num_ranks()}};
  }
  return domains;
}

Row row_header(const Check& check, int domain, int first, int count, std::uint64_t bytes) {
  Row row;
  row.check = check.name;
  row.description = check.description;
  row.collective = check.base.collective;
  row.algo = check.base.algo;
  row.dtype = std::string(to_string(check.base.dtype));
  row.scope = std::string(to_string(check.base.scope));
  row.domain = domain;
  row.first_rank = first;
  row.num_ranks = count;
  row.domain_label = domain_label(domain, first, count);
  row.bytes = bytes;
  row.policy_text = fmt::format("{} of {}", to_string(check.policy), check.repetitions);
  return row;
}

// The algorithm the library ran, when the check requires the one it asked for.
void check_algo(const Check& check, const record::CaseRecord& rec, RowRecords& out) {
  if (!check.require_algo) return;
  if (!rec.algo_used) {
    out.failures.push_back(
        fmt::format("the {} backend did not report the algorithm it ran, so '{}' cannot "
                    "be confirmed",
                    rec.backend, check.base.algo));
  } else if (*rec.algo_used != check.base.algo) {
    out.failures.push_back(fmt::format("silent fallback: requested algorithm '{}', the library ran '{}'",
                                       check.base.algo, *rec.algo_used));
  }
}

// One repetition: its slowest usable round goes into the row's values; false when a round is
// waived, failed or untimed.
bool read_repetition(Row& row, const Check& check, int rep, const Repetition& repetition, const Placement& placement,
                     RowRecords& out) {
  std::optional<DomainNumbers> worst;
  Round worst_round{-1, nullptr};
  bool usable = true;
  for (const auto& [round, rec] : repetition.rounds) {
    out.all.push_back(*rec);
    if (rec->status == "ok" && rec->bytes > 0) row.bytes = rec->bytes;
    const std::string where = repetition.rounds.size() > 1 ? fmt::format(" (round {})", round) : "";
    if (rec->status == "waived") {
      out.waivers.push_back(rec->reason.value_or("waived") + where);
      usable = false;
      continue;
    }
    if (rec->status != "ok") {
      out.failures.push_back(fmt::format("repetition {}{}: {}", rep + 1, where, rec->reason.value_or(rec->status)));
      usable = false;
      continue;
    }
    check_algo(check, *rec, out);
    auto nums = numbers_for(*rec, row.domain);
    if (nums && check.all_rounds) {
      nums = judge_detail::pair_numbers(*nums, *rec, round, row.first_rank, row.num_ranks,
                                        check.base.params.at("pairing") == "rail", placement);
    }
    if (!nums) {
      out.failures.push_back(
          fmt::format("repetition {}{}: the record has no timing for {}", rep + 1, where, row.domain_label));
      usable = false;
      continue;
    }
    if (rec->time_us) row.timed_s += static_cast<double>(rec->iterations) * rec->time_us->mean * 1e-6;
    if (!worst || nums->time_us > worst->time_us) {
      worst = nums;
      worst_round = {round, rec};
    }
    if (const auto ratio = interference_of(*rec)) row.interference_values.push_back(*ratio);
  }
  if (!usable || !worst) return false;
  row.time_us.push_back(worst->time_us);
  row.algbw_gbps.push_back(worst->algbw_gbps);
  row.busbw_gbps.push_back(worst->busbw_gbps);
  out.slowest_rounds.emplace_back(worst->time_us, worst_round);
  if (out.model_record == nullptr) out.model_record = worst_round.second;
  return true;
}

// Duplicate messages (every repetition says the same) are reported once.
void unique(std::vector<std::string>& v) {
  std::vector<std::string> out;
  for (auto& s : v) {
    if (std::find(out.begin(), out.end(), s) == out.end()) out.push_back(s);
  }
  v = out;
}

RowRecords read_records(Row& row, const Check& check, const std::map<int, Repetition>& reps,
                        const Placement& placement) {
  RowRecords out;
  for (const auto& [rep, repetition] : reps) read_repetition(row, check, rep, repetition, placement, out);
  unique(out.failures);
  unique(out.waivers);
  return out;
}

// The policy values (best or median over repetitions) and the metric the row is judged on.
void set_policy_values(Row& row, const Check& check) {
  if (!row.time_us.empty()) {
    const bool best = check.policy == Policy::best;
    const auto pick_bw = [best](const std::vector<double>& v) {
      return best ? *std::max_element(v.begin(), v.end()) : median(v);
    };
    row.busbw = pick_bw(row.busbw_gbps);
    row.algbw = pick_bw(row.algbw_gbps);
    row.time = best ? *std::min_element(row.time_us.begin(), row.time_us.end()) : median(row.time_us);
  }
  if (!row.interference_values.empty()) {
    const auto& v = row.interference_values;
    row.interference = check.policy == Policy::best ? *std::min_element(v.begin(), v.end()) : median(v);
  }
}

void set_primary_metric(Row& row, const Threshold& t) {
  row.primary_metric = (t.fraction_of_bound || t.fraction_of_expected || t.min_busbw_gbps) ? "busbw_gbps"
                       : t.min_algbw_gbps                                                  ? "algbw_gbps"
                       : (t.max_interference && !t.max_time_us)                            ? "interference"
                                                                                           : "time_us";
  if (row.primary_metric == "busbw_gbps" && row.busbw && *row.busbw == 0.0 && row.time) {
    row.primary_metric = "time_us";  // one-rank communicators have no bus bandwidth
  }
}

}  // namespace

AcceptReport judge(const AcceptanceProfile& profile, const std::vector<GroupRecords>& groups,
                   const model::SystemProfile* system, const std::vector<std::string>& hosts) {
  AcceptReport report;
  report.profile = profile.name;
  report.source = profile.source;
  report.description = profile.description;
  for (const auto& g : groups) {
    if (g.group == nullptr || g.records.size() != g.group->cases.size()) {
      throw std::logic_error("accept::judge: records do not match the planned cases");
    }
    report.num_ranks = std::max(report.num_ranks, g.group->placement.num_ranks());
  }
  const model::PublishedPoints published =
      system != nullptr ? model::load_published_points(system->name) : model::PublishedPoints{};
  for (std::size_t ci = 0; ci < profile.checks.size(); ++ci) {
    const Check& check = profile.checks[ci];
    for (const auto bytes : check.sizes) {
      const auto [group, reps] = records_of(ci, bytes, groups);
      if (group == nullptr || reps.empty()) continue;
      const auto domains = row_domains(check, group->placement);
      for (std::size_t d = 0; d < domains.size(); ++d) {
        const auto [first, count] = domains[d];
        const int domain = check.base.scope == Scope::domain ? static_cast<int>(d) : -1;
        Row row = row_header(check, domain, first, count, bytes);
        const RowRecords records = read_records(row, check, reps, group->placement);
        set_policy_values(row, check);
        if (records.model_record != nullptr) set_model(row, check, *records.model_record, count, system);
        set_primary_metric(row, check.threshold);
        // A simulation is judged against the platform it simulates: no checked range applies.
        if (records.model_record == nullptr || !records.model_record->simulated) {
          set_reference(row, check, group->placement, system, published);
        }
        judge_detail::add_evidence(row, check, records, reps, group->placement, hosts);
        set_verdict(row, check, records.failures, records.waivers);
        report.rows.push_back(std::move(row));
      }
    }
  }
  return report;
}

}  // namespace collbench::accept
