// Markdown writers: per-case tables, comparisons and the weak-scaling report. They only render
// what records, compare() and build_weak_scaling() hold; they compute nothing. Pure C++.
#pragma once

#include <string>
#include <vector>

#include "collbench/record/record.hpp"
#include "collbench/report/compare.hpp"
#include "collbench/report/weak_scaling.hpp"

namespace collbench::report {

// One table of cases (the console table's columns, as Markdown).
std::string markdown_case_table(const std::vector<record::CaseRecord>& records);

// One section per input file: its run header in a line, then its cases.
std::string render_cases_markdown(const std::vector<InputFile>& files);

std::string render_comparison_markdown(const Comparison& c);

// Plot files to link from the weak-scaling report, relative to the report's folder.
struct PlotLinks {
  std::vector<std::string> weak_scaling;  // per group index; empty string when none
  std::vector<std::string> other;         // busbw vs size, per-rank heatmaps, ...
  std::string note;                       // why plots are missing (and how to get them), or empty
};

std::string render_weak_scaling_markdown(const WeakScalingReport& report, const PlotLinks& plots);

}  // namespace collbench::report
