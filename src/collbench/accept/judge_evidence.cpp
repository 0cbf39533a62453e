// Acceptance evidence: the slowest pair of a pairwise round, the pairwise matrix over every
// round, the rank common to the slowest pairs and the stragglers of a row's records (who is slow,
// named with its host). The planning and the verdicts are in judge.cpp.
#include <fmt/format.h>

#include <algorithm>
#include <map>

#include "collbench/accept/judge_detail.hpp"
#include "collbench/accept/metric.hpp"
#include "collbench/core/error.hpp"
#include "collbench/core/pairing.hpp"
#include "collbench/locate/locate.hpp"

namespace collbench::accept::judge_detail {

// How many parties a pairwise check's round robin pairs: domains (rail pairs), the largest
// domain's ranks (scope domain) or every rank.
int round_robin_size(const Check& c, const Placement& p) {
  if (c.base.params.at("pairing") == "rail") return p.num_domains();
  if (c.base.scope == Scope::domain) return p.num_domains() > 0 ? p.largest_domain() : p.num_ranks();
  return p.num_ranks();
}

namespace {

// The slowest pair of one round of a pairwise check (round robin inside [first, first + count),
// or rail pairs across domains), from per-rank medians, and the round's median pair time.
struct WorstPair {
  std::pair<int, int> ranks{-1, -1};
  double worst_us = 0.0;
  double median_us = 0.0;
};

std::optional<WorstPair> worst_pair_of(const record::CaseRecord& r, int round, int first, int count, bool rail,
                                       const Placement& placement) {
  if (!r.per_rank) return std::nullopt;
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
  WorstPair w;
  w.worst_us = -1.0;
  std::vector<double> times;
  for (const auto& [a, b] : pairs) {
    if (static_cast<std::size_t>(std::max(a, b)) >= t.size()) continue;
    const double pt = locate::pair_time_us(t[static_cast<std::size_t>(a)], t[static_cast<std::size_t>(b)]);
    times.push_back(pt);
    if (pt > w.worst_us) {
      w.worst_us = pt;
      w.ranks = {a, b};
    }
  }
  if (w.ranks.first < 0) return std::nullopt;
  w.median_us = median(times);
  return w;
}

}  // namespace

// A pairwise round's numbers from its slowest pair's time (locate::pair_time_us: the later-arriving
// partner's), not from the record's time: the record's time is the maximum over all ranks, which
// adds the barrier's exit skew to every pair (at 144 simulated ranks it failed a healthy rack).
// Bandwidths scale with it (same bytes). The record's numbers when the round has no pair times.
DomainNumbers pair_numbers(const DomainNumbers& n, const record::CaseRecord& r, int round, int first, int count,
                           bool rail, const Placement& placement) {
  const auto w = worst_pair_of(r, round, first, count, rail, placement);
  if (!w || w->worst_us <= 0.0) return n;
  const double scale = n.time_us / w->worst_us;
  return {w->worst_us, n.algbw_gbps * scale, n.busbw_gbps * scale};
}

namespace {

std::string slowest_pair(const record::CaseRecord& r, int round, int first, int count, bool rail,
                         const Placement& placement) {
  const auto w = worst_pair_of(r, round, first, count, rail, placement);
  if (!w) return {};
  return fmt::format("slowest pair {}-{} in round {}: {} per exchange (median pair of the round {})", w->ranks.first,
                     w->ranks.second, round, format_us(w->worst_us), format_us(w->median_us));
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
  std::map<int, locate::PairwiseRankSuspect> rank_example;
  std::map<std::pair<int, int>, locate::LinkSuspect> link_example;
  double reference = 0.0;
  int analysed = 0;
  for (const auto& [rep, repetition] : reps) {
    std::vector<locate::PairwiseRound> rounds;
    bool usable = true;
    for (const auto& [round, rec] : repetition.rounds) {
      if (rec->status != "ok" || !rec->per_rank) usable = false;
      rounds.push_back({round, *rec});
    }
    if (!usable || rounds.empty()) continue;
    locate::PairwiseReport p;
    try {
      p = locate::analyse_pairwise(locate::build_pairwise_matrix(rounds));
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
    out.push_back(
        fmt::format("pairwise matrix: {} is slow on {} of its {} links (< 50% of the reference link, "
                    "{:.3g} GB/s) in {} of {} repetitions",
                    rank_with_host(rank, hosts), s.slow_links, s.links, reference, votes, analysed));
  }
  for (const auto& [link, votes] : link_votes) {
    if (2 * votes <= analysed) continue;
    const auto& l = link_example.at(link);
    out.push_back(
        fmt::format("pairwise matrix: link {} - {} is slow, {:.3g} GB/s ({:.0f}% of the reference link) "
                    "in {} of {} repetitions",
                    rank_with_host(l.a, hosts), rank_with_host(l.b, hosts), l.gbps, 100.0 * l.fraction_of_reference,
                    votes, analysed));
  }
  return out;
}

// One rank in the slowest pair of most rounds (two or more, more than half), counting a round only
// when its slowest pair took at least 1.5x the round's median pair: that rank's link is slow, not
// one pair - a GPU whose NVLink port or NIC is degraded slows every pair it is in. For the rows
// the pairwise matrix analysis does not cover: per domain, and rail pairs.
std::optional<std::string> common_rank_evidence(const std::map<int, Repetition>& reps, int first, int count, bool rail,
                                                const Placement& placement, const std::vector<std::string>& hosts) {
  std::map<int, int> in_worst;
  int rounds = 0;
  for (const auto& [rep, repetition] : reps) {
    for (const auto& [round, rec] : repetition.rounds) {
      if (rec->status != "ok") continue;
      const auto w = worst_pair_of(*rec, round, first, count, rail, placement);
      if (!w) continue;
      ++rounds;
      if (w->worst_us < 1.5 * w->median_us) continue;  // no pair stands out in this round
      ++in_worst[w->ranks.first];
      ++in_worst[w->ranks.second];
    }
  }
  const auto top = std::max_element(in_worst.begin(), in_worst.end(),
                                    [](const auto& a, const auto& b) { return a.second < b.second; });
  if (top == in_worst.end() || top->second < 2 || 2 * top->second <= rounds) return std::nullopt;
  return fmt::format("{} is in the slowest pair of {} of {} rounds: that rank's link is slow, not one pair",
                     rank_with_host(top->first, hosts), top->second, rounds);
}

}  // namespace

// Evidence: who is slow (skew over this row's records), the slowest pair of a round, the rank
// common to the slowest pairs.
void add_evidence(Row& row, const Check& check, const RowRecords& records, const std::map<int, Repetition>& reps,
                  const Placement& placement, const std::vector<std::string>& hosts) {
  const int first = row.first_rank;
  const int count = row.num_ranks;
  if (!records.all.empty()) {
    const auto skew = locate::analyse_skew(records.all);
    for (const auto& s : skew.stragglers) {
      if (s.rank >= first && s.rank < first + count)
        row.evidence.push_back(fmt::format("{} {}", rank_with_host(s.rank, hosts), s.evidence));
    }
  }
  if (!check.all_rounds || records.slowest_rounds.empty()) return;
  if (check.sampled_rounds > 0) {
    const int total = round_robin_rounds(round_robin_size(check, placement));
    const int measured = std::min(check.sampled_rounds, total);
    if (measured < total) {
      row.evidence.push_back(
          fmt::format("{} of the {} rounds measured (rounds: {}, spread over the round robin); "
                      "a link only in the others was not exchanged on",
                      measured, total, check.sampled_rounds));
    }
  }
  const auto worst = std::max_element(records.slowest_rounds.begin(), records.slowest_rounds.end(),
                                      [](const auto& a, const auto& b) { return a.first < b.first; });
  const bool rail = check.base.params.at("pairing") == "rail";
  const std::string pair = slowest_pair(*worst->second.second, worst->second.first, first, count, rail, placement);
  if (!pair.empty()) row.evidence.push_back(pair);
  if (!rail && row.domain < 0) {  // all ranks: the matrix over every round names ranks and links
    for (auto& e : pairwise_matrix_evidence(reps, hosts)) row.evidence.push_back(std::move(e));
  } else if (auto common = common_rank_evidence(reps, first, count, rail, placement, hosts)) {
    row.evidence.push_back(std::move(*common));
  }
}

}  // namespace collbench::accept::judge_detail
