// Comparison tables: one console block per compared value, and CSV (compare/compare.hpp computes them).
#pragma once

#include <string>

#include "collbench/compare/compare.hpp"

namespace collbench::report {

// Console table (one block per compared value) and CSV.
std::string render_comparison_table(const compare::Comparison& c);
std::string render_comparison_csv(const compare::Comparison& c);

}  // namespace collbench::report
