// Subcommand registry: each src/cli/cmd_*.cpp registers itself with CB_REGISTER_SUBCOMMAND, so
// adding a subcommand is one new file (no switch, no edit of main.cpp). The CLI sources are
// compiled straight into the executable, so static registration is never dropped by the linker.
#pragma once

#include <CLI/CLI.hpp>
#include <functional>
#include <string>
#include <utility>
#include <vector>

namespace collbench::cli {

// Called once the command line is parsed; returns the process exit code.
using Action = std::function<int()>;

struct Subcommand {
  Subcommand(std::string name_, std::string description_, int order_, std::function<Action(CLI::App& app)> setup_,
             bool needs_mpi_ = false, std::string stop_outcome_ = {})
      : name(std::move(name_)),
        description(std::move(description_)),
        order(order_),
        setup(std::move(setup_)),
        needs_mpi(needs_mpi_),
        stop_outcome(std::move(stop_outcome_)) {}

  std::string name;
  std::string description;
  int order;  // position in --help
  // Declares options on `app` (already created with name and description) and returns the
  // action to run when this subcommand is chosen.
  std::function<Action(CLI::App& app)> setup;
  bool needs_mpi = false;  // main initialises MPI before the action (run under mpiexec)
  // What the job leaves when a signal or a dead rank stops it (run/signals.hpp); empty: run's
  // ("... --resume measures the rest").
  std::string stop_outcome;
};

std::vector<Subcommand>& subcommand_registry();

struct SubcommandRegistrar {
  explicit SubcommandRegistrar(Subcommand sub) { subcommand_registry().push_back(std::move(sub)); }
};

}  // namespace collbench::cli

#define CB_CLI_CONCAT2(a, b) a##b
#define CB_CLI_CONCAT(a, b) CB_CLI_CONCAT2(a, b)
#define CB_REGISTER_SUBCOMMAND(...)                                                               \
  static const ::collbench::cli::SubcommandRegistrar CB_CLI_CONCAT(cb_subcommand_, __COUNTER__) { \
    __VA_ARGS__                                                                                   \
  }
