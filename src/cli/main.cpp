// collbench entry point: builds the subcommand tree from the registry, initialises MPI only for
// subcommands that measure, and maps errors to the exit codes of docs/interfaces.md section 4.
#include <fmt/format.h>

#include <algorithm>
#include <cstdio>
#include <memory>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include "cli/cli_docs.hpp"
#include "cli/common_options.hpp"
#include "cli/subcommand.hpp"
#include "collbench/backend/mpi/mpi_backend.hpp"
#include "collbench/core/build_info.hpp"
#include "collbench/core/checked_output.hpp"
#include "collbench/core/error.hpp"
#include "collbench/core/git_sha.hpp"
#include "collbench/model/system_profile.hpp"
#include "collbench/run/session.hpp"

namespace collbench::cli {

std::vector<Subcommand>& subcommand_registry() {
  static std::vector<Subcommand> registry;
  return registry;
}

}  // namespace collbench::cli

namespace {

void print_error(const std::string& message) {
  if (collbench::run::world_rank() == 0) std::fprintf(stderr, "collbench: error: %s\n", message.c_str());
}

// `collbench --version`: what was built, from which sources, against which libraries. The MPI
// library's own version string is asked at run time (MPI_Get_library_version may be called
// before MPI_Init, MPI-3.1 section 8.1.1), so a binary started against another libmpi shows it.
std::string version_text() {
  using namespace collbench;
  std::string mpi_runtime = backend::mpi_library_version();
  std::replace(mpi_runtime.begin(), mpi_runtime.end(), '\t', ' ');
  // First line as before (scripts parse it): version, git sha, the backends compiled in.
  std::string out =
      fmt::format("collbench {} (git {}; backends: {})\nbuild: {}\nlibraries:\n", build::kVersion, build::git_sha(),
                  build::kBackends, *build::kBuildType != '\0' ? build::kBuildType : "default");
  out +=
      fmt::format("  mpi   {} (built with the {} wrapper {})\n", mpi_runtime, build::kMpiFlavor, build::kMpiCompiler);
  const auto backends = build::backends_built();
  if (std::find(backends.begin(), backends.end(), "nccl") != backends.end()) {
    out += fmt::format(
        "  nccl  NCCL {}, CUDA toolkit {} (headers at build time; each run header records the versions "
        "that ran)\n",
        build::kNcclVersion, build::kCudaVersion);
  } else {
    out += "  nccl  not built (CPU-only build: no CUDA toolkit and NCCL found, or COLLBENCH_WITH_CUDA=OFF)\n";
  }
  const auto profile_dirs = model::system_profile_search_dirs();
  out += fmt::format("profiles: {}", profile_dirs.empty() ? std::string("none found") : join(profile_dirs));
  return out;
}

}  // namespace

namespace {

using namespace collbench;

// CLI11's parse: the exit code of a help, version or parse error (message printed), or nullopt to
// go on and run the subcommand.
std::optional<int> parse_arguments(CLI::App& app, int argc, char** argv) {
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    // An option the command does not have: name it, the command, and the closest valid option.
    const std::string unknown = cli::unknown_option_message(app, std::vector<std::string>(argv + 1, argv + argc));
    print_error(unknown.empty() ? fmt::format("{} (run 'collbench --help' or 'collbench <command> --help')", e.what())
                                : unknown);
    return static_cast<int>(ExitCode::bad_input);
  } catch (const Error& e) {
    print_error(e.what());
    return static_cast<int>(e.code());
  }
  return std::nullopt;
}

// How long the ranks of an input error wait for each other to find that every rank found it
// (MpiSession::every_rank_arrives): generous for ranks that reach the same check at different
// times, short beside a job that would otherwise wait forever.
constexpr double kInputErrorAgreement_s = 10.0;
constexpr double kInputErrorLate_s = 1.0;  // then this rank's message goes out before the wait ends

// Input errors are mostly found by every rank alike (the same flags and files, or agreed through
// rank 0): one message, and an orderly exit on every rank. One found by this rank alone (its own
// environment, a library missing on its node) leaves the others waiting in a collective: this
// rank names itself (after a second, before a short --timeout's watchdog ends the job) and ends
// the job, still with exit 2 (docs/errors.md, "An input error on one rank only").
// Called after the catch block, with the error's text copied: under SimGrid the ranks are
// contexts of one thread, and the MPI calls here switch to others, whose exception handling
// would free a caught exception still in use.
int exit_on_input_error(run::MpiSession* session, const std::string& message) {
  constexpr int kCode = static_cast<int>(ExitCode::bad_input);
  const std::string mine = fmt::format("collbench: error (rank {}): {}\n", run::world_rank(), message);
  bool told = false;
  const auto tell = [&] {
    told = true;
    std::fputs(mine.c_str(), stderr);
    std::fflush(stderr);
  };
  if (session == nullptr || session->every_rank_arrives(kInputErrorAgreement_s, kInputErrorLate_s, tell)) {
    if (!told) print_error(message);
    return kCode;
  }
  if (!told) tell();
  run::abort_job(kCode);
}

