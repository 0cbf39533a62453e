// Result records (docs/interfaces.md section 3, schema collbench.result/1): the run header and one
// self-contained case record per measured case. One record type feeds every writer; readers
// (reports, gates, import, resume) parse the same structs back. Pure C++ (nlohmann::json).
#pragma once

#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "collbench/stats/summary.hpp"

namespace collbench::record {

inline constexpr const char* kSchema = "collbench.result/1";

struct HostInfo {
  int rank = 0;
  std::string host;
  long pid = 0;
  std::optional<std::string> gpu_name, gpu_uuid, pci_bus_id, nic;
};

// The run header's `communicators`: the library communicators a run created, and the most alive
// at once (docs/results-format.md).
struct CommunicatorCounts {
  int created = 0;
  int max_live = 0;
  friend bool operator==(const CommunicatorCounts&, const CommunicatorCounts&) = default;
};

struct RunHeader {
  std::string run_id;
  std::string started_at;  // ISO 8601 UTC
  std::string tool_version, git_sha;
  std::vector<std::string> backends_built;
  std::vector<std::string> argv;
  nlohmann::json config;  // the fully resolved sweep
  std::string launcher;   // mpiexec, srun, singleton
  std::optional<std::string> mpi_library, cuda_runtime, cuda_driver, nccl_version;
  std::vector<HostInfo> hosts;
  std::map<std::string, std::string> env;
  nlohmann::json system;  // {name, digest} or null
  std::optional<std::string> fault;
  // A run inside SimGrid's SMPI: {engine, version, platform, platform_sha256, config, shared_buffers,
  // watchdog}; null for a measured run, and then absent from the JSON (measured headers unchanged).
  nlohmann::json simulated;
  // Known when the run ends: the results file's header is rewritten then; null until (and in a
  // run that did not end, or whose --out is not a regular file).
  std::optional<CommunicatorCounts> communicators;
};

struct TimeStats {
  double p50 = 0, p5 = 0, p95 = 0, p99 = 0, min = 0, max = 0, mean = 0, stdev = 0, cv = 0;
  double ci95_low = 0, ci95_high = 0;
  static TimeStats from(const stats::Summary& s);
};

struct PerRank {
  std::vector<double> mean_us, max_us, wait_us;
};

struct ModelFields {
  std::string system;
  double bound_time_us = 0, bound_algbw_gbps = 0, bound_busbw_gbps = 0;
  double expected_time_us = 0, expected_busbw_gbps = 0;
  double efficiency = 0;  // bound time / measured p50
  double wire_bytes_per_rank = 0;
};

// A case measured in k > 1 repeats (run/sweep --repeats k; docs/measurement.md "Repeats"): each
// repeat's median and within-run interval, in repeat order, and the spread between them.
struct Repeats {
  int k = 0;
  std::vector<double> p50_us, ci95_low_us, ci95_high_us;
  std::vector<int> iterations;
  std::vector<std::uint64_t> samples_kept;  // each repeat's share of samples_us, in order
  std::vector<std::string> stop_reason;
  double spread_pct = 0;                           // 100 (max - min) / median of p50_us
  double sd_log = 0;                               // sample standard deviation of ln(p50_us): the between-repeat CV
  double between_low_us = 0, between_high_us = 0;  // order-statistic interval of the repeat medians
  double between_confidence = 0;                   // its coverage (stats::repeat_spread)
  double within_ci_pct = 0;                        // median over repeats of 100 (ci95_high - ci95_low) / 2 / p50
};

// One repeat's part of a case (what combined_time and repeats_of read).
struct RepeatPart {
  TimeStats time;
  int iterations = 0;
  std::uint64_t samples_kept = 0;
  std::string stop_reason;
};

// time_us of a repeated case: every statistic the median over repeats of that statistic (min the
// smallest, max the largest), so p50 is the median of the repeat medians and p5 <= p50 <= p95,
// ci95_low <= p50 <= ci95_high still hold. Empty `parts`: all zero.
TimeStats combined_time(const std::vector<RepeatPart>& parts);
// The `repeats` object of a repeated case.
Repeats repeats_of(const std::vector<RepeatPart>& parts);
// The record's stop_reason: converged when every repeat converged, else the first other reason.
std::string combined_stop_reason(const std::vector<RepeatPart>& parts);

struct CaseRecord {
  // identity
  std::string run_id, case_key, collective;
  std::optional<std::string> redop;  // null for collectives without a reduction
  std::string dtype, backend, algo_requested;
  std::optional<std::string> algo_used;
  std::string scope;
  bool in_place = false;
  std::string timing, buffers;
  int graph = 0;
  // The root rank of a rooted collective (broadcast); absent from other records, older records
  // and imports without one (then null here).
  std::optional<int> root;
  // size
  std::uint64_t bytes = 0, count = 0, bytes_per_rank_send = 0, bytes_per_rank_recv = 0;
  std::optional<std::uint64_t> bytes_max_rank, bytes_logical_total;
  // placement
  int num_ranks = 0;  // world size
  std::vector<int> domain_sizes;
  int num_domains = 0;
  // Ranks of the measured communicator, the n of busbw's factor: num_ranks at scope global, the
  // domain's size at scope domain. Absent from older records and imports (then null here).
  std::optional<int> comm_ranks;
  // timing
  int iterations = 0, warmup = 0;
  std::optional<TimeStats> time_us;
  std::vector<double> samples_us;
  std::uint64_t samples_dropped = 0;
  std::optional<PerRank> per_rank;
  std::string stop_reason;
  // bandwidth
  double algbw_gbps = 0, busbw_gbps = 0;
  // check
  bool checked = false;
  std::uint64_t wrong_total = 0;
  std::map<int, std::uint64_t> wrong_by_rank;
  // annotations filled by later layers
  std::optional<ModelFields> model;
  nlohmann::json workload;  // null unless MoE
  nlohmann::json overlap;   // null unless overlap mode
  // status
  std::string status = "ok";  // ok | waived | failed
  std::optional<std::string> reason;
  std::optional<std::string> fault;
  // Times come from a simulation (docs/simulation.md), not a measurement. Written only when true.
  bool simulated = false;
  // Set only for k > 1 repeats; absent from the JSON otherwise (single-run records unchanged).
  std::optional<Repeats> repeats;
  // extra fields (added by later schema revisions, or by import: e.g. "source")
  nlohmann::json extra = nlohmann::json::object();
};

// Collectives with a root rank (nccl-tests prints it in its root column; the others print -1).
bool rooted_collective(std::string_view collective);

// case_key = collective|redop|dtype|backend|algo_requested|scope|in_place|bytes|num_ranks|domain_sizes;
// a root other than 0 is appended to the bytes field as "bytes@root=R", so a run over several
// roots keeps a key per root and root 0 keeps the key it always had.
std::string make_case_key(const CaseRecord& r);
// The same with `size_label` appended to the bytes field as "bytes@label" (MoE: the workload,
// tokens and routing that set the bytes, so cases of equal bytes keep distinct keys); after the
// root: "bytes@root=R;label".
std::string make_case_key(const CaseRecord& r, std::string_view size_label);

// The keys case_from_json reads into CaseRecord's fields (every other key goes to `extra`;
// comm_ranks and root are fields only when they are integers).
const std::vector<std::string>& case_field_keys();

nlohmann::json to_json(const RunHeader& h);
nlohmann::json to_json(const CommunicatorCounts& c);  // {"created": N, "max_live": M}
nlohmann::json to_json(const CaseRecord& r);
RunHeader header_from_json(const nlohmann::json& j);  // InputError on missing/invalid fields
CaseRecord case_from_json(const nlohmann::json& j);

}  // namespace collbench::record
