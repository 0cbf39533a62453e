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

#include "cli/subcommand.hpp"
#include "collbench/core/error.hpp"
#include "collbench/core/names.hpp"
#include "collbench/record/jsonl.hpp"
#include "collbench/report/escape.hpp"
#include "collbench/step/overlap_source.hpp"
#include "collbench/step/step.hpp"

namespace collbench::cli {
namespace {

struct StepFlags {
  std::string workload = "deepseek-v3-bf16";
  std::string layout = "deepseek-v3-gb200-megatron";
  std::string system = "gb200-nvl72";
  std::string gpus = "256,512,1024";
  std::vector<std::string> measured;
  std::string fallback = "none";
  std::optional<std::string> degrade;
  std::optional<std::string> overlap;
  std::optional<int> ranks_per_domain;
  std::string format = "table";
};

int positive_int(const std::string& flag, const std::string& item) {
  int v = 0;
  const auto res = std::from_chars(item.data(), item.data() + item.size(), v);
  if (item.empty() || res.ec != std::errc{} || res.ptr != item.data() + item.size() || v <= 0) {
    throw InputError(fmt::format("{} '{}': not a positive integer", flag, item));
  }
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

nlohmann::json phase_json(const step::Phase& p) {
  return {{"name", p.name},
          {"collective", p.collective},
          {"group", step::to_string(p.group)},
          {"group_size", p.group_size},
          {"scale_out", p.scale_out},
          {"bytes", p.bytes},
          {"time_us", p.answer.time_us},
          {"bound_us", p.answer.bound_us ? nlohmann::json(*p.answer.bound_us) : nlohmann::json(nullptr)},
          {"source", p.answer.source},
          {"source_detail", p.answer.detail},
          {"overlap", p.overlap},
          {"window_us", p.window_us},
          {"slack_us", p.slack_us},
          {"calls_per_step", p.calls_per_step},
          {"time_per_step_us", p.time_per_step_us},
          {"exposed_per_step_us", p.exposed_per_step_us},
          {"hidden_per_step_us", p.time_per_step_us - p.exposed_per_step_us}};
}

nlohmann::json point_json(const step::StepPoint& pt) {
  nlohmann::json layers = nlohmann::json::array(), phases = nlohmann::json::array();
  for (const auto& l : pt.layers) {
    layers.push_back({{"kind", l.kind},
                      {"count", l.count},
                      {"fwd_compute_us", l.fwd_compute_us},
                      {"fwd_comm_us", l.fwd_comm_us},
                      {"fwd_exposed_us", l.fwd_exposed_us},
                      {"bwd_compute_us", l.bwd_compute_us},
                      {"bwd_comm_us", l.bwd_comm_us},
                      {"bwd_exposed_us", l.bwd_exposed_us}});
  }
  for (const auto& p : pt.phases) phases.push_back(phase_json(p));
  return {{"gpus", pt.shape.gpus},
          {"dp", pt.shape.dp},
          {"expert_dp", pt.shape.edp},
          {"global_batch", pt.shape.global_batch},
          {"micro_batches", pt.shape.micro_batches},
          {"stage_layers", pt.shape.stage_layers},
          {"critical_pipeline_rank", pt.critical_rank},
          {"microbatch_fwd_us", pt.microbatch_fwd_us},
          {"microbatch_bwd_us", pt.microbatch_bwd_us},
          {"pipeline_us", pt.pipeline_us},
          {"bubble_us", pt.bubble_us},
          {"compute_us", pt.compute_us},
          {"dp_exposed_us", pt.dp_exposed_us},
          {"step_time_s", pt.step_us / 1e6},
          {"tokens_per_step", pt.tokens},
          {"model_flops_per_step", pt.model_flops},
          {"delivered_tflops_per_gpu", pt.tflops_per_gpu},
          {"retention", pt.retention},
          {"layers", layers},
          {"phases", phases}};
}

void print_table(const step::StepInputs& in, const std::vector<step::StepPoint>& pts,
                 const std::vector<step::StepPoint>& degraded, const std::string& degrade_text) {
  std::printf("# step: workload %s, layout %s (tp %d ep %d pp %d vpp %d, micro-batch %d, %s GEMMs), system %s\n",
              in.workload.c_str(), in.layout.name.c_str(), in.layout.tp, in.layout.ep, in.layout.pp, in.layout.vpp,
              in.layout.micro_batch, std::string(step::to_string(in.layout.precision)).c_str(), in.system.name.c_str());
  std::printf("# FLOPs: 6 x active matmul parameters x tokens + 3 x layers x causal attention core (docs/step.md)\n");
  std::printf("# overlap (%s): tp %.3g ep %.3g pp %.3g dp %.3g\n", in.overlap.source.c_str(), in.overlap.tp,
              in.overlap.ep, in.overlap.pp, in.overlap.dp);
  for (const auto& [kind, detail] : in.overlap.detail) {
    std::printf("# overlap %s from %s\n", kind.c_str(), detail.c_str());
  }
  std::printf("%6s %5s %6s %12s %14s %10s %10s\n", "gpus", "dp", "batch", "step_s", "TFLOP/s/GPU", "retention",
              "bubble_s");
  for (const auto& p : pts) {
    std::printf("%6d %5d %6d %12.4f %14.1f %9.1f%% %10.4f\n", p.shape.gpus, p.shape.dp, p.shape.global_batch,
                p.step_us / 1e6, p.tflops_per_gpu, 100.0 * p.retention, p.bubble_us / 1e6);
  }
  for (std::size_t i = 0; i < pts.size(); ++i) {
    std::printf("\n## %d GPUs: phases (one call; per step on the critical pipeline rank)\n", pts[i].shape.gpus);
    std::printf("%-46s %5s %-9s %12s %10s %10s %12s %12s  %s\n", "phase", "group", "fabric", "bytes", "time_us",
                "slack_us", "step_us", "exposed_us", "source");
    for (const auto& p : pts[i].phases) {
      std::printf("%-46s %2s/%-2d %-9s %12.0f %10.1f %10.1f %12.1f %12.1f  %s\n", p.name.c_str(),
                  step::to_string(p.group), p.group_size, p.scale_out ? "scale-out" : "scale-up", p.bytes,
                  p.answer.time_us, p.slack_us, p.time_per_step_us, p.exposed_per_step_us, p.answer.detail.c_str());
    }
    if (!degraded.empty()) {
      const auto& d = degraded[i];
      std::size_t worst = 0;
      for (std::size_t k = 0; k < d.phases.size(); ++k) {
        if (d.phases[k].exposed_per_step_us - pts[i].phases[k].exposed_per_step_us >
            d.phases[worst].exposed_per_step_us - pts[i].phases[worst].exposed_per_step_us)
          worst = k;
      }
      std::printf("# --degrade %s: step %.4f s -> %.4f s, %.1f -> %.1f TFLOP/s/GPU; absorbed by: %s\n",
                  degrade_text.c_str(), pts[i].step_us / 1e6, d.step_us / 1e6, pts[i].tflops_per_gpu, d.tflops_per_gpu,
                  d.phases.empty() || d.step_us <= pts[i].step_us
                      ? "no phase: the slowed collectives stay inside their compute windows (see slack)"
                      : d.phases[worst].name.c_str());
    }
  }
}

// Markdown: the scaling table, then each GPU count's phases with source, exposed time and slack.
void print_markdown(const step::StepInputs& in, const std::vector<step::StepPoint>& pts) {
  std::printf("# Training step: %s, layout %s, system %s\n\n", in.workload.c_str(), in.layout.name.c_str(),
              in.system.name.c_str());
  std::printf(
      "FLOPs: 6 x active matmul parameters x tokens + 3 x layers x causal attention core (docs/step.md). "
      "Overlap (%s): tp %.3g, ep %.3g, pp %.3g, dp %.3g.\n\n",
      in.overlap.source.c_str(), in.overlap.tp, in.overlap.ep, in.overlap.pp, in.overlap.dp);
  for (const auto& [kind, detail] : in.overlap.detail) {
    std::printf("Overlap %s from %s.\n\n", kind.c_str(), report::md_escape(detail).c_str());
  }
  std::printf(
      "| GPUs | DP | global batch | step (s) | TFLOP/s per GPU | retention | bubble (s) "
      "|\n|---|---|---|---|---|---|---|\n");
  for (const auto& p : pts) {
    std::printf("| %d | %d | %d | %.4f | %.1f | %.1f%% | %.4f |\n", p.shape.gpus, p.shape.dp, p.shape.global_batch,
                p.step_us / 1e6, p.tflops_per_gpu, 100.0 * p.retention, p.bubble_us / 1e6);
  }
  for (const auto& pt : pts) {
    std::printf(
        "\n## %d GPUs\n\n| phase | group | fabric | time per call (us) | slack (us) | exposed per step (us) | source "
        "|\n"
        "|---|---|---|---|---|---|---|\n",
        pt.shape.gpus);
    for (const auto& p : pt.phases) {
      std::printf("| %s | %s %d | %s | %.1f | %.1f | %.1f | %s |\n", p.name.c_str(), step::to_string(p.group),
                  p.group_size, p.scale_out ? "scale-out" : "scale-up", p.answer.time_us, p.slack_us,
                  p.exposed_per_step_us, report::md_escape(p.answer.detail).c_str());
    }
  }
}

int run_step(const StepFlags& f) {
  step::StepInputs in;
  const auto profile = workload::load_workload_profile(f.workload);
  in.arch = step::architecture_of(profile);
  in.workload = profile.name;
  in.layout = step::load_layout(f.layout);
  in.system = model::load_system_profile(f.system);
  in.ranks_per_domain = f.ranks_per_domain.value_or(in.system.scale_up.domain_size);
  if (f.overlap) in.overlap = parse_overlap(*f.overlap);
  std::vector<record::ResultFile> files;
  for (const auto& path : f.measured) files.push_back(record::read_results(path));
  if (f.fallback != "none" && f.fallback != "model") {
    throw InputError(fmt::format("--fallback '{}': accepted: none, model", f.fallback));
  }
  std::vector<int> gpus;
  for (const auto& item : split_list(f.gpus, "--gpus")) gpus.push_back(positive_int("--gpus", item));
  const step::CommTimes comm(in.system, files, f.fallback == "model", std::nullopt);
  std::optional<step::CommTimes> slow;
  if (f.degrade) slow.emplace(in.system, files, f.fallback == "model", step::parse_degrade(*f.degrade));
  std::vector<step::StepPoint> pts, degraded;
  for (const int n : gpus) {
    pts.push_back(step::build_step(in, comm, n));
    pts.back().retention = pts.back().tflops_per_gpu / pts.front().tflops_per_gpu;
    if (slow) degraded.push_back(step::build_step(in, *slow, n));
  }
  if (f.format == "json") {
    nlohmann::json out{
        {"kind", "step"},
        {"workload", in.workload},
        {"layout", in.layout.name},
        {"system", {{"name", in.system.name}, {"digest", in.system.digest}}},
        {"flop_convention", "6 x active matmul parameters x tokens + 3 x layers x causal attention core"},
        {"overlap",
         {{"source", in.overlap.source},
          {"tp", in.overlap.tp},
          {"ep", in.overlap.ep},
          {"pp", in.overlap.pp},
          {"dp", in.overlap.dp},
          {"detail", in.overlap.detail}}},
        {"points", nlohmann::json::array()}};
    for (std::size_t i = 0; i < pts.size(); ++i) {
      auto j = point_json(pts[i]);
      if (!degraded.empty()) j["degraded"] = point_json(degraded[i]);
      out["points"].push_back(std::move(j));
    }
    std::puts(out.dump(2).c_str());
  } else if (f.format == "markdown") {
    print_markdown(in, pts);
  } else if (f.format == "table") {
    print_table(in, pts, degraded, f.degrade.value_or(""));
  } else {
    throw InputError(fmt::format("--format '{}': accepted: table, json, markdown", f.format));
  }
  return 0;
}

Action setup(CLI::App& app) {
  auto f = std::make_shared<StepFlags>();
  app.add_option("--workload", f->workload, "Workload profile with the architecture keys")->capture_default_str();
  app.add_option("--layout", f->layout, "Parallel layout (profiles/layouts/NAME.yaml or a file)")
      ->capture_default_str();
  app.add_option("--system", f->system, "System profile with a compute: section")->capture_default_str();
  app.add_option("--gpus", f->gpus, "GPU counts, weak scaling (global batch grows with DP)")->capture_default_str();
  app.add_option("--measured", f->measured, "JSONL result files to take collective times from");
  app.add_option("--fallback", f->fallback, "none or model: what serves a collective the files lack")
      ->capture_default_str();
  app.add_option("--degrade", f->degrade, "One slow link: nic:FACTOR or nvlink:FACTOR (GPU 0's)");
  app.add_option(
      "--overlap", f->overlap,
      "Overlap efficiency: E, or tp=E,ep=E,pp=E,dp=E, or KIND=FILE of overlap records (default tp 0 ep 0 pp 1 dp 1)");
  app.add_option("--ranks-per-domain", f->ranks_per_domain, "GPUs per scale-up domain (default: the system's)");
  app.add_option("--format", f->format, "table, json or markdown")->capture_default_str();
  return [f] { return run_step(*f); };
}

CB_REGISTER_SUBCOMMAND(Subcommand{"step", "Training step from collective times: delivered TFLOP/s per GPU", 35, setup});

}  // namespace
}  // namespace collbench::cli
