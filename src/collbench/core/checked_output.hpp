// Checked output (issue 20 item 2): every write and every close is checked, standard output
// included, so a full disk or /dev/full is an error naming the path (exit 3) instead of an
// empty or lost file and exit 0. A path that cannot be opened for writing (a directory, a
// missing folder, no permission) is bad input (exit 2): nothing has been written then.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "collbench/core/error.hpp"

namespace collbench {

// A write or close that failed after the output was opened: exit 3 (docs/errors.md).
class OutputError : public Error {
 public:
  explicit OutputError(const std::string& what) : Error(ExitCode::aborted, what) {}
};

// Writes TEXT to PATH. What PATH leads to decides how (issue 37 items 1 and 9):
//  - a regular file, or nothing yet: through TARGET.tmp.PID next to it, synced, then renamed over
//    it, so a reader never sees half a file and a failed write (a full disk) leaves what was there
//    before, or nothing: never an empty or partial file; a replaced file keeps its permissions;
//  - a symlink: followed to its final target, which is written by these rules (the link stays);
//  - a character or block device, a FIFO or a socket: opened and written in place, never replaced
//    (/dev/null stays /dev/null, /dev/full gives ENOSPC: exit 3);
//  - an open descriptor (descriptor_of: /dev/stdout, also behind a symlink): written through a
//    duplicate of it, whatever it leads to (`>> job.log` keeps the log's earlier lines);
//  - a directory: InputError.
// `what` prefixes messages ("--json", "--out"); empty: none. InputError when PATH cannot be opened
// or the temporary cannot be created (nothing was written); OutputError when a write, the sync or
// the close fails.
void write_file_checked(const std::string& path, std::string_view text, std::string_view what = {});

// The same (kept for the callers that want to say that they rely on the rename).
void write_file_atomic_checked(const std::string& path, std::string_view text, std::string_view what = {});

// Where writing PATH leads: its symlinks followed to the final target (which need not exist), but
// not past a path that names an open descriptor (/dev/stdout, /proc/self/fd/1): that one is kept.
std::string output_target(const std::string& path);

// The descriptor of this process that PATH names: /dev/stdout (1), /dev/stderr (2), or N of
// /dev/fd/N, /proc/self/fd/N, /proc/thread-self/fd/N, /proc/PID/fd/N however the folder is spelled;
// nullopt for anything else (/dev/stdin too: never an output). Such a path is a stream the caller
// already holds (a terminal, a pipe, a socket, or a log the shell writes): written through a
// duplicate of the descriptor, never reopened, truncated, replaced or refused as an existing file.
std::optional<int> descriptor_of(std::string_view path);
bool names_open_descriptor(std::string_view path);

// Notes the descriptors the process started with (main calls it first, before MPI opens its own):
// only those, and not sockets (a launcher's channel to its ranks), may be named as outputs above
// 2, so `--format csv=/dev/fd/7` cannot write into a descriptor of the MPI library.
void remember_inherited_descriptors();

// A duplicate (close-on-exec) of the descriptor PATH names, for writing; InputError when it is not
// one the process was given (remember_inherited_descriptors), not open, or open for reading only
// (`what` prefixes the message).
int duplicate_for_writing(std::string_view path, std::string_view what = {});

// Writes TEXT to standard output and flushes it; OutputError naming where stdout goes.
void write_stdout(std::string_view text);

// Flushes standard output and checks that no write to it failed (main calls it after every
// subcommand); OutputError naming where stdout goes.
void check_stdout();

// "standard output (/dev/full)": where file descriptor 1 points, for messages.
std::string stdout_name();

}  // namespace collbench
