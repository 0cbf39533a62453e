// Conversion of parsed nccl-tests results (nccltests_import.hpp) into collbench records, so that
// existing nccl-tests logs get reports, bounds and gates. What a log does not say is not
// invented: the placement is unknown (one domain of all ranks, said so in every record) unless
// given at import (--ranks-per-domain, or --system's domain size), the
// time is nccl-tests' average over its iterations (kept as p50 and in every other statistic
// the log does not print), and per-rank data is absent. algbw and busbw are the printed
// values, checked against the size and time. Pure C++; needs no MPI, CUDA or GPU.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "collbench/record/nccltests_import.hpp"
#include "collbench/record/record.hpp"

namespace collbench::record {

struct NcclTestsConvertOptions {
  std::string run_id;      // of the import (one run header for all logs of one import)
  std::string started_at;  // ISO 8601 UTC: when the import ran (logs rarely carry a date)
  std::string tool_version, git_sha;
  std::vector<std::string> backends_built;
  std::vector<std::string> argv;
  std::optional<int> num_ranks;           // for logs that do not say (InputError otherwise)
  std::optional<std::string> collective;  // for logs whose collective cannot be inferred
  // --ranks-per-domain M (given, or the domain size of --system's profile): rank-major domains of
  // M ranks, the last one partial. Without it the placement is unknown (one domain of all ranks).
  std::optional<int> ranks_per_domain;
  std::string placement_from;  // what gave ranks_per_domain ("--ranks-per-domain", "system gb300-nvl72")
};

// The records' (and the run header's) placement note: unknown, or where it came from.
std::string nccl_tests_placement_note(const NcclTestsConvertOptions& options);
// True when the record was imported without a placement (one domain of all its ranks, unknown).
bool placement_unknown(const CaseRecord& r);

// One log's records.
struct NcclTestsConverted {
  std::vector<CaseRecord> cases;
  nlohmann::json source;        // what the run header's config says about this log
  std::vector<HostInfo> hosts;  // from the log's device list (empty when it has none)
  std::vector<std::string> warnings;
  bool skipped = false;  // the log's collective is not one collbench records
};

// dtype / redop in collbench spelling; nullopt when collbench has no such type or operation
// (int8, uint8, uint32, uint64; avg, premulsum).
std::optional<std::string> collbench_dtype_from_nccl_tests(const std::string& type);
std::optional<std::string> collbench_redop_from_nccl_tests(const std::string& redop, bool& known);

// Converts one parsed log. Each table row gives up to two cases (out-of-place, in-place).
// InputError (naming the file) when the rank count or the collective is unknown and not given.
NcclTestsConverted convert_nccl_tests_log(const NcclTestsLog& log, const NcclTestsConvertOptions& options);

struct NcclTestsImport {
  RunHeader header;               // launcher "singleton"; config.source = "nccl-tests", config.logs = [...]
  std::vector<CaseRecord> cases;  // one per case key: repeats of an earlier row are dropped
  std::vector<std::string> warnings;
  int duplicates_dropped = 0;  // rows whose case key an earlier row (or log) already had
};

// Converts every log of one import into one run: a header, then the cases in log order.
NcclTestsImport import_nccl_tests(const std::vector<NcclTestsLog>& logs, const NcclTestsConvertOptions& options);

}  // namespace collbench::record
