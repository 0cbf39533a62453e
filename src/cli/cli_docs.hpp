// Documentation generated from the CLI11 command tree, so it cannot drift from the parser: the
// bash completion script (`collbench completion bash`), the man page (`collbench man`, installed
// as share/man/man1/collbench.1), and the "unknown option, did you mean" message.
#pragma once

#include <CLI/CLI.hpp>
#include <string>
#include <vector>

namespace collbench::cli {

// Every subcommand of `app` (parsed or not), in the order they were added.
std::vector<const CLI::App*> all_subcommands(const CLI::App& app);

// "collbench report weak-scaling"
std::string command_path(const CLI::App& app);

// "--iters", "-n", ... of one command (positionals excluded), help and version included.
std::vector<std::string> option_names(const CLI::App& app);

// A bash completion script for the whole tree (subcommands, their options, file names where an
// option or positional takes a value).
std::string bash_completion(const CLI::App& root);

// The man page (roff, man(7) macros): synopsis, every command with its options and footer
// (examples), exit status, environment, files.
std::string man_page(const CLI::App& root);

// When `args` (argv without argv[0]) use an option that the command they belong to does not
// have, the message naming it, the command and the closest valid option; empty otherwise.
std::string unknown_option_message(const CLI::App& root, const std::vector<std::string>& args);

}  // namespace collbench::cli
