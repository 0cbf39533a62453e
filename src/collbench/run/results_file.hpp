// The runner's results file: opened on rank 0 with the --resume/--force rules (every rank agrees
// on the outcome), the run header with its provenance, and the configuration a --resume compares.
#pragma once

#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <string>

#include "collbench/backend/backend.hpp"
#include "collbench/model/system_profile.hpp"
#include "collbench/record/jsonl.hpp"
#include "collbench/record/record.hpp"
#include "collbench/run/session.hpp"

namespace collbench::run {

// Runs f on rank 0; if it throws a collbench Error, every rank throws the same error.
template <class F>
void on_root_agreed(const Control& control, F&& f) {
  std::string message;
  int code = 0;
  if (control.rank() == 0) {
    try {
      f();
    } catch (const Error& e) {
      message = e.what();
      code = static_cast<int>(e.code());
    }
  }
  MPI_Bcast(&code, 1, MPI_INT, 0, control.comm());
  message = control.broadcast_string(message);
  if (code == static_cast<int>(ExitCode::bad_input)) throw InputError(message);
  if (code != 0) throw Error(static_cast<ExitCode>(code), message);
}

// What differs between the configuration stored in a results file and the one about to run,
// in words, for the --resume refusal ("domain_sizes [2] vs [1,1]; case 3: bytes 4096 vs 8192").
std::string describe_config_difference(const nlohmann::json& stored, const nlohmann::json& now);

// The results file of a run (rank 0), and what a resumed file already holds.
struct ResultsFile {
  std::unique_ptr<record::JsonlWriter> writer;  // null without --out, and on other ranks
  std::set<std::string> done_keys;              // case keys already in the file (--resume)
  bool has_header = false;                      // --resume of a file that already starts with its run header
  int failed_before = 0;                        // cases of this sweep the file already holds as failed
};

// Opens `out_path` on rank 0 in `mode`; a --resume of a file written by another configuration
// or other injected faults (`fault`: COLLBENCH_FAULT now, empty when none), or with cases and
// no header, is an InputError on every rank.
ResultsFile open_results_file(const Control& control, const std::optional<std::string>& out_path, record::OpenMode mode,
                              const nlohmann::json& config, const std::string& fault = {});

// Why a --resume must not mix the file's injected faults with today's, or nullopt when they agree.
std::optional<std::string> fault_difference(const std::optional<std::string>& stored, const std::string& now);

// What the run header records beyond the backends' provenance.
struct HeaderFacts {
  std::string run_id;
  std::vector<std::string> argv;
  nlohmann::json config;
  const ProcessInfo* info = nullptr;
  const model::SystemProfile* system = nullptr;  // null: no bounds
  std::optional<std::string> fault;              // the injected faults, when any
  nlohmann::json simulated;                      // null for a measured run
};

// The run header (rank 0): tool, launcher and hosts, library versions and per-rank devices from
// the backends' provenance (the first backend that names one), environment, system profile.
record::RunHeader make_run_header(const HeaderFacts& facts, const std::vector<const backend::Backend*>& backends);

}  // namespace collbench::run
