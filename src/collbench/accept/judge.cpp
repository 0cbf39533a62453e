// Acceptance planning and judging.
#include "collbench/accept/judge.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <stdexcept>

#include "collbench/accept/metric.hpp"
#include "collbench/core/error.hpp"
#include "collbench/core/pairing.hpp"
#include "collbench/core/units.hpp"
#include "collbench/model/estimate.hpp"
#include "collbench/report/locate.hpp"
#include "collbench/stats/summary.hpp"

namespace collbench::accept {

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

int rounds_for(const Check& c, const Placement& p) {
  if (!c.all_rounds) return 1;
  const auto pairing = c.base.params.at("pairing");
  int n = p.num_ranks();
  if (pairing == "rail")
    n = p.num_domains();
  else if (c.base.scope == Scope::domain)
    n = p.num_domains() > 0 ? p.largest_domain() : p.num_ranks();
  return std::max(round_robin_rounds(n), 1);
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return stats::percentile_sorted(v, 0.5);
}

// The record's view of one domain (or of all ranks): p50 time, algbw, busbw.
struct DomainNumbers {
  double time_us = 0.0, algbw_gbps = 0.0, busbw_gbps = 0.0;
};

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

// Per repetition, the rounds' records (one record unless the check runs every round).
struct Repetition {
  std::vector<std::pair<int, const record::CaseRecord*>> rounds;
};

// The slowest pair of a round-robin round inside [first, first + count), from per-rank medians.
std::string slowest_pair(const record::CaseRecord& r, int round, int first, int count, bool rail,
                         const Placement& placement) {
  if (!r.per_rank) return {};
  std::vector<double> t = r.per_rank->mean_us;
  if (const auto it = r.extra.find("per_rank_p50_us"); it != r.extra.end() && it->is_array()) {
    t = it->get<std::vector<double>>();
  }
  std::vector<std::pair<int, int>> pairs;
  if (rail) {
    for (int a = 0; a < placement.num_ranks(); ++a) {
      const int da = placement.domain_of(a);
      const int db = round_robin_partner(da, round, placement.num_domains());
      if (db == da) continue;
      const int b = placement.domain_offset(db) + (a - placement.domain_offset(da));
      if (b > a && b < placement.num_ranks() && placement.domain_of(b) == db) pairs.emplace_back(a, b);
    }
  } else {
    for (const auto& [a, b] : round_robin_pairs(round, count)) pairs.emplace_back(first + a, first + b);
  }
  double worst = -1.0;
  std::pair<int, int> worst_pair{-1, -1};
  std::vector<double> times;
  for (const auto& [a, b] : pairs) {
    if (static_cast<std::size_t>(std::max(a, b)) >= t.size()) continue;
    const double pt = std::max(t[static_cast<std::size_t>(a)], t[static_cast<std::size_t>(b)]);
    times.push_back(pt);
    if (pt > worst) {
      worst = pt;
      worst_pair = {a, b};
    }
  }
  if (worst_pair.first < 0) return {};
  return fmt::format("slowest pair {}-{} in round {}: {} per exchange (median pair of the round {})", worst_pair.first,
                     worst_pair.second, round, format_us(worst), format_us(median(times)));
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

// Evaluates the thresholds on the row's policy values.
void evaluate_limits(Row& row, const Threshold& t) {
  const auto add = [&row](LimitResult l) { row.limits.push_back(std::move(l)); };
  const auto fraction = [&](const char* kind, double f, const std::optional<double>& model_busbw,
                            const std::optional<double>& model_time, const char* what) {
    LimitResult l;
    l.kind = kind;
    l.required = f;
    if (!model_time || !(*model_time > 0.0)) {
      l.metric = "busbw_gbps";
      l.measured = row.busbw;
      l.note = row.model_note.empty() ? fmt::format("no {} for this case", what) : row.model_note;
      add(l);
      return;
    }
    if (model_busbw && *model_busbw > 0.0) {
      l.metric = "busbw_gbps";
      l.limit = f * *model_busbw;
      l.measured = row.busbw;
      l.judged = row.busbw.has_value();
      l.passed = l.judged && *row.busbw >= *l.limit;
    } else {  // a one-rank communicator has busbw 0: compare times (time <= model time / f)
      l.metric = "time_us";
      l.limit = *model_time / f;
      l.measured = row.time;
      l.judged = row.time.has_value();
      l.passed = l.judged && *row.time <= *l.limit;
    }
    add(l);
  };
  if (t.fraction_of_bound)
    fraction("fraction_of_bound", *t.fraction_of_bound, row.bound_busbw_gbps, row.bound_time_us, "bound");
  if (t.fraction_of_expected) {
    fraction("fraction_of_expected", *t.fraction_of_expected, row.expected_busbw_gbps, row.expected_time_us,
             "expected value");
  }
  const auto absolute = [&](const char* kind, double v, const char* metric, const std::optional<double>& measured,
                            bool at_least) {
    LimitResult l;
    l.kind = kind;
    l.required = v;
    l.limit = v;
    l.metric = metric;
    l.measured = measured;
    l.judged = measured.has_value();
    l.passed = l.judged && (at_least ? *measured >= v : *measured <= v);
    if (!l.judged) l.note = "not measured";
    add(l);
  };
  if (t.min_busbw_gbps) absolute("min_busbw_gbps", *t.min_busbw_gbps, "busbw_gbps", row.busbw, true);
  if (t.min_algbw_gbps) absolute("min_algbw_gbps", *t.min_algbw_gbps, "algbw_gbps", row.algbw, true);
  if (t.max_time_us) absolute("max_time_us", *t.max_time_us, "time_us", row.time, false);
  if (t.max_interference) {
    absolute("max_interference", *t.max_interference, "interference", row.interference, false);
    if (!row.interference) row.limits.back().note = "the records carry no interference ratio";
  }
}

std::string limit_text(const LimitResult& l, const Row& row) {
  if (!l.limit || (!l.judged && !l.note.empty())) {
    return fmt::format("{} {:g}: not judged ({})", l.kind, l.required, l.note);
  }
  std::string what;
  if (l.kind == "fraction_of_bound") {
    what = fmt::format(
        "{:g} x bound {}", l.required,
        l.metric == "time_us" ? format_us(row.bound_time_us.value_or(0)) : format_gbps(row.bound_busbw_gbps.value_or(0)));
  } else if (l.kind == "fraction_of_expected") {
    what = fmt::format("{:g} x expected {}", l.required,
                       l.metric == "time_us" ? format_us(row.expected_time_us.value_or(0))
                                             : format_gbps(row.expected_busbw_gbps.value_or(0)));
  } else {
    what = "floor";
    if (l.kind == "max_time_us" || l.kind == "max_interference") what = "ceiling";
  }
  const bool at_most = lower_is_better(l.metric);
  const char* cmp = l.passed ? (at_most ? "<=" : ">=") : (at_most ? ">" : "<");
  const std::string measured = l.measured ? format_metric(l.metric, *l.measured) : std::string("-");
  return fmt::format("{} {} {} {} ({})", metric_word(l.metric), measured, cmp, format_metric(l.metric, *l.limit), what);
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
        const int rounds = rounds_for(c, groups[g].placement);
        for (const auto bytes : c.sizes) {
          for (int round = 0; round < rounds; ++round) {
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

// "rank 2 (host h2)" where the host is known.
std::string rank_with_host(int rank, const std::vector<std::string>& hosts) {
  if (rank >= 0 && static_cast<std::size_t>(rank) < hosts.size() && !hosts[static_cast<std::size_t>(rank)].empty()) {
    return fmt::format("rank {} (host {})", rank, hosts[static_cast<std::size_t>(rank)]);
  }
  return fmt::format("rank {}", rank);
}

// The pairwise matrix of every repetition of a round-robin check over all ranks (locate's
// analysis, docs/locate.md): a rank slow on at least half of its links, or a slow link no such
// rank explains, in more than half of the repetitions. Empty when nothing stands out or the
// rounds do not make a matrix (fewer than 3 ranks, a round missing).
std::vector<std::string> pairwise_matrix_evidence(const std::map<int, Repetition>& reps,
                                                  const std::vector<std::string>& hosts) {
  std::map<int, int> rank_votes;
  std::map<std::pair<int, int>, int> link_votes;
  std::map<int, report::PairwiseRankSuspect> rank_example;
  std::map<std::pair<int, int>, report::LinkSuspect> link_example;
  double reference = 0.0;
  int analysed = 0;
  for (const auto& [rep, repetition] : reps) {
    std::vector<report::PairwiseRound> rounds;
    bool usable = true;
    for (const auto& [round, rec] : repetition.rounds) {
      if (rec->status != "ok" || !rec->per_rank) usable = false;
      rounds.push_back({round, *rec});
    }
    if (!usable || rounds.empty()) continue;
    report::PairwiseReport p;
    try {
      p = report::analyse_pairwise(report::build_pairwise_matrix(rounds));
    } catch (const Error&) {
      continue;
    }
    if (p.links_measured < 3) continue;
    ++analysed;
    reference = p.reference_gbps;
    for (const auto& s : p.suspect_ranks) {
      ++rank_votes[s.rank];
      rank_example[s.rank] = s;
    }
    for (const auto& l : p.suspect_links) {
      ++link_votes[{l.a, l.b}];
      link_example[{l.a, l.b}] = l;
    }
  }
  std::vector<std::string> out;
  for (const auto& [rank, votes] : rank_votes) {
    if (2 * votes <= analysed) continue;
    const auto& s = rank_example.at(rank);
    out.push_back(fmt::format("pairwise matrix: {} is slow on {} of its {} links (< 50% of the reference link, "
                              "{:.3g} GB/s) in {} of {} repetitions",
                              rank_with_host(rank, hosts), s.slow_links, s.links, reference, votes, analysed));
  }
  for (const auto& [link, votes] : link_votes) {
    if (2 * votes <= analysed) continue;
    const auto& l = link_example.at(link);
    out.push_back(fmt::format("pairwise matrix: link {} - {} is slow, {:.3g} GB/s ({:.0f}% of the reference link) "
                              "in {} of {} repetitions",
                              rank_with_host(l.a, hosts), rank_with_host(l.b, hosts), l.gbps,
                              100.0 * l.fraction_of_reference, votes, analysed));
  }
  return out;
}

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

  for (std::size_t ci = 0; ci < profile.checks.size(); ++ci) {
    const Check& check = profile.checks[ci];
    for (const auto bytes : check.sizes) {
      // Collect this check's records by repetition.
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
      if (group == nullptr || reps.empty()) continue;
      const Placement& placement = group->placement;
      std::vector<std::pair<int, int>> domains;  // first rank, size; domain index = position
      const bool per_domain = check.base.scope == Scope::domain;
      if (per_domain && placement.num_domains() > 0) {
        for (int d = 0; d < placement.num_domains(); ++d) {
          domains.emplace_back(placement.domain_offset(d), placement.domain_sizes[static_cast<std::size_t>(d)]);
        }
      } else {
        domains = {{0, placement.num_ranks()}};
      }

      for (std::size_t d = 0; d < domains.size(); ++d) {
        const auto [first, count] = domains[d];
        const int domain = per_domain ? static_cast<int>(d) : -1;
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

        std::vector<std::string> failures, waivers;
        std::vector<record::CaseRecord> all_records;
        const record::CaseRecord* model_record = nullptr;
        std::vector<std::pair<double, std::pair<int, const record::CaseRecord*>>> slowest_rounds;
        for (const auto& [rep, repetition] : reps) {
          std::optional<DomainNumbers> worst;
          std::pair<int, const record::CaseRecord*> worst_round{-1, nullptr};
          bool usable = true;
          for (const auto& [round, rec] : repetition.rounds) {
            all_records.push_back(*rec);
            if (rec->status == "ok" && rec->bytes > 0) row.bytes = rec->bytes;
            const std::string where = repetition.rounds.size() > 1 ? fmt::format(" (round {})", round) : "";
            if (rec->status == "waived") {
              waivers.push_back(rec->reason.value_or("waived") + where);
              usable = false;
              continue;
            }
            if (rec->status != "ok") {
              failures.push_back(fmt::format("repetition {}{}: {}", rep + 1, where, rec->reason.value_or(rec->status)));
              usable = false;
              continue;
            }
            if (check.require_algo) {
              if (!rec->algo_used) {
                failures.push_back(
                    fmt::format("the {} backend did not report the algorithm it ran, so '{}' cannot "
                                "be confirmed",
                                rec->backend, check.base.algo));
              } else if (*rec->algo_used != check.base.algo) {
                failures.push_back(fmt::format("silent fallback: requested algorithm '{}', the library ran '{}'",
                                               check.base.algo, *rec->algo_used));
              }
            }
            const auto nums = numbers_for(*rec, domain);
            if (!nums) {
              failures.push_back(
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
          if (usable && worst) {
            row.time_us.push_back(worst->time_us);
            row.algbw_gbps.push_back(worst->algbw_gbps);
            row.busbw_gbps.push_back(worst->busbw_gbps);
            slowest_rounds.emplace_back(worst->time_us, worst_round);
            if (model_record == nullptr) model_record = worst_round.second;
          }
        }
        // Duplicate messages (every repetition says the same) are reported once.
        const auto unique = [](std::vector<std::string>& v) {
          std::vector<std::string> out;
          for (auto& s : v) {
            if (std::find(out.begin(), out.end(), s) == out.end()) out.push_back(s);
          }
          v = out;
        };
        unique(failures);
        unique(waivers);

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
        if (model_record != nullptr) set_model(row, check, *model_record, count, system);

        const Threshold& t = check.threshold;
        row.primary_metric = (t.fraction_of_bound || t.fraction_of_expected || t.min_busbw_gbps) ? "busbw_gbps"
                             : t.min_algbw_gbps                                                  ? "algbw_gbps"
                             : (t.max_interference && !t.max_time_us)                            ? "interference"
                                                                                                 : "time_us";
        if (row.primary_metric == "busbw_gbps" && row.busbw && *row.busbw == 0.0 && row.time) {
          row.primary_metric = "time_us";  // one-rank communicators have no bus bandwidth
        }

        // Evidence: who is slow (skew over this row's records), the slowest pair of a round.
        if (!all_records.empty()) {
          const auto skew = report::analyse_skew(all_records);
          for (const auto& s : skew.stragglers) {
            if (s.rank >= first && s.rank < first + count)
              row.evidence.push_back(fmt::format("{} {}", rank_with_host(s.rank, hosts), s.evidence));
          }
        }
        if (check.all_rounds && !slowest_rounds.empty()) {
          const auto worst = std::max_element(slowest_rounds.begin(), slowest_rounds.end(),
                                              [](const auto& a, const auto& b) { return a.first < b.first; });
          const bool rail = check.base.params.at("pairing") == "rail";
          const std::string pair =
              slowest_pair(*worst->second.second, worst->second.first, first, count, rail, placement);
          if (!pair.empty()) row.evidence.push_back(pair);
          if (!rail && domain < 0) {
            for (auto& e : pairwise_matrix_evidence(reps, hosts)) row.evidence.push_back(std::move(e));
          }
        }

        if (!waivers.empty()) {
          if (check.require_algo) {
            row.verdict = Verdict::fail;
            row.reason =
                fmt::format("waived ({}), but the check requires algorithm '{}'", waivers.front(), check.base.algo);
          } else {
            row.verdict = Verdict::waived;
            row.reason = waivers.front();
          }
        } else if (!failures.empty()) {
          row.verdict = Verdict::fail;
          row.reason = failures.front();
          for (std::size_t i = 1; i < failures.size(); ++i) row.reason += "; " + failures[i];
        } else {
          evaluate_limits(row, t);
          std::vector<std::string> failed, passed, unjudged;
          for (const auto& l : row.limits) {
            if (!l.judged)
              unjudged.push_back(limit_text(l, row));
            else if (!l.passed)
              failed.push_back(limit_text(l, row));
            else
              passed.push_back(limit_text(l, row));
          }
          if (!failed.empty()) {
            row.verdict = Verdict::fail;
            row.reason = failed.front();
            for (std::size_t i = 1; i < failed.size(); ++i) row.reason += "; " + failed[i];
          } else if (passed.empty()) {
            row.verdict = Verdict::fail;
            row.reason = "cannot judge: " + (unjudged.empty() ? std::string("no threshold") : unjudged.front());
            if (!t.has_absolute()) {
              row.reason +=
                  "; give the check an absolute floor (min_busbw_gbps, min_algbw_gbps or max_time_us) to "
                  "judge it without a model";
            }
          } else {
            row.verdict = Verdict::pass;
            row.reason = passed.front();
            for (std::size_t i = 1; i < passed.size(); ++i) row.reason += "; " + passed[i];
          }
          if (!unjudged.empty() && !passed.empty()) {
            for (const auto& u : unjudged) row.reason += "; " + u;
          }
          row.reason = fmt::format("{} ({})", row.reason, row.policy_text);
        }
        if (row.verdict == Verdict::fail && !row.evidence.empty()) {
          for (const auto& e : row.evidence) row.reason += "; " + e;
        }
        report.rows.push_back(std::move(row));
      }
    }
  }
  return report;
}

}  // namespace collbench::accept
