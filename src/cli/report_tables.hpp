// The case tables of `collbench report FILES` when they need no comparison and no --html page:
// read and rendered in one pass over each file (report/tables_stream.hpp), so that memory grows
// with the tables' text, not with the records (issue 37 item 8; docs/performance.md section 9).
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "collbench/model/system_profile.hpp"
#include "collbench/report/placement_model.hpp"

namespace collbench::cli {

// Prints the tables of `paths` in `format` (table, markdown or csv) to stdout once every file is
// read (a bad file prints nothing there), each file's reader warnings to stderr after it; records
// without a placement or a model get them from `domains` and `system` as place_and_model gives.
// 0, or the InputError of the first bad file.
int print_streamed_tables(const std::vector<std::string>& paths, std::string_view format,
                          const report::DomainChoice& domains, const model::SystemProfile* system);

}  // namespace collbench::cli
