// The parsers collbench exposes to user input, as fuzz entry points: each function feeds one
// input to one parser and returns normally when the parser accepted it or rejected it with an
// InputError (exit code 2). Anything else (another exception, a crash, undefined behaviour
// under the sanitizers, a hang) is a bug. Shared by the libFuzzer targets (tests/fuzz/*.cpp,
// CMake option COLLBENCH_FUZZ, scripts/fuzz) and by the corpus regression unit test
// (tests/unit/test_fuzz_corpus.cpp), which replays every file of tests/fuzz/corpus/ in the
// normal build. Pure C++; no MPI initialisation, no GPU.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "collbench/accept/profile.hpp"
#include "collbench/core/error.hpp"
#include "collbench/core/names.hpp"
#include "collbench/core/placement.hpp"
#include "collbench/core/units.hpp"
#include "collbench/gate/gate.hpp"
#include "collbench/model/system_profile.hpp"
#include "collbench/plan/sweep.hpp"
#include "collbench/record/case_scan.hpp"
#include "collbench/record/input_file.hpp"
#include "collbench/record/jsonl.hpp"
#include "collbench/record/nccltests_convert.hpp"
#include "collbench/record/nccltests_import.hpp"
#include "collbench/record/record.hpp"
#include "collbench/report/gate_writers.hpp"
#include "collbench/report/table.hpp"
#include "collbench/run/fault.hpp"
#include "collbench/workload/profile.hpp"

