// Locate output: locate.json (schema collbench.locate/1) and the console text. Writers only
// render: every judgement is made in locate/locate.cpp.
#include "collbench/report/locate_render.hpp"

#include <fmt/format.h>

#include <cmath>
#include <string>

#include "collbench/core/units.hpp"
#include "collbench/locate/locate_detail.hpp"

namespace collbench::report {
namespace {

constexpr int kMaxConsoleMatrix = 32;  // ranks up to which the console prints the pairwise matrix

nlohmann::json finite_or_null(double v) {
  return std::isfinite(v) ? nlohmann::json(v) : nlohmann::json(nullptr);
}

nlohmann::json half_json(const locate::HalfTiming& h) {
  return {{"first_rank", h.first_rank}, {"num_ranks", h.num_ranks},     {"p50_us", h.p50_us},
          {"ci95_low_us", h.ci_low_us}, {"ci95_high_us", h.ci_high_us}, {"busbw_factor", h.busbw_factor}};
}

std::string order_name(locate::HalfOrder o) {
  switch (o) {
    case locate::HalfOrder::first_slower:
      return "first_slower";
    case locate::HalfOrder::second_slower:
      return "second_slower";
    case locate::HalfOrder::neither:
      break;
  }
  return "neither";
}

// "850 ms", "12.3 s", "4.2 min".
std::string seconds_text(double s) {
  if (s < 1.0) return fmt::format("{:.3g} ms", s * 1e3);
  if (s < 120.0) return fmt::format("{:.3g} s", s);
  return fmt::format("{:.3g} min", s / 60.0);
}

using json = nlohmann::json;

// Time spent per method and in all, on the report's clock.
json cost_json(const locate::LocateReport& r) {
  json costs = json::array();
  double total = 0.0;
  for (const auto& c : r.costs) {
    costs.push_back({{"method", c.method}, {"seconds", c.seconds}, {"cases", c.cases}});
    total += c.seconds;
  }
  return {{"clock", r.clock}, {"methods", costs}, {"total_seconds", total}};
}

// The suspects merged over the methods: a rank, or the two ranks of a link or a group (first and last).
json suspects_json(const std::vector<locate::Suspect>& suspects) {
  json out = json::array();
  for (const auto& s : suspects) {
    json j{{"kind", s.kind}, {"found_by", s.found_by}, {"evidence", s.evidence}, {"host", s.host}};
    if (s.kind == "rank") j["rank"] = s.rank;
    if (s.kind == "link") j["ranks"] = {s.a, s.b};
    if (s.kind == "group") j["ranks"] = {s.a, s.b};  // first and last
    out.push_back(j);
  }
  return out;
}

// One analysed case of the skew method; a non-finite lead is null.
json skew_case_json(const locate::CaseSkew& c) {
  json lead = json::array();
  for (double v : c.lead_us) lead.push_back(finite_or_null(v));
  return {{"case_key", c.case_key}, {"label", c.label},     {"first_rank", c.first_rank}, {"p50_us", c.p50_us},
          {"p99_us", c.p99_us},     {"mean_us", c.mean_us}, {"wait_us", c.wait_us},       {"lead_us", lead},
          {"leading", c.leading},   {"spike", c.spike}};
}

// The skew method: its cases, stragglers and observations.
json skew_json(const locate::SkewReport& skew) {
  json cases = json::array();
  for (const auto& c : skew.cases) cases.push_back(skew_case_json(c));
  json stragglers = json::array();
  for (const auto& s : skew.stragglers) {
    stragglers.push_back({{"rank", s.rank},
                          {"cases_leading", s.cases_leading},
                          {"cases", s.cases},
                          {"median_lead_us", s.median_lead_us},
                          {"median_lead_fraction", s.median_lead_fraction},
                          {"evidence", s.evidence}});
  }
  return {{"cases", cases},
          {"stragglers", stragglers},
          {"observations", skew.observations},
          {"cases_skipped", skew.cases_skipped}};
}

// The n x n matrix of one figure (GB/s or time) as rows; a non-finite cell is null.
json matrix_rows(const locate::PairwiseMatrix& m, double (locate::PairwiseMatrix::*at)(int, int) const) {
  json rows = json::array();
  for (int a = 0; a < m.num_ranks; ++a) {
    json row = json::array();
    for (int b = 0; b < m.num_ranks; ++b) row.push_back(finite_or_null((m.*at)(a, b)));
    rows.push_back(row);
  }
  return rows;
}

// Ranks of the pairwise method with their slow links and links.
json rank_suspects_json(const std::vector<locate::PairwiseRankSuspect>& ranks) {
  json out = json::array();
  for (const auto& s : ranks) out.push_back({{"rank", s.rank}, {"slow_links", s.slow_links}, {"links", s.links}});
  return out;
}

// The pairwise method: the matrix, the reference rates, the slow and suspect links and ranks.
json pairwise_json(const locate::PairwiseReport& p) {
  json slow = json::array(), links = json::array();
  for (const auto& l : p.slow_links)
    slow.push_back({{"ranks", {l.a, l.b}}, {"gbps", l.gbps}, {"fraction", l.fraction_of_reference}});
  for (const auto& l : p.suspect_links) links.push_back({{"ranks", {l.a, l.b}}, {"gbps", l.gbps}});
  return {{"bytes", p.matrix.bytes},
          {"matrix_gbps", matrix_rows(p.matrix, &locate::PairwiseMatrix::at_gbps)},
          {"matrix_time_us", matrix_rows(p.matrix, &locate::PairwiseMatrix::at_time)},
          {"median_gbps", p.median_gbps},
          {"reference_gbps", p.reference_gbps},
          {"cross_reference_gbps", p.cross_reference_gbps ? json(*p.cross_reference_gbps) : json(nullptr)},
          {"links_measured", p.links_measured},
          {"slow_links", slow},
          {"ranks_common_to_slow_links", rank_suspects_json(p.ranks)},
          {"suspect_ranks", rank_suspects_json(p.suspect_ranks)},
          {"suspect_links", links},
          {"observations", p.observations}};
}

// One bisection step: each repetition's halves, and the step's decision.
json bisect_step_json(const locate::BisectStep& s) {
  json reps = json::array();
  for (const auto& c : s.repetitions) {
    reps.push_back({{"first", half_json(c.first)},
                    {"second", half_json(c.second)},
                    {"order", order_name(c.order)},
                    {"ratio", c.ratio}});
  }
  return {{"repetitions", reps}, {"order", order_name(s.order)}, {"ratio", s.ratio}, {"evidence", s.evidence}};
}

// The bisection: its steps and the final suspect range.
json bisection_json(const locate::BisectReport& b) {
  json steps = json::array();
  for (const auto& s : b.steps) steps.push_back(bisect_step_json(s));
  return {{"steps", steps},
          {"suspect_first_rank", b.lo},
          {"suspect_last_rank", b.hi - 1},
          {"found", b.found},
          {"rank", b.rank ? json(*b.rank) : json(nullptr)},
          {"conclusion", b.conclusion}};
}

}  // namespace

nlohmann::json locate_to_json(const locate::LocateReport& r) {
  json out{{"schema", kLocateSchema},
           {"num_ranks", r.num_ranks},
           {"hosts", r.hosts},
           {"fault", r.fault ? json(*r.fault) : json(nullptr)},
           {"notes", r.notes}};
  if (!r.costs.empty()) out["cost"] = cost_json(r);
  out["suspects"] = suspects_json(r.suspects);
  out["skew"] = r.skew ? skew_json(*r.skew) : json(nullptr);
  out["pairwise"] = r.pairwise ? pairwise_json(*r.pairwise) : json(nullptr);
  out["bisection"] = r.bisection ? bisection_json(*r.bisection) : json(nullptr);
  return out;
}

namespace {

// The skew method's cases (waits per rank), stragglers and notes.
std::string locate_skew_text(const locate::SkewReport& s) {
  std::string out = fmt::format("\n## skew: per-rank wait inside the collective ({} case(s) analysed, {} skipped)\n",
                                s.cases.size(), s.cases_skipped);
  for (const auto& c : s.cases) {
    std::string waits;
    for (std::size_t i = 0; i < c.wait_us.size(); ++i)
      waits += fmt::format("{}{}:{}", waits.empty() ? "" : " ", c.first_rank + static_cast<int>(i),
                           locate::locate_duration_text(c.wait_us[i]));
    std::string leading;
    for (int rank : c.leading) leading += fmt::format("{}{}", leading.empty() ? "" : ",", rank);
    out += fmt::format("  {:<34} p50 {:>9}  waits [{}]{}{}\n", c.label, locate::locate_duration_text(c.p50_us), waits,
                       leading.empty() ? "" : "  late: rank " + leading, c.spike ? "  SPIKE" : "");
  }
  for (const auto& st : s.stragglers) out += fmt::format("  -> rank {}: {}\n", st.rank, st.evidence);
  for (const auto& o : s.observations) out += "  note: " + o + "\n";
  return out;
}

// The pairwise matrix in GB/s, up to kMaxConsoleMatrix ranks (else where to find it).
std::string locate_matrix_text(const locate::PairwiseReport& p) {
  const int n = p.matrix.num_ranks;
  std::string out;
  if (n <= kMaxConsoleMatrix) {
    out += "  rank";
    for (int b = 0; b < n; ++b) out += fmt::format(" {:>8}", b);
    out += '\n';
    for (int a = 0; a < n; ++a) {
      out += fmt::format("  {:>4}", a);
      for (int b = 0; b < n; ++b) {
        const double g = p.matrix.at_gbps(a, b);
        out += std::isfinite(g) ? fmt::format(" {:>8.3g}", g) : fmt::format(" {:>8}", "-");
      }
      out += '\n';
    }
  } else {  // n^2 numbers are no console reading: the matrix goes to pairwise.csv (--out-dir)
    out +=
        fmt::format("  the {} x {} matrix is in pairwise-matrix.csv (--out-dir); the console shows it up to {} ranks\n",
                    n, n, kMaxConsoleMatrix);
  }
  return out;
}

// The pairwise method: the matrix, the reference, the slow links and ranks, the notes.
std::string locate_pairwise_text(const locate::PairwiseReport& p) {
  std::string out =
      fmt::format("\n## pairwise: round-robin send/recv, {} per pair, GB/s (one direction, both at once)\n",
                  format_bytes(p.matrix.bytes));
  out += locate_matrix_text(p);
  out += fmt::format("  median link {:.3g} GB/s, {}, {} link(s) measured\n", p.median_gbps,
                     locate::pairwise_reference_text(p), p.links_measured);
  constexpr std::size_t kMaxConsoleLinks = 24;  // the rest are in locate.json
  for (std::size_t i = 0; i < p.slow_links.size() && i < kMaxConsoleLinks; ++i) {
    const auto& l = p.slow_links[i];
    out += fmt::format("  slow link {}-{}: {:.3g} GB/s ({:.0f}% of the reference)\n", l.a, l.b, l.gbps,
                       100.0 * l.fraction_of_reference);
  }
  if (p.slow_links.size() > kMaxConsoleLinks) {
    out += fmt::format("  ... {} more slow links (locate.json, --out-dir)\n", p.slow_links.size() - kMaxConsoleLinks);
  }
  for (const auto& s : p.ranks) {
    out += fmt::format("  rank {} is common to {} of the slow links ({} of its {} links slow)\n", s.rank, s.slow_links,
                       s.slow_links, s.links);
  }
  for (const auto& o : p.observations) out += "  note: " + o + "\n";
  return out;
}

// The bisection's steps and conclusion.
std::string locate_bisection_text(const locate::BisectReport& b) {
  std::string out =
      fmt::format("\n## bisection: all-reduce on both halves of the suspect set at once ({} run(s))\n", b.steps.size());
  for (std::size_t i = 0; i < b.steps.size(); ++i) out += fmt::format("  step {}: {}\n", i + 1, b.steps[i].evidence);
  out += "  -> " + b.conclusion + "\n";
  return out;
}

// The cluster time each method took, and in all.
std::string locate_cost_text(const locate::LocateReport& r) {
  std::string parts;
  double total = 0.0;
  for (const auto& c : r.costs) {
    parts += fmt::format("{}{} {} ({} case(s))", parts.empty() ? "" : ", ", c.method, seconds_text(c.seconds), c.cases);
    total += c.seconds;
  }
  return fmt::format("\n## cost: {} of cluster time ({} clock): {}\n", seconds_text(total), r.clock, parts);
}

// The merged suspects with their evidence.
std::string locate_suspects_text(const std::vector<locate::Suspect>& suspects) {
  std::string out;
  if (suspects.empty()) out += "  none: nothing found\n";
  for (const auto& s : suspects) {
    std::string who;
    if (s.kind == "rank")
      who = fmt::format("rank {}", s.rank);
    else if (s.kind == "link")
      who = fmt::format("link {}-{}", s.a, s.b);
    else
      who = fmt::format("ranks {}-{}", s.a, s.b);
    out += fmt::format("  SUSPECT {}{} (found by {})\n", who, s.host.empty() ? "" : " on " + s.host, s.found_by);
    for (const auto& e : s.evidence) out += "    - " + e + "\n";
  }
  return out;
}

}  // namespace

std::string render_locate_text(const locate::LocateReport& r) {
  std::string out = fmt::format("# collbench locate: {} ranks{}\n", r.num_ranks,
                                r.fault ? fmt::format(" (injected fault: {})", *r.fault) : std::string());
  if (r.skew) out += locate_skew_text(*r.skew);
  if (r.pairwise) out += locate_pairwise_text(*r.pairwise);
  if (r.bisection) out += locate_bisection_text(*r.bisection);
  if (!r.costs.empty()) out += locate_cost_text(r);
  out += "\n## suspects\n";
  out += locate_suspects_text(r.suspects);
  for (const auto& note : r.notes) out += "# note: " + note + "\n";
  return out;
}

}  // namespace collbench::report
