// The console output of run and sweep (--format, --layout): one writer per target, fed each record
// as it finishes; each call returns the text to write now. A registry of writers by name, so the
// runner holds no switch over formats, and a multiplex that feeds several at once (a table on the
// console and CSV to a file; writer.hpp has the same for the other subcommands). Writers only
// render: every number they print is a field of the run header or of a record.
#pragma once

#include <cstdio>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "collbench/record/record.hpp"
#include "collbench/report/writer.hpp"

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
  // A writer that never writes anything (none).
  [[nodiscard]] virtual bool silent() const { return false; }
};

// What --layout asks of the writers that take a layout (table).
struct ConsoleOptions {
  std::string layout = "collbench";    // for messages
  bool nccl_tests_layout = false;      // --layout nccl-tests: nccl-tests' table
  bool per_iteration_columns = false;  // nccl-tests -I 1: i_min i_max i_p99 i_cv%
};

// Writers by name: table (collbench's layout or, with options.nccl_tests_layout, nccl-tests'),
// jsonl, csv, none. InputError naming the accepted names for another.
std::unique_ptr<ConsoleWriter> make_console_writer(std::string_view name, const ConsoleOptions& options = {});
std::vector<std::string> console_writer_names();
// Whether the writer registered as `name` takes a --layout (table).
bool console_writer_takes_layout(std::string_view name);
// Whether it writes nothing at all (none): such a target claims no output.
bool console_writer_is_silent(std::string_view name);

// InputError when options.nccl_tests_layout is set and no target takes a layout (the multiplex's
// constructor checks the same; the command line checks it first, on every rank).
void check_console_targets(const std::vector<OutputTarget>& targets, const ConsoleOptions& options);

// One console writer per target, fed the same header and records; each text is written to its
// target as it comes: standard output through write_stdout (a failed write ends the run, exit 3),
// a file opened by begin() (after every input has been checked) and flushed after each write.
class ConsoleMultiplex {
 public:
  ConsoleMultiplex() = default;  // no target: writes nothing (the ranks other than 0)
  ConsoleMultiplex(const std::vector<OutputTarget>& targets, const ConsoleOptions& options);

  void begin(const record::RunHeader& header);
  void add(const record::CaseRecord& r);
  void end(const std::vector<record::CaseRecord>& records);
  // Every writer is silent (or there is none).
  [[nodiscard]] bool silent() const;

 private:
  struct CloseFile {
    void operator()(std::FILE* f) const;
  };
  struct Entry {
    std::unique_ptr<ConsoleWriter> writer;
    OutputTarget target;
    std::unique_ptr<std::FILE, CloseFile> file;  // a file target, from begin() to end()
  };
  static void write(Entry& e, const std::string& text);
  std::vector<Entry> entries_;
};

}  // namespace collbench::report
