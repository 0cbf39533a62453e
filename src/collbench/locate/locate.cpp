// Locate analysis: skew, pairwise matrix, bisection decisions (the merged report: suspects.cpp).
#include "collbench/locate/locate.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>

#include "collbench/core/collective_facts.hpp"
#include "collbench/core/error.hpp"
#include "collbench/core/pairing.hpp"
#include "collbench/core/units.hpp"
#include "collbench/locate/locate_detail.hpp"
#include "collbench/model/estimate.hpp"
#include "collbench/stats/summary.hpp"

namespace collbench::locate {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

double median_of(std::vector<double> v) {
  if (v.empty()) return kNaN;
  std::sort(v.begin(), v.end());
  return stats::percentile_sorted(v, 0.5);
}

}  // namespace

std::string locate_duration_text(double us) {
  if (!std::isfinite(us)) return "-";
  if (std::fabs(us) >= 1000.0) return fmt::format("{:.3g} ms", us / 1000.0);
  return fmt::format("{:.3g} us", us);
}

namespace {

std::string rank_range(int first, int count) {
  if (count == 1) return fmt::format("rank {}", first);
  return fmt::format("ranks {}-{}", first, first + count - 1);
}

std::string case_label(const record::CaseRecord& r) {
  return fmt::format("{} {} {}", r.collective, format_bytes(r.bytes), r.dtype);
}

// A per-domain statistic (p50, mean) of a scope-domain record, when the runner stored it.
std::optional<double> domain_time(const record::CaseRecord& r, std::size_t d, const char* stat) {
  const auto it = r.extra.find("per_domain");
  if (it == r.extra.end() || !it->is_array() || d >= it->size()) return std::nullopt;
  const auto& dom = (*it)[d];
  if (!dom.contains("time_us") || !dom["time_us"].contains(stat)) return std::nullopt;
  return dom["time_us"][stat].get<double>();
}

// Per rank over the cases: how often it was compared and late, its leads, and the first late case's evidence.
struct SkewTally {
  int cases = 0, leading = 0;
  std::vector<double> leads_us, lead_fractions;
  std::string first_evidence;
};

// A record the skew method can read: ok, timed, with the waits of two ranks or more.
bool skew_usable(const record::CaseRecord& r) {
  return r.status == "ok" && r.per_rank && r.time_us && r.per_rank->wait_us.size() >= 2;
}

// The communicators compared (first rank, size): each domain under scope domain, else all ranks.
std::vector<std::pair<int, int>> skew_groups(const record::CaseRecord& r) {
  std::vector<std::pair<int, int>> groups;
  if (r.scope == "domain" && r.domain_sizes.size() > 1) {
    int first = 0;
    for (const int size : r.domain_sizes) {
      groups.emplace_back(first, size);
      first += size;
    }
  } else {
    groups.emplace_back(0, static_cast<int>(r.per_rank->wait_us.size()));
  }
  return groups;
}

// The case of communicator `g` of `n_groups` (ranks [first, first + size)): its times and waits, no judgement yet.
CaseSkew skew_case(const record::CaseRecord& r, std::size_t g, std::size_t n_groups, int first, int size) {
  const auto& waits = r.per_rank->wait_us;
  CaseSkew cs;
  cs.case_key = r.case_key;
  cs.label = case_label(r) + (n_groups > 1 ? fmt::format(" (domain {})", g) : "");
  cs.first_rank = first;
  cs.p50_us = n_groups > 1 ? domain_time(r, g, "p50").value_or(r.time_us->p50) : r.time_us->p50;
  cs.mean_us = n_groups > 1 ? domain_time(r, g, "mean").value_or(r.time_us->mean) : r.time_us->mean;
  cs.p99_us = r.time_us->p99;
  cs.wait_us.assign(waits.begin() + first, waits.begin() + first + size);
  return cs;
}

// Rank `i` of the case: its lead over the others' median wait; late when the lead passes both thresholds.
void judge_rank(CaseSkew& cs, int i, const SkewOptions& options, SkewTally& t) {
  std::vector<double> others;
  for (int j = 0; j < static_cast<int>(cs.wait_us.size()); ++j) {
    if (j != i) others.push_back(cs.wait_us[static_cast<std::size_t>(j)]);
  }
  const double lead = median_of(others) - cs.wait_us[static_cast<std::size_t>(i)];
  cs.lead_us.push_back(lead);
  ++t.cases;
  // Waits are means over the iterations, so the lead is compared with the mean time.
  const auto [lo, hi] = std::minmax_element(others.begin(), others.end());
  const bool late = cs.mean_us > 0 && lead >= options.min_lead_fraction * cs.mean_us &&
                    lead >= options.min_lead_over_spread * (*hi - *lo);  // lead over the others' spread
  if (!late) return;
  cs.leading.push_back(cs.first_rank + i);
  ++t.leading;
  t.leads_us.push_back(lead);
  t.lead_fractions.push_back(lead / cs.mean_us);
  if (t.first_evidence.empty()) {
    t.first_evidence = fmt::format(
        "in {} it waited {} inside the collective while the others waited {} (median): it arrived {} late, "
        "{:.0f}% of the mean iteration time {}",
        cs.label, locate_duration_text(cs.wait_us[static_cast<std::size_t>(i)]),
        locate_duration_text(median_of(others)), locate_duration_text(lead), 100.0 * lead / cs.mean_us,
        locate_duration_text(cs.mean_us));
  }
}

// The observation on a case whose tail is slow with no rank late: every rank slowed at once.
std::string spike_text(const CaseSkew& cs) {
  const auto [lo, hi] = std::minmax_element(cs.wait_us.begin(), cs.wait_us.end());
  return fmt::format(
      "system-wide spike in {}: p99 {} is {:.1f}x the p50 {}, but no rank arrives late (per-rank waits {} to "
      "{}): every rank slowed at once (noise, another job, the fabric), not one straggler",
      cs.label, locate_duration_text(cs.p99_us), cs.p99_us / cs.p50_us, locate_duration_text(cs.p50_us),
      locate_duration_text(*lo), locate_duration_text(*hi));
}

// One analysed case: every rank judged (tallied), then the spike test (noted in `observations`).
CaseSkew analyse_case(CaseSkew cs, const SkewOptions& options, std::map<int, SkewTally>& tally,
                      std::vector<std::string>& observations) {
  for (int i = 0; i < static_cast<int>(cs.wait_us.size()); ++i) judge_rank(cs, i, options, tally[cs.first_rank + i]);
  cs.spike = cs.leading.empty() && cs.p50_us > 0 && cs.p99_us / cs.p50_us >= options.spike_ratio;
  if (cs.spike) observations.push_back(spike_text(cs));
  return cs;
}

// A rank late in more than the consistency share of its cases: a straggler on its own.
RankSuspect straggler(int rank, const SkewTally& t) {
  const double lead_us = median_of(t.leads_us), lead_fraction = median_of(t.lead_fractions);
  return {rank,
          t.leading,
          t.cases,
          lead_us,
          lead_fraction,
          fmt::format("slow on its own: arrived late in {} of {} cases (median lead {}, {:.0f}% of the case time); {}",
                      t.leading, t.cases, locate_duration_text(lead_us), 100.0 * lead_fraction, t.first_evidence)};
}

// The observation when no rank is a straggler.
std::string no_straggler_text(const SkewReport& out, const SkewOptions& options) {
  int leading_cases = 0;
  for (const auto& c : out.cases) leading_cases += c.leading.empty() ? 0 : 1;
  return fmt::format(
      "no straggler: no rank arrived late in more than {:.0f}% of the {} case(s) analysed ({} case(s) with a late "
      "rank at all)",
      100.0 * options.min_consistency, out.cases.size(), leading_cases);
}

}  // namespace