namespace collbench::fuzz {

// A property the parser broke (not an input error): reported as a crash by libFuzzer.
[[noreturn]] inline void violated(const std::string& what) {
  throw std::logic_error("fuzz property violated: " + what);
}

// JSON text as the results writer produces it: strings from a log or a YAML file may hold bytes
// that are not UTF-8, which the writer replaces (U+FFFD) instead of failing on them.
inline std::string dump_like_writer(const nlohmann::json& j) {
  return j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

template <class F>
void accept_or_reject(F&& f) {
  try {
    f();
  } catch (const InputError&) {
    // The one acceptable way to refuse an input.
  }
}

// Sizes, rates, durations, domain lists and comma lists (CLI flags and YAML values).
inline void units(std::string_view data) {
  accept_or_reject([&] {
    const std::uint64_t b = parse_bytes(data);
    (void)format_bytes(b);
  });
  accept_or_reject([&] {
    const Rate r = parse_rate(data);
    if (!(r.bytes_per_s >= 0.0)) violated("parse_rate returned a negative or NaN rate");
    (void)per_direction_bytes_per_s(r, Direction::per_direction);
  });
  accept_or_reject([&] {
    const double s = parse_duration_s(data);
    if (!(s >= 0.0)) violated("parse_duration_s returned a negative or NaN duration");
  });
  accept_or_reject([&] { (void)parse_domain_sizes(std::string(data)); });
  accept_or_reject([&] { (void)split_list(data, "fuzz"); });
}

// Sweep files (docs/interfaces.md section 5).
inline void sweep(std::string_view data) {
  accept_or_reject([&] {
    const plan::Sweep s = plan::parse_sweep(std::string(data), "fuzz.yaml");
    for (const auto& c : s.cases) (void)plan::estimated_buffer_bytes(c, 4);
  });
}

// System profiles (profiles/systems/*.yaml).
inline void system_profile(std::string_view data) {
  accept_or_reject([&] { (void)model::parse_system_profile(data, "fuzz.yaml"); });
}

// Workload profiles (profiles/workloads/*.yaml).
inline void workload_profile(std::string_view data) {
  accept_or_reject([&] { (void)workload::parse_workload_profile(std::string(data), "fuzz.yaml"); });
}

// The fast case reader (record/case_scan.hpp) against the general one, line by line: a line it
// reads must be one the general reader reads without an error or a warning, into the same record.
inline void scanned_lines_match_the_general_reader(std::string_view data) {
  std::size_t start = 0;
  while (start < data.size()) {
    const std::size_t end = std::min(data.find('\n', start), data.size());
    const std::string_view line = data.substr(start, end - start);
    start = end + 1;
    std::optional<record::CaseRecord> fast;
    accept_or_reject([&] { fast = record::scan_case_line(line); });
    if (!fast) continue;
    record::InputFile general;
    try {
      general = record::parse_input(std::string(line) + "\n", "fuzz.jsonl");
    } catch (const InputError& e) {
      violated(std::string("scan_case_line read a line the general reader refuses: ") + e.what());
    }
    if (general.cases.size() != 1 || !general.warnings.empty())
      violated("scan_case_line read a line the general reader warns on");
    if (dump_like_writer(record::to_json(general.cases[0])) != dump_like_writer(record::to_json(*fast)))
      violated("scan_case_line and the general reader read different records");
  }
}

// JSONL results as every reader reads them: the record reader (gate, export, resume), the
// report reader, and what is done with the records next (tables, CSV, a gate of the file
// against itself).
inline void results(std::string_view data) {
  accept_or_reject([&] {
    const record::ResultFile f = record::parse_results(data, "fuzz.jsonl");
    (void)report::render_table(f.cases);
    (void)report::render_csv(f.cases);
    for (const auto& c : f.cases) (void)dump_like_writer(record::to_json(c));
    if (f.header) (void)dump_like_writer(record::to_json(*f.header));
    const gate::GateReport g = gate::run_gate(f, f, gate::GatePolicy{}, {true});
    (void)report::render_gate_table(g);
    (void)dump_like_writer(report::gate_to_json(g));
  });
  accept_or_reject([&] { (void)record::parse_input(data, "fuzz.jsonl"); });
  scanned_lines_match_the_general_reader(data);
}

// nccl-tests console logs and -J JSON, and their conversion into records.
inline void nccl_tests(std::string_view data) {
  accept_or_reject([&] {
    const auto logs = record::parse_nccl_tests_output(data, "fuzz.log");
    record::NcclTestsConvertOptions opt;
    opt.run_id = "fuzz";
    opt.started_at = "2025-01-01T00:00:00Z";
    opt.tool_version = "0";
    opt.git_sha = "0";
    const auto imp = record::import_nccl_tests(logs, opt);
    for (const auto& c : imp.cases) (void)dump_like_writer(record::to_json(c));
    (void)dump_like_writer(record::to_json(imp.header));
  });
}

// Gate policy files (ci/perf-gate.yaml).
inline void gate_policy(std::string_view data) {
  accept_or_reject([&] { (void)gate::parse_gate_policy(data, "fuzz.yaml"); });
}

// Acceptance profiles (profiles/acceptance/*.yaml).
inline void acceptance(std::string_view data) {
  accept_or_reject([&] { (void)accept::parse_acceptance_profile(data, "fuzz.yaml"); });
}

// The COLLBENCH_FAULT environment variable (docs/interfaces.md section 6).
inline void fault(std::string_view data) {
  accept_or_reject([&] {
    const run::FaultPlan p = run::FaultPlan::parse(std::string(data));
    for (int c = 0; c < 3; ++c) {
      (void)p.affects_case(c);
      (void)p.delay_us(0, c, 0);
      (void)p.slow_factor(c);
      (void)p.hang(1, c, 0);
    }
  });
}

struct Target {
  const char* name;  // also the corpus folder: tests/fuzz/corpus/<name>/
  void (*run)(std::string_view);
};

inline constexpr Target kTargets[] = {
    {"units", &units},
    {"sweep", &sweep},
    {"system_profile", &system_profile},
    {"workload_profile", &workload_profile},
    {"results", &results},
    {"nccl_tests", &nccl_tests},
    {"gate_policy", &gate_policy},
    {"acceptance", &acceptance},
    {"fault", &fault},
};

}  // namespace collbench::fuzz