// Runs the parsed subcommand (inside an MPI session when it needs one); every way out keeps the
// exit-code contract (docs/errors.md).
int run_subcommand(const cli::Subcommand& sub, const cli::Action& action, int& argc, char**& argv) {
  std::unique_ptr<run::MpiSession> session;
  std::optional<std::string> input_error;  // handled after the catch (exit_on_input_error)
  try {
    if (sub.needs_mpi) {
      run::set_stop_outcome(sub.stop_outcome.empty() ? std::string(run::kRunStopOutcome) : sub.stop_outcome);
      session = std::make_unique<run::MpiSession>(&argc, &argv);
    }
    const int code = action();
    check_stdout();  // a full disk or /dev/full under `> file` is exit 3, not a lost output
    return code;
  } catch (const std::bad_alloc&) {
    // Buffers are checked against the memory available before anything is allocated
    // (run::check_memory); this is what is left: a library or the heap running out.
    std::fprintf(stderr,
                 "collbench: error (rank %d): out of memory: an allocation failed; use smaller sizes (-e, "
                 "--tokens) or fewer ranks per node\n",
                 collbench::run::world_rank());
    if (session) run::abort_job(static_cast<int>(ExitCode::bad_input));
    return static_cast<int>(ExitCode::bad_input);
  } catch (const Error& e) {
    if (e.code() != ExitCode::bad_input) {
      // A run-time failure may be local to this rank: abort the job so no rank waits forever.
      std::fprintf(stderr, "collbench: error (rank %d): %s\n", collbench::run::world_rank(), e.what());
      if (session) run::abort_job(static_cast<int>(e.code()));
      return static_cast<int>(e.code());
    }
    input_error = e.what();
  } catch (const std::exception& e) {
    std::fprintf(stderr, "collbench: internal error (rank %d): %s\n", collbench::run::world_rank(), e.what());
    if (session) run::abort_job(static_cast<int>(ExitCode::aborted));
    return static_cast<int>(ExitCode::aborted);
  }
  return exit_on_input_error(session.get(), *input_error);
}

}  // namespace

int main(int argc, char** argv) {
  using namespace collbench;
  remember_inherited_descriptors();  // before MPI opens descriptors of its own
  cli::process_argv().assign(argv, argv + argc);
  CLI::App app{"collbench: collective-communication benchmarks for GPU clusters (MPI on CPU, NCCL on GPU)"};
  app.require_subcommand(1);
  app.set_version_flag("--version", version_text,
                       "Print the version, git sha and the backends built (with which libraries)");
  app.footer(
      "Exit codes: 0 ok, 1 a check failed, 2 bad input, 3 aborted, 4 nothing comparable.\n"
      "Examples:\n"
      "  mpiexec -n 2 collbench run allreduce -b 8 -e 128M -f 2\n"
      "  srun --mpi=pmix -N 18 --ntasks-per-node=4 collbench run alltoall -b 1M -e 1G --ranks-per-domain 72\n"
      "  mpiexec -n 4 collbench sweep profiles/sweeps/cpu-smoke.yaml --out results/smoke.jsonl\n"
      "  collbench model alltoall --system gb300-nvl72 --ranks 256,512,1024 --ranks-per-domain 72");

  auto& registry = cli::subcommand_registry();
  std::sort(registry.begin(), registry.end(),
            [](const auto& a, const auto& b) { return std::tie(a.order, a.name) < std::tie(b.order, b.name); });
  std::vector<CLI::App*> subs;
  std::vector<cli::Action> actions(registry.size());
  for (std::size_t i = 0; i < registry.size(); ++i) {
    subs.push_back(app.add_subcommand(registry[i].name, registry[i].description));
    actions[i] = registry[i].setup(*subs.back());
  }

  // An unknown first word gets the list of subcommands and a suggestion, not CLI11's generic text.
  if (argc > 1 && argv[1][0] != '-') {
    std::vector<std::string> names;
    for (const auto& sub : registry) names.push_back(sub.name);
    if (std::find(names.begin(), names.end(), argv[1]) == names.end()) {
      print_error(unknown_name_message("command", argv[1], names));
      return static_cast<int>(ExitCode::bad_input);
    }
  }
  if (const auto code = parse_arguments(app, argc, argv)) return *code;
  for (std::size_t i = 0; i < subs.size(); ++i) {
    if (subs[i]->parsed()) return run_subcommand(registry[i], actions[i], argc, argv);
  }
  return static_cast<int>(ExitCode::bad_input);
}
