// Report inputs and comparisons. Result files are read with the line of every record kept, so
// that a bad file is named with its line (exit code 2). Comparisons match the cases of runs,
// backends or algorithms on everything but the varied dimension and give, per size, the ratio
// and % change of the median time and of busbw. Pure C++ (no MPI, no GPU); the renderers here
// (console table, CSV) and in markdown.hpp only print what compare() computed.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "collbench/record/record.hpp"

namespace collbench::report {

// One results file as reports read it.
struct InputFile {
  std::string path;
  std::optional<record::RunHeader> header;
  int header_line = 0;
  std::vector<record::CaseRecord> cases;
  std::vector<int> case_lines;  // 1-based line of cases[i] in the file
  std::vector<std::string> warnings;
};

// Reads a JSONL results file. A malformed line, a record of another schema or a record missing
// keys is an InputError "PATH:LINE: ..."; a truncated last line is skipped with a warning.
InputFile load_input(const std::string& path);

// The same, over text already in memory (`path` names it in messages).
InputFile parse_input(std::string_view text, const std::string& path);

enum class CompareBy { run, backend, algo };
CompareBy parse_compare_by(std::string_view name);  // InputError naming run, backend, algo
std::string_view to_string(CompareBy by);

// The identity a comparison matches on: the case key without the varied dimension.
std::string match_key(const record::CaseRecord& r, CompareBy by);
// The value of the varied dimension: the file path (run), backend, or algo_requested.
std::string varied_value(const record::CaseRecord& r, const std::string& file_path, CompareBy by);

struct ComparisonRow {
  std::string other;  // value of the varied dimension compared with the baseline
  // Shared identity (taken from the baseline record).
  std::string collective, dtype, scope, timing;
  std::optional<std::string> redop;
  std::string backend, algo;  // baseline's; for backend/algo comparisons the varied one differs
  bool in_place = false;
  std::uint64_t bytes = 0;
  int num_ranks = 0;
  std::vector<int> domain_sizes;
  double base_p50_us = 0, other_p50_us = 0;
  double base_busbw_gbps = 0, other_busbw_gbps = 0;
  double time_ratio = 0;                   // other p50 / baseline p50 (> 1: slower)
  double time_change_pct = 0;              // (time_ratio - 1) x 100
  std::optional<double> busbw_ratio;       // other / baseline busbw (> 1: faster); null when baseline is 0
  std::optional<double> busbw_change_pct;  // (busbw_ratio - 1) x 100
};

struct Comparison {
  CompareBy by = CompareBy::run;
  std::string baseline;             // value of the varied dimension everything is compared with
  std::vector<std::string> others;  // the other values, in input order
  std::vector<ComparisonRow> rows;  // grouped by `other`, then in the baseline's case order
  std::size_t unmatched = 0;        // measured cases with no counterpart on the other side
  std::vector<std::string> notes;   // cases left out and why (not ok, duplicates, ...)
};

// Compares every value of the varied dimension with the baseline (by default the first value
// met in input order). Only cases with status ok and timing statistics are compared. An
// InputError when fewer than two values of the dimension are present, or `baseline` is absent.
Comparison compare(const std::vector<InputFile>& files, CompareBy by,
                   const std::optional<std::string>& baseline = std::nullopt);

// Console table (one block per compared value) and CSV.
std::string render_comparison_table(const Comparison& c);
std::string render_comparison_csv(const Comparison& c);

}  // namespace collbench::report
