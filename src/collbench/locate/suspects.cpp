// Locate's merged report: each method's findings as named suspects (collect_suspects).
#include <fmt/format.h>

#include <cstddef>
#include <string>
#include <vector>

#include "collbench/locate/locate.hpp"

namespace collbench::locate {
namespace {

// The host of a rank, or empty when unknown.
std::string suspect_host(const LocateReport& report, int rank) {
  return rank >= 0 && static_cast<std::size_t>(rank) < report.hosts.size()
             ? report.hosts[static_cast<std::size_t>(rank)]
             : std::string();
}

// A rank suspect found by `method`, merged into the rank's suspect when there is one.
void suspect_add_rank(LocateReport& report, int rank, const std::string& method, const std::string& evidence) {
  for (auto& s : report.suspects) {
    if (s.kind == "rank" && s.rank == rank) {
      if (s.found_by.find(method) == std::string::npos) s.found_by += ", " + method;
      s.evidence.push_back(method + ": " + evidence);
      return;
    }
  }
  Suspect s;
  s.kind = "rank";
  s.rank = rank;
  s.host = suspect_host(report, rank);
  s.found_by = method;
  s.evidence.push_back(method + ": " + evidence);
  report.suspects.push_back(std::move(s));
}

// The pairwise matrix's suspect ranks (with their slow links) and the slow links no suspect rank
// explains.
void suspect_add_pairwise(LocateReport& report, const PairwiseReport& p) {
  for (const auto& s : p.suspect_ranks) {
    std::string links;
    for (const auto& l : p.slow_links) {
      if (l.a == s.rank || l.b == s.rank) {
        links += fmt::format("{}{}-{} {:.3g} GB/s", links.empty() ? "" : ", ", l.a, l.b, l.gbps);
      }
    }
    suspect_add_rank(report, s.rank, "pairwise",
                     fmt::format("common to {} of its {} links, all slow (< {:.0f}% of {}): {}", s.slow_links, s.links,
                                 100.0 * p.slow_fraction, pairwise_reference_text(p), links));
  }
  for (const auto& l : p.suspect_links) {
    Suspect s;
    s.kind = "link";
    s.a = l.a;
    s.b = l.b;
    const std::string ha = suspect_host(report, l.a), hb = suspect_host(report, l.b);
    if (!ha.empty() || !hb.empty()) s.host = ha == hb ? ha : ha + " - " + hb;
    s.found_by = "pairwise";
    s.evidence.push_back(
        fmt::format("pairwise: {:.3g} GB/s, {:.0f}% of {} ({} links); ranks {} and {} are fine on their other links",
                    l.gbps, 100.0 * l.fraction_of_reference, pairwise_reference_text(p), p.links_measured, l.a, l.b));
    report.suspects.push_back(std::move(s));
  }
}

// The bisection's slow rank, or the group of ranks it could not split.
void suspect_add_bisection(LocateReport& report, const BisectReport& b) {
  std::string steps;
  for (const auto& st : b.steps) steps += (steps.empty() ? "" : "; ") + st.evidence;
  if (b.rank) {
    suspect_add_rank(report, *b.rank, "bisection", b.conclusion + ": " + steps);
  } else {
    Suspect s;
    s.kind = "group";
    s.a = b.lo;
    s.b = b.hi - 1;
    s.found_by = "bisection";
    s.evidence.push_back("bisection: " + b.conclusion + ": " + steps);
    report.suspects.push_back(std::move(s));
  }
}

}  // namespace

void collect_suspects(LocateReport& report) {
  report.suspects.clear();
  if (report.skew) {
    for (const auto& s : report.skew->stragglers) suspect_add_rank(report, s.rank, "skew", s.evidence);
  }
  if (report.pairwise) suspect_add_pairwise(report, *report.pairwise);
  if (report.bisection && report.bisection->found) suspect_add_bisection(report, *report.bisection);
}

}  // namespace collbench::locate
