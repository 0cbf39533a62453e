// `collbench report weak-scaling` (report_weak_scaling.cpp), registered by cmd_report.cpp, and the
// helpers of `collbench report` both use.
#pragma once

#include <CLI/CLI.hpp>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "collbench/record/input_file.hpp"
#include "collbench/report/html.hpp"

namespace collbench::cli {

struct WeakScalingFlags {
  std::vector<std::string> files;
  std::optional<std::string> system;
  std::optional<std::string> project_onto;
  std::string ranks = "256,512,1024";
  std::optional<int> calibrate_at;
  std::vector<std::string> sets;
  std::optional<int> base;
  std::optional<int> ranks_per_domain;
  std::optional<double> anomaly_below;
  bool allow_mixed_progress = false;
  std::string packing = "full";
  std::string metric = "busbw";
  std::string out = "weak-scaling-report";
  std::uint64_t seed = 1;
  int resamples = 2000;
  bool no_plots = false;
  std::optional<std::string> html;
};

// The weak-scaling subcommand's flags on `app`; the subcommand.
CLI::App* add_weak_scaling(CLI::App& app, WeakScalingFlags& w);
// The report folder (and --html page) of the files; 0.
int run_weak_scaling(const WeakScalingFlags& f);

// Every results file read (its warnings on stderr); InputError without any.
std::vector<record::InputFile> load_all(const std::vector<std::string>& paths);
// The generator line and time of an HTML page.
report::HtmlContext html_context();
// --html FILE checked before anything runs.
void check_html_path(const std::optional<std::string>& html);

}  // namespace collbench::cli