// ---- skew ----------------------------------------------------------------------------------

SkewReport analyse_skew(const std::vector<record::CaseRecord>& records, const SkewOptions& options) {
  SkewReport out;
  std::map<int, SkewTally> tally;
  for (const auto& r : records) {
    if (!skew_usable(r)) {
      ++out.cases_skipped;
      continue;
    }
    const std::vector<std::pair<int, int>> groups = skew_groups(r);
    bool analysed = false;
    for (std::size_t g = 0; g < groups.size(); ++g) {
      const auto [first, size] = groups[g];
      if (size < 2 || static_cast<std::size_t>(first + size) > r.per_rank->wait_us.size()) continue;
      analysed = true;
      out.cases.push_back(analyse_case(skew_case(r, g, groups.size(), first, size), options, tally, out.observations));
    }
    if (!analysed) ++out.cases_skipped;
  }
  for (const auto& [rank, t] : tally) {
    if (t.leading == 0 || static_cast<double>(t.leading) <= options.min_consistency * t.cases) continue;
    out.stragglers.push_back(straggler(rank, t));
  }
  if (out.stragglers.empty()) out.observations.push_back(no_straggler_text(out, options));
  return out;
}

// ---- pairwise ------------------------------------------------------------------------------

std::optional<int> pairwise_round_of(const record::CaseRecord& r) {
  static const std::string kTag = "@round-robin-round";
  const auto pos = r.case_key.find(kTag);
  if (collective_id(r.collective) != CollectiveId::sendrecv || pos == std::string::npos) return std::nullopt;
  std::size_t i = pos + kTag.size();
  int round = 0;
  bool digits = false;
  while (i < r.case_key.size() && r.case_key[i] >= '0' && r.case_key[i] <= '9') {
    round = round * 10 + (r.case_key[i] - '0');
    digits = true;
    ++i;
  }
  return digits ? std::optional<int>(round) : std::nullopt;
}

