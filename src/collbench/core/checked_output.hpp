// Checked output (issue 20 item 2): every write and every close is checked, standard output
// included, so a full disk or /dev/full is an error naming the path (exit 3) instead of an
// empty or lost file and exit 0. A path that cannot be opened for writing (a directory, a
// missing folder, no permission) is bad input (exit 2): nothing has been written then.
#pragma once

#include <string>
#include <string_view>

#include "collbench/core/error.hpp"

namespace collbench {

// A write or close that failed after the output was opened: exit 3 (docs/errors.md).
class OutputError : public Error {
 public:
  explicit OutputError(const std::string& what) : Error(ExitCode::aborted, what) {}
};

// Writes TEXT to PATH (truncating it). `what` prefixes messages ("--json", "--out"); empty: none.
// InputError when PATH cannot be opened; OutputError when a write or the close fails.
void write_file_checked(const std::string& path, std::string_view text, std::string_view what = {});

// The same through PATH.tmp and a rename, so a reader never sees a half-written file; the
// temporary is removed when a write fails.
void write_file_atomic_checked(const std::string& path, std::string_view text, std::string_view what = {});

// Writes TEXT to standard output and flushes it; OutputError naming where stdout goes.
void write_stdout(std::string_view text);

// Flushes standard output and checks that no write to it failed (main calls it after every
// subcommand); OutputError naming where stdout goes.
void check_stdout();

// "standard output (/dev/full)": where file descriptor 1 points, for messages.
std::string stdout_name();

}  // namespace collbench
