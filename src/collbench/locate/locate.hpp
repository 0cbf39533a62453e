// Finding the slow rank or link (`collbench locate`; docs/locate.md), as pure analysis over
// records so every rule is unit-tested on synthetic data:
//   skew      per case, each rank's time spent inside the collective (per_rank.wait_us): a
//             straggler arrives late, so the others wait for it and it waits least. A rank that
//             leads in most cases is slow on its own; a case whose iterations spike while the
//             waits stay even is a system-wide spike (noise, another job, the fabric).
//   pairwise  round-robin send/recv rounds (n/2 disjoint pairs each, n-1 rounds) fill a rank x
//             rank bandwidth matrix; links far below the median link are slow; a rank common to
//             most of its links' slowness is named instead of each link.
//   bisection all-reduce on the two halves of the suspect set at once (scope domain); the half
//             that is clearly slower keeps the suspicion; at most ceil(log2 n) runs.
// The measuring is done by the runner (src/cli/cmd_locate.cpp); nothing here needs MPI. The
// writers of the findings: report/locate_render.hpp.
#pragma once

#include <cstdint>
#include <functional>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "collbench/record/record.hpp"

namespace collbench::locate {

// ---- skew ----------------------------------------------------------------------------------

struct SkewOptions {
  // A rank leads in a case when its lead (the median wait of the other ranks of its
  // communicator minus its own wait) is at least this fraction of the case's mean iteration
  // time (it accounts for that much of every iteration) ...
  double min_lead_fraction = 0.2;
  // ... and at least this many times the spread (max - min) of the other ranks' waits, so that
  // it stands out from them rather than from noise (a communicator of two has no spread).
  // docs/locate.md has the measurements behind both numbers.
  double min_lead_over_spread = 2.0;
  // ... and is named when it leads in more than this fraction of the cases analysed.
  double min_consistency = 0.5;
  // p99 / p50 at or above this, with no leading rank: a system-wide spike (an observation).
  double spike_ratio = 3.0;
};

struct CaseSkew {
  std::string case_key, label;
  int first_rank = 0;  // the ranks compared: [first_rank, first_rank + wait_us.size())
  double p50_us = 0.0, p99_us = 0.0;
  double mean_us = 0.0;         // mean iteration time (the waits are means too)
  std::vector<double> wait_us;  // per rank of the communicator
  std::vector<double> lead_us;  // median of the others' waits - own wait
  std::vector<int> leading;     // world ranks whose lead passes the threshold
  bool spike = false;           // p99/p50 >= spike_ratio with no leading rank
};

struct RankSuspect {
  int rank = 0;
  int cases_leading = 0;
  int cases = 0;
  double median_lead_us = 0.0;
  double median_lead_fraction = 0.0;  // of the cases' mean iteration time
  std::string evidence;
};

struct SkewReport {
  std::vector<CaseSkew> cases;
  std::vector<RankSuspect> stragglers;
  std::vector<std::string> observations;
  int cases_skipped = 0;  // not ok, no per-rank data, or one rank
};

SkewReport analyse_skew(const std::vector<record::CaseRecord>& records, const SkewOptions& options = {});

// ---- pairwise ------------------------------------------------------------------------------

// The time and bandwidth of every pair of ranks; NaN where not measured (and on the diagonal).
struct PairwiseMatrix {
  int num_ranks = 0;
  std::uint64_t bytes = 0;
  std::vector<double> time_us;  // row-major n x n, symmetric
  std::vector<double> gbps;     // bytes / time (one direction; both directions run at once)
  // The rounds' placement (rank-major domain sizes; one domain when unknown). A link inside a
  // domain (NVLink) and a link between domains (NICs) are different classes of link, each judged
  // against its own class.
  std::vector<int> domain_sizes;