PairwiseMatrix build_pairwise_matrix(const std::vector<PairwiseRound>& rounds) {
  PairwiseMatrix m;
  if (rounds.empty()) throw InputError("pairwise: no rounds to build a matrix from");
  m.num_ranks = rounds.front().record.num_ranks;
  m.bytes = rounds.front().record.bytes;
  m.domain_sizes = rounds.front().record.domain_sizes;
  const auto cells = static_cast<std::size_t>(m.num_ranks) * static_cast<std::size_t>(m.num_ranks);
  m.time_us.assign(cells, kNaN);
  m.gbps.assign(cells, kNaN);
  for (const auto& pr : rounds) {
    const auto& r = pr.record;
    if (r.num_ranks != m.num_ranks || r.bytes != m.bytes) {
      throw InputError(fmt::format("pairwise: round {} has {} ranks and {} bytes, the first round {} and {}", pr.round,
                                   r.num_ranks, r.bytes, m.num_ranks, m.bytes));
    }
    if (r.status != "ok" || !r.per_rank) continue;
    std::vector<double> t = r.per_rank->mean_us;
    if (const auto it = r.extra.find("per_rank_p50_us"); it != r.extra.end() && it->is_array()) {
      t = it->get<std::vector<double>>();
    }
    if (t.size() != static_cast<std::size_t>(m.num_ranks)) continue;
    for (const auto& [a, b] : round_robin_pairs(pr.round, m.num_ranks)) {
      const double time = pair_time_us(t[static_cast<std::size_t>(a)], t[static_cast<std::size_t>(b)]);
      const double bw = time > 0 ? gbps(static_cast<double>(m.bytes), time) : kNaN;
      m.time_us[m.index(a, b)] = m.time_us[m.index(b, a)] = time;
      m.gbps[m.index(a, b)] = m.gbps[m.index(b, a)] = bw;
    }
  }
  return m;
}

