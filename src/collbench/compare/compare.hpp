// Comparisons between runs, backends and algorithms (the files come from record/input_file.hpp).
// They match the cases of runs, backends or algorithms on everything but the varied dimension and
// give, per size, the ratio and % change of the median time and of busbw. Pure C++ (no MPI, no GPU); the renderers
// (report/compare_render.hpp, markdown.hpp, html.hpp) only print what compare_files() computed.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "collbench/record/input_file.hpp"
#include "collbench/record/record.hpp"

namespace collbench::compare {

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
Comparison compare_files(const std::vector<record::InputFile>& files, CompareBy by,
                         const std::optional<std::string>& baseline = std::nullopt);

}  // namespace collbench::compare
