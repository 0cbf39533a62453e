// Markdown writers: per-case tables, comparisons and the weak-scaling report. They only render
// what records, compare_files() and build_weak_scaling() hold; they compute nothing. Pure C++.
#pragma once

#include <string>
#include <vector>

#include "collbench/record/record.hpp"
#include "collbench/report/compare_render.hpp"
#include "collbench/scaling/weak_scaling.hpp"

namespace collbench::report {

// One table of cases (the console table's columns, as Markdown).
std::string markdown_case_table(const std::vector<record::CaseRecord>& records);
// Its parts, for a table rendered as its records are read (cli/report_tables.cpp): the head,
// one row per case (`root_column` as needs_root_column says of all of them), then the overlap
// section made of the rows markdown_overlap_row gives ("" for a case without overlap; the
// section is "" when they all are).
std::string markdown_case_head(bool root_column);
std::string markdown_case_row(const record::CaseRecord& r, bool root_column);
std::string markdown_overlap_row(const record::CaseRecord& r);
std::string markdown_overlap_section(const std::string& overlap_rows);
// A file's section up to its table: path, run header in a line, the reader's warnings.
std::string markdown_file_head(const record::InputFile& f);

// One section per input file: its run header in a line, then its cases.
std::string render_cases_markdown(const std::vector<record::InputFile>& files);

std::string render_comparison_markdown(const compare::Comparison& c);

// Plot files to link from the weak-scaling report, relative to the report's folder.
struct PlotLinks {
  std::vector<std::string> weak_scaling;  // per group index; empty string when none
  std::vector<std::string> other;         // busbw vs size, per-rank heatmaps, ...
  std::string note;                       // why plots are missing (and how to get them), or empty
};

std::string render_weak_scaling_markdown(const scaling::WeakScalingReport& report, const PlotLinks& plots);

}  // namespace collbench::report