namespace {

// Domain of every rank from rank-major domain sizes; every rank in domain 0 when they do not cover
// the ranks (unknown placement).
std::vector<int> domain_of_ranks(const PairwiseMatrix& m) {
  std::vector<int> of(static_cast<std::size_t>(m.num_ranks), 0);
  int total = 0;
  for (int s : m.domain_sizes) total += s;
  if (total != m.num_ranks) return of;
  std::size_t r = 0;
  for (std::size_t d = 0; d < m.domain_sizes.size(); ++d) {
    for (int i = 0; i < m.domain_sizes[d]; ++i) of[r++] = static_cast<int>(d);
  }
  return of;
}

// Every measured link's bandwidth (GB/s), and the links inside a domain and between domains.
struct PairwiseLinks {
  std::vector<double> all, inside, across;
};

PairwiseLinks pairwise_links(const PairwiseMatrix& matrix, const std::vector<int>& domain) {
  PairwiseLinks links;
  const int n = matrix.num_ranks;
  for (int a = 0; a < n; ++a) {
    for (int b = a + 1; b < n; ++b) {
      const double g = matrix.at_gbps(a, b);
      if (!std::isfinite(g)) continue;
      links.all.push_back(g);
      (domain[static_cast<std::size_t>(a)] == domain[static_cast<std::size_t>(b)] ? links.inside : links.across)
          .push_back(g);
    }
  }
  return links;
}

// The median and the reference bandwidth (with 3 or more links in each class, one per class).
void pairwise_set_references(PairwiseReport& out, PairwiseLinks links) {
  auto& all = links.all;
  auto& inside = links.inside;
  auto& across = links.across;
  out.median_gbps = median_of(all);
  std::sort(all.begin(), all.end());
  // The reference is the upper quartile, "a typical good link": with one bad rank among four,
  // half of the six links are slow and the median would sit between the two groups.
  out.reference_gbps = stats::percentile_sorted(all, 0.75);
  if (inside.size() >= 3 && across.size() >= 3) {
    std::sort(inside.begin(), inside.end());
    std::sort(across.begin(), across.end());
    out.reference_gbps = stats::percentile_sorted(inside, 0.75);
    out.cross_reference_gbps = stats::percentile_sorted(across, 0.75);
    out.observations.push_back(fmt::format(
        "links judged by class: {} inside domains against {:.3g} GB/s, {} between domains against {:.3g} GB/s "
        "(upper quartile of each class)",
        inside.size(), out.reference_gbps, across.size(), *out.cross_reference_gbps));
  }
}

// The links below slow_fraction of their class's reference, the ranks with 2 or more of them,
// the suspect ranks (at least half of their links slow) and the slow links those do not explain.
void pairwise_find_slow(PairwiseReport& out, const PairwiseMatrix& matrix, const std::vector<int>& domain,
                        double slow_fraction) {
  const int n = matrix.num_ranks;
  const auto reference_of = [&](int a, int b) {
    const bool cross = domain[static_cast<std::size_t>(a)] != domain[static_cast<std::size_t>(b)];
    return cross && out.cross_reference_gbps ? *out.cross_reference_gbps : out.reference_gbps;
  };
  std::vector<int> slow_count(static_cast<std::size_t>(n), 0), link_count(static_cast<std::size_t>(n), 0);
  for (int a = 0; a < n; ++a) {
    for (int b = a + 1; b < n; ++b) {
      const double g = matrix.at_gbps(a, b);
      if (!std::isfinite(g)) continue;
      ++link_count[static_cast<std::size_t>(a)];
      ++link_count[static_cast<std::size_t>(b)];
      const double ref = reference_of(a, b);
      if (g < slow_fraction * ref) {
        out.slow_links.push_back({a, b, g, g / ref});
        ++slow_count[static_cast<std::size_t>(a)];
        ++slow_count[static_cast<std::size_t>(b)];
      }
    }
  }
  for (int r = 0; r < n; ++r) {
    const auto i = static_cast<std::size_t>(r);
    if (slow_count[i] < 2) continue;
    PairwiseRankSuspect s{r, slow_count[i], link_count[i]};
    out.ranks.push_back(s);
    if (2 * slow_count[i] >= link_count[i]) out.suspect_ranks.push_back(s);
  }
  for (const auto& l : out.slow_links) {
    const bool explained = std::any_of(out.suspect_ranks.begin(), out.suspect_ranks.end(),
                                       [&l](const auto& s) { return s.rank == l.a || s.rank == l.b; });
    if (!explained) out.suspect_links.push_back(l);
  }
}

}  // namespace

std::string pairwise_reference_text(const PairwiseReport& p) {
  if (p.cross_reference_gbps) {
    return fmt::format("its class's reference ({:.3g} GB/s inside a domain, {:.3g} GB/s between domains)",
                       p.reference_gbps, *p.cross_reference_gbps);
  }
  return fmt::format("the reference {:.3g} GB/s (upper quartile)", p.reference_gbps);
}

PairwiseReport analyse_pairwise(const PairwiseMatrix& matrix, const PairwiseOptions& options) {
  PairwiseReport out;
  out.matrix = matrix;
  out.slow_fraction = options.slow_fraction;
  const int n = matrix.num_ranks;
  const std::vector<int> domain = domain_of_ranks(matrix);
  PairwiseLinks links = pairwise_links(matrix, domain);
  out.links_measured = static_cast<int>(links.all.size());
  const int expected_links = n * (n - 1) / 2;
  if (out.links_measured < expected_links) {
    out.observations.push_back(
        options.rounds_measured > 0 && options.rounds_measured < round_robin_rounds(n)
            ? fmt::format("{} of {} links measured: {} of {} round-robin rounds, sampled (--pair-rounds)",
                          out.links_measured, expected_links, options.rounds_measured, round_robin_rounds(n))
            : fmt::format("{} of {} links measured (rounds missing, waived or failed)", out.links_measured,
                          expected_links));
  }
  if (links.all.empty()) return out;
  pairwise_set_references(out, std::move(links));
  if (out.links_measured < 3) {
    out.observations.push_back(fmt::format(
        "only {} link(s): nothing to compare a link with (pairwise needs 3 or more ranks)", out.links_measured));
    return out;
  }
  pairwise_find_slow(out, matrix, domain, options.slow_fraction);
  if (out.slow_links.empty()) {
    out.observations.push_back(fmt::format("no slow link: every link is within {:.0f}% of {} ({} links)",
                                           100.0 * options.slow_fraction, pairwise_reference_text(out),
                                           out.links_measured));
  }
  return out;
}

