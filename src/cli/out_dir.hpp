// Output folders of the measuring report commands (accept, locate): checked before anything
// runs (every rank agrees on the outcome), written file by file through a temporary name and a
// rename, so a reader never sees a half-written verdict.
#pragma once

#include <string>
#include <vector>

#include "collbench/run/session.hpp"

namespace collbench::cli {

// Creates DIR when missing. An existing DIR holding any of `ours` (file names or prefixes
// ending in '*') is an InputError unless `force`, which removes them first. Collective: rank 0
// decides and every rank throws the same InputError.
void prepare_out_dir(const run::Control& control, const std::string& dir, bool force,
                     const std::vector<std::string>& ours);

// Writes `text` to PATH.tmp and renames it to PATH: InputError naming PATH when it cannot be
// opened, OutputError (exit 3) when a write or the close fails (core/checked_output.hpp).
void write_file_atomic(const std::string& path, const std::string& text);

}  // namespace collbench::cli
