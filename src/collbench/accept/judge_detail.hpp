// Internals of the acceptance judge shared by its files (not an interface of the layer):
// judge.cpp reads the records and judges the rows, judge_evidence.cpp names who is slow.
#pragma once

#include <algorithm>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "collbench/accept/judge.hpp"
#include "collbench/stats/summary.hpp"

namespace collbench::accept::judge_detail {

// The median (p50) of v.
inline double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return stats::percentile_sorted(v, 0.5);
}

// The record's view of one domain (or of all ranks): p50 time, algbw, busbw.
struct DomainNumbers {
  double time_us = 0.0, algbw_gbps = 0.0, busbw_gbps = 0.0;
};

// Per repetition, the rounds' records (one record unless the check runs every round).
struct Repetition {
  std::vector<std::pair<int, const record::CaseRecord*>> rounds;
};

using Round = std::pair<int, const record::CaseRecord*>;

// What a row's records say, repetition by repetition.
struct RowRecords {
  std::vector<std::string> failures, waivers;
  std::vector<record::CaseRecord> all;
  const record::CaseRecord* model_record = nullptr;
  std::vector<std::pair<double, Round>> slowest_rounds;  // per usable repetition: its slowest round
};

// How many parties a pairwise check's round robin pairs: domains (rail pairs), the largest
// domain's ranks (scope domain) or every rank.
int round_robin_size(const Check& c, const Placement& p);

// A pairwise round's numbers from its slowest pair's time (report::pair_time_us: the later-arriving
// partner's), not from the record's time: the record's time is the maximum over all ranks, which
// adds the barrier's exit skew to every pair (at 144 simulated ranks it failed a healthy rack).
// Bandwidths scale with it (same bytes). The record's numbers when the round has no pair times.
DomainNumbers pair_numbers(const DomainNumbers& n, const record::CaseRecord& r, int round, int first, int count,
                           bool rail, const Placement& placement);

// Evidence: who is slow (skew over this row's records), the slowest pair of a round, the rank
// common to the slowest pairs.
void add_evidence(Row& row, const Check& check, const RowRecords& records, const std::map<int, Repetition>& reps,
                  const Placement& placement, const std::vector<std::string>& hosts);

}  // namespace collbench::accept::judge_detail
