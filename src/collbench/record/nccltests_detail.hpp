// Internal to the nccl-tests importer (nccltests_import.cpp, nccltests_text.cpp,
// nccltests_json.cpp): the text helpers and the checks and inferences that console logs and -J
// JSON share. Not part of the record layer's interface.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "collbench/record/nccltests_import.hpp"

namespace collbench::record::nccltests_detail {

// ---- text helpers
std::string_view trim(std::string_view s);
std::vector<std::string_view> split_ws(std::string_view s);  // whitespace-separated tokens
std::string lower(std::string_view s);
bool all_digits(std::string_view s);
bool starts_alpha(std::string_view s);
std::string in_quotes(std::string_view s);
std::string at(const std::string& path, int line);  // "PATH:LINE: " (or "PATH: " for line 0)
[[noreturn]] void fail(const std::string& path, int line, const std::string& message);  // InputError at(...)
std::optional<std::uint64_t> to_u64(std::string_view s);
std::optional<long> to_long(std::string_view s);
std::optional<double> to_double(std::string_view s);
double printed_tolerance(std::string_view token);  // half a unit in the last printed digit
bool is_ellipsis(std::string_view s);

// ---- rank count, busbw checks and the collective, shared by both formats
struct RankEvidence {
  std::optional<int> listed;  // a complete list gives the count
  std::string listed_source;
  int at_least = 0;                // ranks seen in an incomplete list
  std::optional<int> per_process;  // nThread x nGpus: n is a multiple of it
  std::optional<int> nccl_info;    // "NCCL INFO ... nranks N"
  std::string incomplete_reason;   // why the list does not give the count
};

// Sets log.num_ranks (and its source) from the evidence and the busbw/algbw ratio.
void resolve_num_ranks(NcclTestsLog& log, const RankEvidence& ev);
// Warns about rows whose busbw is not algbw x factor(n) within rounding.
void check_busbw(NcclTestsLog& log);
// Warns when the log's average bus bandwidth is not the mean of the busbw values read.
void check_avg_busbw(NcclTestsLog& log);
// The collective from the rows alone (only where the numbers leave one answer) or the file name.
void infer_collective_from_rows(NcclTestsLog& log);
void infer_collective_from_path(NcclTestsLog& log);

}  // namespace collbench::record::nccltests_detail