std::string pairwise_matrix_csv(const PairwiseMatrix& m) {
  std::string out = "rank";
  for (int b = 0; b < m.num_ranks; ++b) out += fmt::format(",{}", b);
  out += '\n';
  for (int a = 0; a < m.num_ranks; ++a) {
    out += fmt::format("{}", a);
    for (int b = 0; b < m.num_ranks; ++b) {
      const double g = m.at_gbps(a, b);
      out += std::isfinite(g) ? fmt::format(",{:.6g}", g) : std::string(",");
    }
    out += '\n';
  }
  return out;
}

// ---- bisection -----------------------------------------------------------------------------

HalfComparison compare_halves(const HalfTiming& first, const HalfTiming& second, const BisectOptions& options) {
  HalfComparison step;
  step.first = first;
  step.second = second;
  const auto describe = [](const HalfTiming& h) {
    return fmt::format("{}: p50 {} [95% CI {}, {}]", rank_range(h.first_rank, h.num_ranks),
                       locate_duration_text(h.p50_us), locate_duration_text(h.ci_low_us),
                       locate_duration_text(h.ci_high_us));
  };
  if ((first.num_ranks == 1) != (second.num_ranks == 1)) {
    step.evidence =
        fmt::format("not comparable: {} vs {} (one rank against several)", describe(first), describe(second));
    return step;
  }
  // Normalise by the busbw factor so that halves of different sizes compare (ring all-reduce
  // moves 2(n-1)/n x S per rank); one-rank halves compare plain times.
  const auto scale = [](const HalfTiming& h) {
    return h.num_ranks >= 2 && h.busbw_factor > 0 ? 1.0 / h.busbw_factor : 1.0;
  };
  const double s1 = scale(first), s2 = scale(second);
  const double t1 = first.p50_us * s1, t2 = second.p50_us * s2;
  const double lo1 = first.ci_low_us * s1, hi1 = first.ci_high_us * s1;
  const double lo2 = second.ci_low_us * s2, hi2 = second.ci_high_us * s2;
  if (t2 > 0 && t1 >= options.min_ratio * t2 && lo1 > hi2) {
    step.order = HalfOrder::first_slower;
    step.ratio = t1 / t2;
  } else if (t1 > 0 && t2 >= options.min_ratio * t1 && lo2 > hi1) {
    step.order = HalfOrder::second_slower;
    step.ratio = t2 / t1;
  } else {
    step.ratio = t1 > 0 && t2 > 0 ? std::max(t1, t2) / std::min(t1, t2) : 1.0;
  }
  const bool different_sizes = first.num_ranks != second.num_ranks;
  const std::string verdict =
      step.order == HalfOrder::neither
          ? fmt::format("neither half is clearly slower (ratio {:.2f} < {:.2f}, or the CIs overlap)", step.ratio,
                        options.min_ratio)
          : fmt::format("{} is {:.1f}x slower{}",
                        step.order == HalfOrder::first_slower ? rank_range(first.first_rank, first.num_ranks)
                                                              : rank_range(second.first_rank, second.num_ranks),
                        step.ratio, different_sizes ? " (time / busbw factor, halves of different sizes)" : "");
  step.evidence = fmt::format("{} vs {}: {}", describe(first), describe(second), verdict);
  return step;
}

