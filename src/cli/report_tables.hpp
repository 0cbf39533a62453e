// The case tables of `collbench report FILES` when they need no comparison and no HTML page:
// read and rendered in one pass over each file (report/tables_stream.hpp), so that memory grows
// with the tables' text, not with the records (issue 37 item 8; docs/performance.md section 9).
#pragma once

#include <string>
#include <vector>

#include "collbench/model/placement_model.hpp"
#include "collbench/model/system_profile.hpp"
#include "collbench/report/writer.hpp"

namespace collbench::cli {

// Whether every target's format has a streamed renderer (table, markdown, csv; none writes
// nothing): then print_streamed_tables gives what cases_writers() would, byte for byte.
[[nodiscard]] bool tables_can_stream(const std::vector<report::OutputTarget>& targets);

// Writes the tables of `paths` to each target in its format once every file is read (a bad file
// writes nothing), each file's reader warnings to stderr after it; records without a placement
// or a model get them from `domains` and `system` as place_and_model gives. 0, or the InputError
// of the first bad file. Needs tables_can_stream(targets).
int print_streamed_tables(const std::vector<std::string>& paths, const std::vector<report::OutputTarget>& targets,
                          const model::DomainChoice& domains, const model::SystemProfile* system);

}  // namespace collbench::cli
