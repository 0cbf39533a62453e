// Subcommands that judge or analyse on rank 0 alone (accept, locate): rank 0's exit code, and
// its error if it threw, on every rank, so that every rank leaves with the same code
// (docs/errors.md) and none waits for a rank that failed.
#pragma once

#include <functional>

#include "collbench/run/session.hpp"

namespace collbench::cli {

// Runs `on_root` on rank 0 and broadcasts what came of it: its return value, or the code of the
// Error it threw (another exception: aborted, "internal error: ..."), which every rank then throws.
int agreed_code(const run::Control& control, const std::function<int()>& on_root);

}  // namespace collbench::cli
