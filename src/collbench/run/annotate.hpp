// A case's record on its way to the sinks: the identity it has before it runs (skeleton), the
// measurement (fill_measurement), and the model's bound and expected value beside it: of a
// regular collective, of an irregular exchange's traffic matrix, or of concurrent parts.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "collbench/coll/collective.hpp"
#include "collbench/core/placement.hpp"
#include "collbench/model/system_profile.hpp"
#include "collbench/model/traffic.hpp"
#include "collbench/plan/case.hpp"
#include "collbench/record/record.hpp"
#include "collbench/run/measure.hpp"

namespace collbench::run {

// The record of case `c` before it runs: identity, shape, placement, communicator size.
record::CaseRecord skeleton(const plan::Case& c, const coll::Collective& coll, const coll::Shape& shape,
                            const Placement& placement, int comm_size, const std::string& run_id);

// Times, bandwidths, per-rank and per-domain statistics and wrong elements of a measurement
// (rank 0); a case with wrong elements fails with the count per rank.
void fill_measurement(record::CaseRecord& r, const Measurement& m, const coll::Collective& coll, int comm_size,
                      std::size_t max_kept);

// Bound, expected value and efficiency from the system profile. A case the model does not
// cover says why (`model_note`); a run faster than its bound is flagged, never hidden.
void annotate_with_model(record::CaseRecord& r, const plan::Case& c, const Placement& placement,
                         const model::SystemProfile& system);

// Irregular exchanges (MoE): the bound for the summary of the case's traffic matrix (model/traffic.hpp).
void annotate_with_traffic_model(record::CaseRecord& r, const model::TrafficSummary& traffic,
                                 const Placement& placement, const model::SystemProfile& system);

// Concurrent parts (ep-dp-concurrent): record `concurrent` (each part alone, all at once,
// interference) and the bound of the slowest part; no model without a profile (`system` null).
void annotate_concurrent(record::CaseRecord& r, const std::vector<coll::ConcurrentPart>& parts,
                         const std::map<std::string, double>& side_us, const plan::Case& c,
                         const model::SystemProfile* system);

}  // namespace collbench::run
