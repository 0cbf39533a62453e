// A case measured in k repeats (run/sweep --repeats k; docs/measurement.md "Repeats"): what rank 0
// keeps of each repeat until the last one, and the repeats merged into the case's record.
#pragma once

#include <cstddef>
#include <vector>

#include "collbench/plan/sweep.hpp"
#include "collbench/record/record.hpp"
#include "collbench/run/measure.hpp"

namespace collbench::run {

// One repeat on rank 0: its own statistics (over all its iterations) and the measurement with its
// samples cut to the first `keep` (the record keeps max_samples_kept / k of each repeat).
struct RepeatResult {
  record::RepeatPart part;
  std::size_t samples_total = 0;  // before the cut
  Measurement m;
};

RepeatResult keep_repeat(Measurement m, std::size_t keep);

// --repeats k: InputError unless k >= 1, and for k > 1 with an overlap case (overlap mode has its
// own three timings per case and is measured once).
void validate_repeats(const plan::Sweep& sweep, int k);

// The repeats as one measurement for fill_measurement: kept samples concatenated in repeat order,
// iterations and wrong elements summed, per-rank means weighted by iterations, per-rank maxima the
// largest, per-rank medians and side timings the median over repeats, per-domain samples pooled.
// An overlap measurement is not merged (run refuses --repeats with --overlap).
Measurement merge_repeats(const std::vector<RepeatResult>& repeats);

// After fill_measurement of the merged measurement: time_us from every repeat's own statistics
// (record::combined_time: p50 = the median of the repeat medians), the `repeats` object, the
// samples dropped over all repeats, and algbw/busbw at the new p50.
void apply_repeats(record::CaseRecord& rec, const std::vector<RepeatResult>& repeats, double busbw_factor);

}  // namespace collbench::run
