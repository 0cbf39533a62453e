// `collbench completion bash` and `collbench man`: the shell completion script and the man page,
// generated from this binary's own command tree (cli_docs.hpp). No MPI. The completion script
// also completes names: collectives (run, model), system profiles (--system), workload profiles
// (--workload) and acceptance profiles (accept), which it asks this binary for at completion time
// (`collbench completion --names KIND`, reading only the profile folders), so profiles a user adds
// on COLLBENCH_PROFILE_PATH complete too.
#include <array>
#include <cstdio>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "cli/cli_docs.hpp"
#include "cli/subcommand.hpp"
#include "collbench/accept/profile.hpp"
#include "collbench/core/collective_facts.hpp"
#include "collbench/core/error.hpp"
#include "collbench/model/system_profile.hpp"
#include "collbench/workload/profile.hpp"

namespace collbench::cli {
namespace {

const CLI::App& root_of(const CLI::App& app) {
  const CLI::App* a = &app;
  while (a->get_parent() != nullptr) a = a->get_parent();
  return *a;
}

std::vector<std::string> collective_names() {
  std::vector<std::string> names;
  for (const auto& f : all_collective_facts()) names.emplace_back(f.name);
  return names;
}

// The kinds of names the completion script asks for.
struct NameKind {
  std::string_view kind;
  std::vector<std::string> (*list)();
};
constexpr std::array<NameKind, 4> kNameKinds{{{"collectives", &collective_names},
                                              {"systems", &model::list_system_profiles},
                                              {"workloads", &workload::list_workload_profiles},
                                              {"acceptance", &accept::list_acceptance_profiles}}};

int print_names(const std::string& kind) {
  for (const auto& k : kNameKinds) {
    if (k.kind != kind) continue;
    for (const auto& name : k.list()) std::printf("%s\n", name.c_str());
    return 0;
  }
  std::vector<std::string> accepted;
  for (const auto& k : kNameKinds) accepted.emplace_back(k.kind);
  throw InputError(unknown_name_message("--names kind", kind, accepted));
}

// Wraps the generated _collbench: a name after --system or --workload, the collective of run and
// model, the profile of accept; everything else as _collbench completes it.
constexpr const char* kNameCompletion = R"(
# Names: collectives, system, workload and acceptance profiles, from this binary at completion time.
_collbench_names() {
  local cur="${COMP_WORDS[COMP_CWORD]}" prev="${COMP_WORDS[COMP_CWORD-1]}" kind=""
  case "$prev" in
    --system) kind=systems ;;
    --workload) kind=workloads ;;
  esac
  if [[ -z $kind && $COMP_CWORD -eq 2 && $cur != -* ]]; then
    case "${COMP_WORDS[1]}" in
      run | model) kind=collectives ;;
      accept) kind=acceptance ;;
    esac
  fi
  if [[ -z $kind ]]; then
    _collbench
    return 0
  fi
  local names
  names=$("${COMP_WORDS[0]}" completion --names "$kind" 2>/dev/null)
  COMPREPLY=($(compgen -W "$names" -- "$cur"))
  if [[ $kind != collectives ]]; then COMPREPLY+=($(compgen -f -- "$cur")); fi  # a YAML path works too
  return 0
}
complete -o filenames -F _collbench_names collbench
)";

Action setup_completion(CLI::App& app) {
  auto shell = std::make_shared<std::string>();
  auto names = std::make_shared<std::optional<std::string>>();
  app.add_option("shell", *shell, "Shell to write the script for: bash");
  app.add_option("--names", *names,
                 "Print the names the script completes, one per line: collectives, systems, workloads, acceptance");
  app.footer(
      "Examples:\n"
      "  source <(collbench completion bash)                                   # this shell only\n"
      "  collbench completion bash > ~/.local/share/bash-completion/completions/collbench\n"
      "  collbench completion --names systems");
  const CLI::App* self = &app;
  return [shell, names, self]() -> int {
    if (*names) return print_names(**names);
    if (shell->empty()) throw InputError("completion: name the shell (accepted: bash), or pass --names KIND");
    if (*shell != "bash") throw InputError(unknown_name_message("shell", *shell, {"bash"}));
    std::fputs((bash_completion(root_of(*self)) + kNameCompletion).c_str(), stdout);
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
CB_REGISTER_SUBCOMMAND(Subcommand{"man", "Print the man page (roff), generated from these definitions", 91,
                                  &setup_man});

}  // namespace collbench::cli
