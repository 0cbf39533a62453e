// `collbench completion bash` and `collbench man`: the shell completion script and the man page,
// generated from this binary's own command tree (cli_docs.hpp). No MPI, no files read.
#include <cstdio>
#include <memory>
#include <string>

#include "cli/cli_docs.hpp"
#include "cli/subcommand.hpp"
#include "collbench/core/error.hpp"

namespace collbench::cli {
namespace {

const CLI::App& root_of(const CLI::App& app) {
  const CLI::App* a = &app;
  while (a->get_parent() != nullptr) a = a->get_parent();
  return *a;
}

Action setup_completion(CLI::App& app) {
  auto shell = std::make_shared<std::string>();
  app.add_option("shell", *shell, "Shell to write the script for: bash")->required();
  app.footer(
      "Examples:\n"
      "  source <(collbench completion bash)                                   # this shell only\n"
      "  collbench completion bash > ~/.local/share/bash-completion/completions/collbench");
  const CLI::App* self = &app;
  return [shell, self]() -> int {
    if (*shell != "bash") throw InputError(unknown_name_message("shell", *shell, {"bash"}));
    std::fputs(bash_completion(root_of(*self)).c_str(), stdout);
    return 0;
  };
}

Action setup_man(CLI::App& app) {
  app.footer(
      "Examples:\n"
      "  collbench man | man -l -\n"
      "  collbench man > /usr/local/share/man/man1/collbench.1");
  const CLI::App* self = &app;
  return [self]() -> int {
    std::fputs(man_page(root_of(*self)).c_str(), stdout);
    return 0;
  };
}

}  // namespace

CB_REGISTER_SUBCOMMAND(Subcommand{"completion", "Print a shell completion script (bash)", 90, &setup_completion});
CB_REGISTER_SUBCOMMAND(Subcommand{"man", "Print the man page (roff), generated from these definitions", 91, &setup_man});

}  // namespace collbench::cli
