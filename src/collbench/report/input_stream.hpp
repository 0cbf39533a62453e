// Reading a results file for a report in one pass (issue 37 item 8): the cases arrive in
// batches and the caller keeps what it needs of them, so that a report over a million records
// never holds the file's text, its parsed lines or all of its records at once.
#pragma once

#include <cstddef>
#include <functional>
#include <string>

#include "collbench/report/compare.hpp"

namespace collbench::report {

// Reads the results file at PATH as load_input does, with the same errors and warnings, and
// hands its cases to `on_cases` in file order, at most `batch` at a time: in file.cases and
// file.case_lines, which are emptied after each call. Returns the file's path, header, header
// line and warnings, with no cases.
InputFile stream_input(const std::string& path, std::size_t batch, const std::function<void(InputFile&)>& on_cases);

}  // namespace collbench::report