BisectStep decide_step(const std::vector<std::pair<HalfTiming, HalfTiming>>& measurements,
                       const BisectOptions& options) {
  BisectStep step;
  for (const auto& [first, second] : measurements) step.repetitions.push_back(compare_halves(first, second, options));
  if (step.repetitions.empty()) {
    step.evidence = "no measurement";
    return step;
  }
  const HalfOrder first_order = step.repetitions.front().order;
  const bool agree = std::all_of(step.repetitions.begin(), step.repetitions.end(),
                                 [first_order](const HalfComparison& c) { return c.order == first_order; });
  step.order = agree ? first_order : HalfOrder::neither;
  step.ratio = step.repetitions.front().ratio;
  for (const auto& c : step.repetitions) step.ratio = std::min(step.ratio, c.ratio);
  const std::size_t n = step.repetitions.size();
  if (n == 1) {
    step.evidence = step.repetitions.front().evidence;
  } else {
    std::string ratios;
    for (const auto& c : step.repetitions) ratios += fmt::format("{}{:.2f}", ratios.empty() ? "" : ", ", c.ratio);
    const std::string verdict =
        step.order != HalfOrder::neither
            ? fmt::format("slower in all {} repetitions (ratios {})", n, ratios)
            : fmt::format("not the same half clearly slower in all {} repetitions (ratios {})", n, ratios);
    step.evidence = fmt::format("{}; {}", verdict, step.repetitions.front().evidence);
  }
  return step;
}

BisectReport bisect(int num_ranks, const HalvesMeasurer& measure, const BisectOptions& options) {
  BisectReport out;
  out.lo = 0;
  out.hi = num_ranks;
  while (out.hi - out.lo >= 2) {
    const int mid = out.lo + (out.hi - out.lo) / 2;
    const int a = mid - out.lo, b = out.hi - mid;
    if ((a == 1) != (b == 1)) {
      out.conclusion = fmt::format("{} cannot be split into comparable halves (one rank against several)",
                                   rank_range(out.lo, out.hi - out.lo));
      break;
    }
    BisectStep step = decide_step(measure(out.lo, mid, out.hi), options);
    const HalfOrder order = step.order;
    out.steps.push_back(std::move(step));
    if (order == HalfOrder::neither) break;
    out.found = true;
    if (order == HalfOrder::first_slower) {
      out.hi = mid;
    } else {
      out.lo = mid;
    }
  }
  if (!out.found) {
    out.conclusion = out.steps.empty() ? std::string("nothing to bisect (fewer than two ranks)")
                                       : "no half of the ranks is clearly slower than the other: no single slow "
                                         "rank (a slow link between the halves shows in the pairwise matrix instead)";
    out.lo = 0;
    out.hi = num_ranks;
  } else if (out.hi - out.lo == 1) {
    out.rank = out.lo;
    out.conclusion = fmt::format("rank {} is the slow one: its half was slower at every one of {} step(s)", out.lo,
                                 out.steps.size());
  } else {
    const std::string why =
        out.conclusion.empty() ? std::string("neither of its halves is slower on its own") : out.conclusion;
    out.conclusion = fmt::format(
        "the slowness stays within {} ({}): they are slow together (a link between them, "
        "or a shared component)",
        rank_range(out.lo, out.hi - out.lo), why);
  }
  return out;
}

std::pair<HalfTiming, HalfTiming> halves_from_record(const record::CaseRecord& r, int lo, int mid, int hi) {
  const auto it = r.extra.find("per_domain");
  if (it == r.extra.end() || !it->is_array()) {
    throw InputError(fmt::format("bisection: record {} has no per-domain statistics", r.case_key));
  }
  const std::size_t index = lo > 0 ? 1 : 0;
  if (index + 1 >= it->size()) throw InputError("bisection: the record has fewer domains than the split");
  const auto half = [&](const nlohmann::json& d, int first, int count) {
    if (d.at("first_rank").get<int>() != first || d.at("num_ranks").get<int>() != count) {
      throw InputError(fmt::format("bisection: domain {} covers ranks {}+{}, expected {}+{}", d.at("domain").dump(),
                                   d.at("first_rank").dump(), d.at("num_ranks").dump(), first, count));
    }
    HalfTiming h;
    h.first_rank = first;
    h.num_ranks = count;
    const auto& t = d.at("time_us");
    h.p50_us = t.at("p50").get<double>();
    h.ci_low_us = t.at("ci95_low").get<double>();
    h.ci_high_us = t.at("ci95_high").get<double>();
    h.busbw_factor = model::busbw_factor(r.collective, count);
    return h;
  };
  return {half((*it)[index], lo, mid - lo), half((*it)[index + 1], mid, hi - mid)};
}

std::vector<int> bisect_domain_sizes(int num_ranks, int lo, int mid, int hi) {
  std::vector<int> sizes;
  if (lo > 0) sizes.push_back(lo);
  sizes.push_back(mid - lo);
  sizes.push_back(hi - mid);
  if (hi < num_ranks) sizes.push_back(num_ranks - hi);
  return sizes;
}

}  // namespace collbench::locate
