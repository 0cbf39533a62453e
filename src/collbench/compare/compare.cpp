// Comparisons between runs, backends and algorithms.
#include "collbench/compare/compare.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "collbench/core/error.hpp"

namespace collbench::compare {

using record::CaseRecord;

CompareBy parse_compare_by(std::string_view name) {
  if (name == "run") return CompareBy::run;
  if (name == "backend") return CompareBy::backend;
  if (name == "algo") return CompareBy::algo;
  throw InputError(unknown_name_message("--compare-by value", name, {"run", "backend", "algo"}));
}

std::string_view to_string(CompareBy by) {
  switch (by) {
    case CompareBy::run:
      return "run";
    case CompareBy::backend:
      return "backend";
    case CompareBy::algo:
      return "algo";
  }
  return "run";
}

std::string match_key(const CaseRecord& r, CompareBy by) {
  // The case key's fields (docs/interfaces.md section 3) plus the timing mode, with the varied one
  // blanked: isolated and pipelined times of one case are different measurements.
  return fmt::format("{}|{}|{}|{}|{}|{}|{}|{}|{}|{}|{}", r.collective, r.redop.value_or("-"), r.dtype,
                     by == CompareBy::backend ? "*" : r.backend, by == CompareBy::algo ? "*" : r.algo_requested,
                     r.scope, r.in_place ? "inplace" : "outofplace", r.bytes, r.num_ranks,
                     fmt::join(r.domain_sizes, ","), r.timing);
}

std::string varied_value(const CaseRecord& r, const std::string& file_path, CompareBy by) {
  switch (by) {
    case CompareBy::run:
      return file_path;
    case CompareBy::backend:
      return r.backend;
    case CompareBy::algo:
      return r.algo_requested;
  }
  return file_path;
}

namespace {

struct Located {
  const CaseRecord* rec;
  const record::InputFile* file;
  int line;
};

bool measured(const CaseRecord& r) {
  return r.status == "ok" && r.time_us && r.time_us->p50 > 0.0;
}

// The input's cases by compared value and match key; notes name the repeated cases.
struct CaseIndex {
  std::vector<std::string> values;                                 // in input order
  std::map<std::string, std::map<std::string, Located>> by_value;  // value -> match key -> case
  std::map<std::string, std::vector<std::string>> order_of_value;  // value -> match keys in order
  std::size_t left_out = 0;                                        // not measured
};

// Adds one file's cases to the index (the first of repeated cases only, with a note).
void index_file(const record::InputFile& f, CompareBy by, CaseIndex& idx, std::vector<std::string>& notes) {
  if (by == CompareBy::run && std::find(idx.values.begin(), idx.values.end(), f.path) != idx.values.end()) {
    throw InputError(fmt::format("'{}' is given twice; a run comparison needs distinct files", f.path));
  }
  if (by == CompareBy::run) idx.values.push_back(f.path);
  for (std::size_t i = 0; i < f.cases.size(); ++i) {
    const auto& r = f.cases[i];
    const std::string value = varied_value(r, f.path, by);
    if (std::find(idx.values.begin(), idx.values.end(), value) == idx.values.end()) idx.values.push_back(value);
    if (!measured(r)) {
      ++idx.left_out;
      continue;
    }
    const std::string key = match_key(r, by);
    auto& slot = idx.by_value[value];
    if (const auto it = slot.find(key); it != slot.end()) {
      notes.push_back(fmt::format("{}:{}: same case as {}:{} for {} '{}'; compared the first only", f.path,
                                  f.case_lines[i], it->second.file->path, it->second.line, to_string(by), value));
      continue;
    }
    slot.emplace(key, Located{&r, &f, f.case_lines[i]});
    idx.order_of_value[value].push_back(key);
  }
}

// The baseline value: the one asked for, or the first; an input with fewer than two values is an error.
std::string pick_baseline(const std::vector<std::string>& values, CompareBy by,
                          const std::optional<std::string>& baseline) {
  if (values.size() < 2) {
    throw InputError(fmt::format("nothing to compare by {}: the input has {} {}", to_string(by),
                                 values.size() == 1 ? "only one" : "no",
                                 by == CompareBy::run ? "file (give two or more)" : std::string(to_string(by))));
  }
  std::string out = baseline ? *baseline : values.front();
  if (std::find(values.begin(), values.end(), out) == values.end()) {
    throw InputError(unknown_name_message(fmt::format("--baseline (a {} of the input)", to_string(by)), out, values));
  }
  return out;
}

// One compared case: the baseline's case `b` and the other value's case `o`, with their ratios.
ComparisonRow comparison_row(const CaseRecord& b, const CaseRecord& o, const std::string& other) {
  ComparisonRow row;
  row.other = other;
  row.collective = b.collective;
  row.dtype = b.dtype;
  row.scope = b.scope;
  row.timing = b.timing;
  row.redop = b.redop;
  row.backend = b.backend;
  row.algo = b.algo_requested;
  row.in_place = b.in_place;
  row.bytes = b.bytes;
  row.num_ranks = b.num_ranks;
  row.domain_sizes = b.domain_sizes;
  row.base_p50_us = b.time_us->p50;
  row.other_p50_us = o.time_us->p50;
  row.base_busbw_gbps = b.busbw_gbps;
  row.other_busbw_gbps = o.busbw_gbps;
  row.time_ratio = o.time_us->p50 / b.time_us->p50;
  row.time_change_pct = (row.time_ratio - 1.0) * 100.0;
  if (b.busbw_gbps > 0.0) {
    row.busbw_ratio = o.busbw_gbps / b.busbw_gbps;
    row.busbw_change_pct = (*row.busbw_ratio - 1.0) * 100.0;
  }
  return row;
}

// Rows of every other value against the baseline, in the baseline's order; counts the cases without a counterpart.
void compare_with_baseline(CaseIndex& idx, Comparison& out) {
  const auto& base_cases = idx.by_value[out.baseline];
  std::map<std::string, bool> base_matched;
  for (const auto& value : idx.values) {
    if (value == out.baseline) continue;
    out.others.push_back(value);
    const auto& other_cases = idx.by_value[value];
    for (const auto& key : idx.order_of_value[out.baseline]) {
      const auto it = other_cases.find(key);
      if (it == other_cases.end()) continue;
      base_matched[key] = true;
      out.rows.push_back(comparison_row(*base_cases.at(key).rec, *it->second.rec, value));
    }
    for (const auto& [key, loc] : other_cases) {
      if (base_cases.find(key) == base_cases.end()) ++out.unmatched;
    }
  }
  for (const auto& [key, loc] : base_cases) {
    if (!base_matched.count(key)) ++out.unmatched;
  }
}

// Why nothing matched when the inputs differ in rank count (that is weak scaling); nullopt otherwise.
std::optional<std::string> rank_count_note(const CaseIndex& idx) {
  std::set<int> ranks;
  for (const auto& [value, cases] : idx.by_value) {
    for (const auto& [key, loc] : cases) ranks.insert(loc.rec->num_ranks);
  }
  if (ranks.size() <= 1) return std::nullopt;
  return fmt::format(
      "the inputs were measured at different rank counts ({}); cases are compared at "
      "equal rank counts only: for scaling across rank counts use `collbench report "
      "weak-scaling`",
      fmt::join(ranks, ", "));
}

}  // namespace

Comparison compare_files(const std::vector<record::InputFile>& files, CompareBy by,
                         const std::optional<std::string>& baseline) {
  Comparison out;
  out.by = by;
  CaseIndex idx;
  for (const auto& f : files) index_file(f, by, idx, out.notes);
  if (idx.left_out > 0) {
    out.notes.push_back(
        fmt::format("{} case(s) not compared: status not ok (waived or failed) or no timing", idx.left_out));
  }
  out.baseline = pick_baseline(idx.values, by, baseline);
  compare_with_baseline(idx, out);
  if (out.rows.empty()) {
    if (auto note = rank_count_note(idx)) out.notes.push_back(std::move(*note));
  }
  if (out.unmatched > 0) {
    out.notes.push_back(
        fmt::format("{} measured case(s) have no counterpart to compare with (matched on every field "
                    "of the case key and the timing mode except the {})",
                    out.unmatched, to_string(by)));
  }
  return out;
}

}  // namespace collbench::compare
