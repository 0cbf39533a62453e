// `collbench step`: a training step built from collective times (docs/step.md): per-layer timeline,
// exposed and hidden communication, step time, model FLOPs, delivered TFLOP/s per GPU and its
// retention across GPU counts (weak scaling), with collective times from the analytic model or
// from measured JSONL. Pure computation: no MPI, no GPU.
#include <fmt/format.h>

#include <charconv>
#include <cstdio>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "cli/common_options.hpp"
#include "cli/step_output.hpp"
#include "cli/subcommand.hpp"
#include "collbench/core/error.hpp"
#include "collbench/core/limits.hpp"
#include "collbench/core/names.hpp"
#include "collbench/model/profile_overrides.hpp"
#include "collbench/record/jsonl.hpp"
#include "collbench/step/overlap_source.hpp"
#include "collbench/step/step.hpp"

namespace collbench::cli {
namespace {

struct StepFlags {
  std::string workload = "deepseek-v3-bf16";
  std::optional<std::string> layout;  // default: the layout published for the workload on the system
  std::string system = "gb200-nvl72";
  std::optional<std::string> gpus;  // default: the layout's GPU count, 2x and 4x it
  std::string packing = "ep-aligned";
  std::vector<std::string> sets;  // --set KEY=VALUE on the system profile
  std::vector<std::string> measured;
  std::string fallback = "none";
  std::optional<std::string> degrade;
  std::optional<std::string> overlap;
  std::optional<int> ranks_per_domain;
  std::vector<std::string> formats;  // --format FMT[=PATH]
};

int positive_int(const std::string& flag, const std::string& item) {
  int v = 0;
  if (const auto why = count_problem(item, kMaxRanks, v))
    throw InputError(fmt::format("{} '{}': {}", flag, item, *why));
  return v;
}

bool parse_efficiency(const std::string& value, double& v) {
  const auto res = std::from_chars(value.data(), value.data() + value.size(), v);
  return !value.empty() && res.ec == std::errc{} && res.ptr == value.data() + value.size();
}

// "0.8" (every phase), "ep=0.8,tp=0.5", or "ep=FILE.jsonl": the overlap efficiency per phase kind,
// a number in [0, 1] or the overlap record of FILE that step::overlap_from_records picks.
step::Overlap parse_overlap(const std::string& text) {
  using Member = double step::Overlap::*;
  static const std::map<std::string, std::vector<Member>> kinds{
      {"all", {&step::Overlap::tp, &step::Overlap::ep, &step::Overlap::pp, &step::Overlap::dp}},
      {"tp", {&step::Overlap::tp}},
      {"ep", {&step::Overlap::ep}},
      {"pp", {&step::Overlap::pp}},
      {"dp", {&step::Overlap::dp}}};
  step::Overlap o;
  o.source = "--overlap " + text;
  for (const auto& item : split_list(text, "--overlap")) {
    const auto eq = item.find('=');
    const std::string key = eq == std::string::npos ? "all" : item.substr(0, eq);
    const std::string value = eq == std::string::npos ? item : item.substr(eq + 1);
    const auto kind = kinds.find(key);
    if (kind == kinds.end()) {
      std::vector<std::string> keys;
      for (const auto& k : kinds) keys.push_back(k.first);
      throw InputError(fmt::format("--overlap '{}': {}", text, unknown_name_message("phase", key, keys)));
    }
    double v = -1.0;
    if (!parse_efficiency(value, v) && key != "all") {
      const auto pick = step::overlap_from_records(key, record::read_results(value));
      v = pick.efficiency;
      o.detail[key] = pick.detail;
    } else if (v < 0.0 || v > 1.0) {
      throw InputError(fmt::format(
          "--overlap '{}': '{}' is not an efficiency in [0, 1] (overlap records: KIND=FILE, KIND tp ep pp dp)", text,
          value));
    } else if (key == "all") {
      o.detail.clear();
    } else {
      o.detail.erase(key);
    }
    for (const Member m : kind->second) o.*m = v;
  }
  return o;
}

int run_step(const StepFlags& f) {
  const auto targets = report::parse_output_targets(f.formats, step_writers().names(), "table");
  step::StepInputs in;
  const auto profile = workload::load_workload_profile(f.workload);
  in.arch = step::architecture_of(profile);
  in.workload = profile.name;
  in.system = model::load_system_profile(f.system, f.sets);
  in.layout = f.layout ? step::load_layout(*f.layout) : step::default_layout(profile.name, in.system.name);
  in.ranks_per_domain = f.ranks_per_domain.value_or(in.system.scale_up.domain_size);
  in.packing = step::parse_packing(f.packing);
  if (f.overlap) in.overlap = parse_overlap(*f.overlap);
  std::vector<record::ResultFile> files;
  for (const auto& path : f.measured) files.push_back(record::read_results(path));
  if (f.fallback != "none" && f.fallback != "model") {
    throw InputError(fmt::format("--fallback '{}': accepted: none, model", f.fallback));
  }
  std::vector<int> gpus;
  const int g = in.layout.gpus;
  for (const auto& item : split_list(f.gpus.value_or(fmt::format("{},{},{}", g, 2 * g, 4 * g)), "--gpus")) {
    gpus.push_back(positive_int("--gpus", item));
  }
  const step::CommTimes comm(in.system, files, f.fallback == "model", std::nullopt);
  std::optional<step::CommTimes> slow;
  if (f.degrade) slow.emplace(in.system, files, f.fallback == "model", step::parse_degrade(*f.degrade));
  std::vector<step::StepPoint> pts, degraded;
  for (const int n : gpus) {
    pts.push_back(step::build_step(in, comm, n));
    pts.back().retention = pts.back().tflops_per_gpu / pts.front().tflops_per_gpu;
    if (slow) degraded.push_back(step::build_step(in, *slow, n));
  }
  report::WriterMultiplex<StepOutput>(step_writers(), targets)
      .write(StepOutput{&in, &pts, &degraded, f.degrade.value_or("")});
  return 0;
}

Action setup_step(CLI::App& app) {
  auto f = std::make_shared<StepFlags>();
  app.add_option("--workload", f->workload, "Workload profile with the architecture keys")->capture_default_str();
  app.add_option("--layout", f->layout,
                 "Parallel layout (profiles/layouts/NAME.yaml or a file; default: the one published for the workload "
                 "on the system)");
  add_system_option(app, f->system, "System profile with a compute: section")->capture_default_str();
  app.add_option(
         "--set", f->sets,
         "Override a system profile key (repeatable): KEY=VALUE, e.g. compute.gemm_efficiency=1 (docs/model.md)")
      ->expected(1)
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
  app.add_option("--gpus", f->gpus,
                 "GPU counts, weak scaling (global batch grows with DP; default: the layout's, 2x and 4x it)");
  app.add_option("--packing", f->packing,
                 "ep-aligned (whole EP groups per domain, idle GPUs if needed) or rack-major (domains filled, EP "
                 "groups cut at their ends)")
      ->capture_default_str();
  app.add_option("--measured", f->measured, "JSONL result files to take collective times from");
  app.add_option("--fallback", f->fallback, "none or model: what serves a collective the files lack")
      ->capture_default_str();
  app.add_option("--degrade", f->degrade, "One slow link: nic:FACTOR or nvlink:FACTOR (GPU 0's)");
  app.add_option(
      "--overlap", f->overlap,
      "Overlap efficiency: E, or tp=E,ep=E,pp=E,dp=E, or KIND=FILE of overlap records (default tp 0 ep 0 pp 1 dp 1)");
  app.add_option("--ranks-per-domain", f->ranks_per_domain, "GPUs per scale-up domain (default: the system's)");
  add_format_option(app, f->formats, step_writers().names(), "table", "Output");
  return [f] { return run_step(*f); };
}

CB_REGISTER_SUBCOMMAND(Subcommand{"step", "Training step from collective times: delivered TFLOP/s per GPU", 35,
                                  setup_step});

}  // namespace
}  // namespace collbench::cli
