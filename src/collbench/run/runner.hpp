// Runs a planned sweep under MPI: resolves placement and progress, starts the backends, creates
// each communicator set at its first case and releases it after its last, measures every case, and hands each finished
// record to the sinks (JSONL file, console table/CSV/JSONL) on rank 0 as soon as it exists.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "collbench/backend/comm_tally.hpp"
#include "collbench/plan/sweep.hpp"
#include "collbench/record/jsonl.hpp"
#include "collbench/record/record.hpp"
#include "collbench/report/console_writer.hpp"
#include "collbench/run/device_verify.hpp"
#include "collbench/run/session.hpp"

namespace collbench::run {

class Watchdog;

struct RunnerOptions {
  std::string progress = "auto";  // auto | spin | yield
  PlacementOptions placement;
  std::optional<std::string> out_path;  // JSONL results file
  record::OpenMode out_mode = record::OpenMode::create;
  // --format: where the records go as they finish, each target in its format (table | jsonl | csv |
  // none; report/console_writer.hpp), and --layout.
  std::vector<report::OutputTarget> outputs{report::OutputTarget{"table"}};
  report::ConsoleOptions console;
  std::vector<std::string> argv;
  std::size_t max_samples_kept = 10000;
  bool show_progress = true;  // progress line on stderr when it is a terminal
  double timeout_s = 0.0;     // --timeout per collective/barrier; 0 = default_timeout_s(bytes)
  bool watchdog = true;
  // A watchdog the caller holds across several runs (accept's placement groups, locate's
  // phases), used instead of one per run, so that a stop signal between two runs is still
  // reported and ends the job with exit 3 (MPI_Abort) instead of one rank's _exit, whose exit
  // code the launcher may replace with the signal it kills the other ranks with. Not owned.
  Watchdog* shared_watchdog = nullptr;
  // Measure a case whose key repeats an earlier one of this run (accept's repetitions, locate's
  // bisection steps: repeating is the point, and their records are judged, not gated). Off for
  // run and sweep: one record per case key, or gate would refuse the file.
  bool measure_repeats = false;
  // --repeats k: every case measured k times, in k passes over the cases (case A, case B, ...,
  // then A again), each pass on freshly duplicated communicators and every repeat on freshly
  // allocated buffers; one record per case, written after its last repeat (docs/measurement.md
  // "Repeats"). 1: measured once, records as before.
  int repeats = 1;
  // --verify: where each case's input is written and its result checked (run/device_verify.hpp).
  VerifyMode verify = VerifyMode::automatic;
};

struct RunSummary {
  int cases_run = 0;
  int cases_skipped = 0;  // already in the file (--resume)
  int cases_failed = 0;   // wrong elements or failed status
  int cases_waived = 0;
  backend::CommCounts communicators;        // created, and the most alive at once (this rank's)
  std::vector<record::CaseRecord> records;  // rank 0
};

class Runner {
 public:
  explicit Runner(RunnerOptions options);
  // Collective over all ranks. Throws InputError (same on every rank) on bad input.
  RunSummary run(const plan::Sweep& sweep);

 private:
  RunnerOptions options_;
};

// The resolved configuration stored in the run header (and compared by --resume).
nlohmann::json sweep_config_json(const plan::Sweep& sweep, const Placement& placement, const std::string& progress);

}  // namespace collbench::run