  [[nodiscard]] double at_time(int a, int b) const { return time_us[index(a, b)]; }
  [[nodiscard]] double at_gbps(int a, int b) const { return gbps[index(a, b)]; }
  [[nodiscard]] std::size_t index(int a, int b) const {
    return static_cast<std::size_t>(a) * static_cast<std::size_t>(num_ranks) + static_cast<std::size_t>(b);
  }
};

// One round of the round-robin pattern (sendrecv with pairing round-robin, scope global).
struct PairwiseRound {
  int round = 0;
  record::CaseRecord record;
};

// The time of one pair's exchange from its partners' per-iteration times: the later-arriving
// partner's, which is the smaller. Both directions run from its arrival, so what the earlier
// partner waited for it (the barrier's exit skew: up to 13 us across 4 simulated racks, against
// 5.5 us for a 4 MiB NVLink exchange) is not charged to the link; a slow link slows both directions,
// so both times, and a rank that arrives late because it is slow (injected delay) counts the delay
// in its own time too.
inline double pair_time_us(double a_us, double b_us) {
  return a_us < b_us ? a_us : b_us;
}

// The round of a sendrecv record from its case_key ("...|bytes@round-robin-roundR|..."), or
// nullopt when the record is not a round-robin round.
std::optional<int> pairwise_round_of(const record::CaseRecord& r);

// Pair time = pair_time_us of the partners' median per-iteration times (per_rank_p50_us; mean_us
// where the record has no medians). InputError when rounds disagree on size or rank count.
PairwiseMatrix build_pairwise_matrix(const std::vector<PairwiseRound>& rounds);

struct PairwiseOptions {
  double slow_fraction = 0.5;  // a link is slow below this fraction of the median link's GB/s
  int rounds_measured = 0;     // with a sample of the rounds (--pair-rounds): how many (0: all asked for)
};

struct LinkSuspect {
  int a = 0, b = 0;
  double gbps = 0.0;
  double fraction_of_reference = 0.0;
};

struct PairwiseRankSuspect {
  int rank = 0;
  int slow_links = 0;
  int links = 0;
};

struct PairwiseReport {
  PairwiseMatrix matrix;
  double median_gbps = 0.0;
  double reference_gbps = 0.0;  // upper quartile of the links: a typical good link (in-domain links, when classed)
  // With two or more domains: the upper quartile of the links between domains, against which those
  // links are judged (an NVLink pair and a NIC pair are not comparable). Absent with one domain, or
  // when either class has fewer than 3 links (then every link is judged against reference_gbps).
  std::optional<double> cross_reference_gbps;
  double slow_fraction = 0.0;  // the options' threshold
  int links_measured = 0;
  std::vector<LinkSuspect> slow_links;             // every link below the threshold
  std::vector<PairwiseRankSuspect> ranks;          // ranks common to two or more slow links
  std::vector<PairwiseRankSuspect> suspect_ranks;  // ... slow on at least half of their links
  std::vector<LinkSuspect> suspect_links;          // slow links not explained by a suspect rank
  std::vector<std::string> observations;
};

PairwiseReport analyse_pairwise(const PairwiseMatrix& matrix, const PairwiseOptions& options = {});

// "the reference 552 GB/s (upper quartile)", or with classes "its class's reference (552 GB/s
// inside a domain, 85.9 GB/s between domains)".
std::string pairwise_reference_text(const PairwiseReport& p);

// CSV of the matrix: header "rank,0,1,...", one row per rank, GB/s, empty where not measured.
std::string pairwise_matrix_csv(const PairwiseMatrix& matrix);

// ---- bisection -----------------------------------------------------------------------------

struct BisectOptions {
  double min_ratio = 1.5;  // the slower half's normalised time at least this x the other's
};

// One half's all-reduce (per_domain statistics of a scope-domain record).
struct HalfTiming {
  int first_rank = 0;
  int num_ranks = 0;
  double p50_us = 0.0, ci_low_us = 0.0, ci_high_us = 0.0;
  double busbw_factor = 0.0;  // 2(n-1)/n for all-reduce: compares halves of different sizes
};

enum class HalfOrder { first_slower, second_slower, neither };

// One measurement of the two halves and its verdict.
struct HalfComparison {
  HalfTiming first, second;
  HalfOrder order = HalfOrder::neither;
  double ratio = 1.0;  // slower / faster normalised p50
  std::string evidence;
};

// Which half is clearly slower in one measurement: normalised p50 (time / busbw factor when both
// halves have two or more ranks; plain time when both have one) at least min_ratio apart, and
// the 95% CIs of the medians not overlapping. One rank against several is not compared.
HalfComparison compare_halves(const HalfTiming& first, const HalfTiming& second, const BisectOptions& options = {});

// One bisection step: the same split measured `repetitions` times; a half is slower only when
// it is in every repetition (a slow component is slow every time; which half the scheduler or
// another job happens to slow down is not).
struct BisectStep {
  std::vector<HalfComparison> repetitions;
  HalfOrder order = HalfOrder::neither;
  double ratio = 1.0;  // the smallest ratio over the repetitions when they agree
  std::string evidence;
};

BisectStep decide_step(const std::vector<std::pair<HalfTiming, HalfTiming>>& measurements,
                       const BisectOptions& options = {});

struct BisectReport {
  std::vector<BisectStep> steps;
  int lo = 0, hi = 0;       // the final suspect range [lo, hi)
  bool found = false;       // a half was slower at least once
  std::optional<int> rank;  // narrowed to one rank
  std::string conclusion;
};

// Halves the suspect range [0, num_ranks) while one half is clearly slower. `measure(lo, mid,
// hi)` runs the all-reduce on [lo, mid) and [mid, hi) at once (one runner invocation, one or
// more repetitions) and returns both timings per repetition. Stops at one rank, when neither
// half is slower, or when a split would pair one rank with several (not comparable): at most
// ceil(log2 n) steps.
using HalvesMeasurer = std::function<std::vector<std::pair<HalfTiming, HalfTiming>>(int lo, int mid, int hi)>;
BisectReport bisect(int num_ranks, const HalvesMeasurer& measure, const BisectOptions& options = {});

// The halves' timings from a scope-domain all-reduce record whose domains are
// [.., lo) [lo, mid) [mid, hi) [hi, ..) (per_domain statistics). InputError when absent.
std::pair<HalfTiming, HalfTiming> halves_from_record(const record::CaseRecord& r, int lo, int mid, int hi);

// The placement of one bisection run: domain sizes covering [0, lo) [lo, mid) [mid, hi) [hi, n).
std::vector<int> bisect_domain_sizes(int num_ranks, int lo, int mid, int hi);

// ---- the report ----------------------------------------------------------------------------

struct Suspect {
  std::string kind;      // "rank" or "link"
  int rank = -1;         // kind rank
  int a = -1, b = -1;    // kind link
  std::string host;      // host name(s) where known
  std::string found_by;  // skew, pairwise, bisection (comma list)
  std::vector<std::string> evidence;
};

// What one method cost the cluster: time from the barrier before its first case to the barrier
// after its last, on rank 0's clock (simulated time under SMPI), and the cases it ran.
struct MethodCost {
  std::string method;  // skew, pairwise, bisect
  double seconds = 0.0;
  int cases = 0;
};

struct LocateReport {
  int num_ranks = 0;
  std::vector<MethodCost> costs;     // measured runs only (none when analysing files)
  std::string clock = "wall";        // "wall", or "simulated" under SimGrid SMPI
  std::vector<std::string> hosts;    // per rank, when known
  std::optional<std::string> fault;  // injected (tests)
  std::optional<SkewReport> skew;
  std::optional<PairwiseReport> pairwise;
  std::optional<BisectReport> bisection;
  std::vector<Suspect> suspects;  // merged over the methods
  std::vector<std::string> notes;
};

// Merges each method's findings into named suspects (a rank found by skew and bisection is one
// suspect with both pieces of evidence).
void collect_suspects(LocateReport& report);

}  // namespace collbench::locate
