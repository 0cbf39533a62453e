// Results files as reports read them: every record with its line, so that a bad file is named
// with its line (exit code 2). Pure C++ (no MPI, no GPU).
#pragma once

#include <cstddef>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "collbench/record/record.hpp"

namespace collbench::record {

// One results file as reports read it.
struct InputFile {
  std::string path;
  std::optional<RunHeader> header;
  int header_line = 0;
  std::vector<CaseRecord> cases;
  std::vector<int> case_lines;  // 1-based line of cases[i] in the file
  std::vector<std::string> warnings;
};

// Reads a JSONL results file. A malformed line, a record of another schema or a record missing
// keys is an InputError "PATH:LINE: ..."; a truncated last line is skipped with a warning.
InputFile load_input(const std::string& path);

// The same, over text already in memory (`path` names it in messages).
InputFile parse_input(std::string_view text, const std::string& path);

// Reading a results file for a report in one pass (issue 37 item 8): the cases arrive in
// batches and the caller keeps what it needs of them, so that a report over a million records
// never holds the file's text, its parsed lines or all of its records at once.
// Reads the results file at PATH as load_input does, with the same errors and warnings, and
// hands its cases to `on_cases` in file order, at most `batch` at a time: in file.cases and
// file.case_lines, which are emptied after each call. Returns the file's path, header, header
// line and warnings, with no cases. The lines are parsed on `workers` threads (0: one per
// hardware thread; record/line_batches.hpp), `on_cases` is called on the calling thread.
InputFile stream_input(const std::string& path, std::size_t batch, const std::function<void(InputFile&)>& on_cases,
                       unsigned workers = 0);

}  // namespace collbench::record
