// Internal to the acceptance judge (judge.cpp): a row's verdict from its thresholds, or from its
// failures and waivers. Not an interface of the layer.
#pragma once

#include <string>
#include <vector>

#include "collbench/accept/judge.hpp"

namespace collbench::accept {

// The row's verdict and reason: waived (or failed, when the check requires its algorithm) with a
// waiver, failed with failures, else judged on the thresholds of `check` (row.limits); a failed
// row's reason ends with its evidence.
void set_verdict(Row& row, const Check& check, const std::vector<std::string>& failures,
                 const std::vector<std::string>& waivers);

}  // namespace collbench::accept
