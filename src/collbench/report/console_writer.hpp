// The console output of run and sweep (--format, --layout): one writer per run, fed each record
// as it finishes; each call returns the text to print now. A registry of writers by name, so the
// runner holds no switch over formats. Writers only render: every number they print is a field
// of the run header or of a record.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "collbench/record/record.hpp"

namespace collbench::report {

class ConsoleWriter {
 public:
  virtual ~ConsoleWriter() = default;
  // Before the first case (CSV: its header line; nccl-tests layout: the run's devices).
  virtual std::string begin(const record::RunHeader& header) = 0;
  // One finished case. A writer may hold a row back (nccl-tests layout: an out-of-place case
  // waits for its in-place twin to print them side by side).
  virtual std::string add(const record::CaseRecord& r) = 0;
  // After the last case: what is still held back and the closing lines; `records` are every
  // record of the run, in order.
  virtual std::string end(const std::vector<record::CaseRecord>& records) = 0;
};

// Writers by name: table (collbench's layout), nccl-tests (--layout nccl-tests), nccl-tests-i
// (the same with the per-iteration columns, nccl-tests -I 1), jsonl, csv, none.
// InputError naming the accepted names for another.
std::unique_ptr<ConsoleWriter> make_console_writer(std::string_view name);
std::vector<std::string> console_writer_names();

}  // namespace collbench::report
