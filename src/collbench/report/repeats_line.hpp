// The console and report line under a case measured with --repeats k: each repeat's median, the
// spread between repeats next to the within-run interval (docs/measurement.md "Repeats").
#pragma once

#include <string>

#include "collbench/record/record.hpp"

namespace collbench::report {

// "#   repeats 3: ..." and a newline; empty for a record without repeats.
std::string repeats_line(const record::CaseRecord& r);

}  // namespace collbench::report
