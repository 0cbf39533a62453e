// Overlap efficiencies for the step from overlap records (docs/step.md, "Overlap"): the records
// `collbench run ... --overlap LOAD` writes carry `overlap.efficiency` (docs/overlap.md); one of
// them serves a phase kind's efficiency by the match rule below. Pure: the caller reads the file.
#pragma once

#include <string>
#include <vector>

#include "collbench/record/jsonl.hpp"

namespace collbench::step {

// The collectives whose overlap records may serve a phase kind ("tp", "ep", "pp", "dp"), in the
// order they are preferred; empty for an unknown kind.
const std::vector<std::string>& overlap_collectives(const std::string& kind);

struct OverlapPick {
  double efficiency = 0.0;  // clamped to [0, 1]
  std::string detail;       // which record served it, and the value as measured
};

// The first collective of overlap_collectives(kind) with an ok record holding a numeric
// overlap.efficiency; of its records the largest bytes (the step's messages are large), the first
// in the file at equal bytes. InputError naming the file, the kind and the accepted collectives
// when none is usable.
OverlapPick overlap_from_records(const std::string& kind, const record::ResultFile& file);

}  // namespace collbench::step
