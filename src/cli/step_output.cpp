#include "cli/step_output.hpp"

#include <fmt/format.h>
#include <fmt/printf.h>

#include <cstdio>

#include "collbench/report/escape.hpp"

namespace collbench::cli {
namespace {

nlohmann::json phase_json(const step::Phase& p) {
  return {{"name", p.name},
          {"collective", p.collective},
          {"group", step::to_string(p.group)},
          {"group_size", p.group_size},
          {"scale_out", p.scale_out},
          {"bytes", p.bytes},
          {"time_us", p.answer.time_us},
          {"bound_us", p.answer.bound_us ? nlohmann::json(*p.answer.bound_us) : nlohmann::json(nullptr)},
          {"inside_one_domain_us", p.inside_one_domain_us > 0.0 ? nlohmann::json(p.inside_one_domain_us) : nullptr},
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

nlohmann::json placement_json(const step::EpPlacement& p) {
  return {{"packing", step::to_string(p.packing)}, {"ep", p.ep},           {"domain_size", p.domain_size},
          {"gpus_per_domain", p.used_per_domain},  {"domains", p.domains}, {"ep_groups", p.groups},
          {"straddling_ep_groups", p.straddling},  {"fits", p.fits},       {"text", step::describe(p)}};
}

std::vector<const step::Published*> published_at(const step::Layout& l, int gpus) {
  std::vector<const step::Published*> out;
  for (const auto& p : l.published) {
    if (p.gpus == gpus) out.push_back(&p);
  }
  return out;
}

double tokens_per_s_per_gpu(const step::StepPoint& p) {
  return p.tokens / (p.step_us / 1e6) / p.shape.gpus;
}

std::string published_line(const step::Published& pub, const step::StepPoint& p) {
  return fmt::format(
      "published {} at {} GPUs: {:.0f} TFLOP/s/GPU, {:.0f} tokens/s/GPU (its FLOPs {} MTP); model {:.1f} TFLOP/s/GPU "
      "({:+.1f}%), {:.0f} tokens/s/GPU ({:+.1f}%); {}",
      pub.release, pub.gpus, pub.tflops_per_gpu, pub.tokens_per_s_per_gpu, pub.counts_mtp ? "count" : "do not count",
      p.tflops_per_gpu, 100.0 * (p.tflops_per_gpu / pub.tflops_per_gpu - 1.0), tokens_per_s_per_gpu(p),
      100.0 * (tokens_per_s_per_gpu(p) / pub.tokens_per_s_per_gpu - 1.0), pub.source);
}

std::string phase_source(const step::Phase& p) {
  if (p.inside_one_domain_us <= 0.0) return p.answer.detail;
  return fmt::format("{} [inside one domain: {:.1f} us]", p.answer.detail, p.inside_one_domain_us);
}

void print_phases(std::string& out, const step::StepPoint& pt) {
  out += fmt::sprintf("\n## %d GPUs: phases (one call; per step on the critical pipeline rank)\n", pt.shape.gpus);
  out += fmt::sprintf("# placement: %s\n", step::describe(pt.placement).c_str());
  out += fmt::sprintf("%-46s %5s %-9s %12s %10s %10s %12s %12s  %s\n", "phase", "group", "fabric", "bytes", "time_us",
                      "slack_us", "step_us", "exposed_us", "source");
  for (const auto& p : pt.phases) {
    out +=
        fmt::sprintf("%-46s %2s/%-2d %-9s %12.0f %10.1f %10.1f %12.1f %12.1f  %s\n", p.name.c_str(),
                     step::to_string(p.group), p.group_size, p.scale_out ? "scale-out" : "scale-up", p.bytes,
                     p.answer.time_us, p.slack_us, p.time_per_step_us, p.exposed_per_step_us, phase_source(p).c_str());
  }
}

void print_degraded(std::string& out, const step::StepPoint& pt, const step::StepPoint& d,
                    const std::string& degrade_text) {
  std::size_t worst = 0;
  for (std::size_t k = 0; k < d.phases.size(); ++k) {
    if (d.phases[k].exposed_per_step_us - pt.phases[k].exposed_per_step_us >
        d.phases[worst].exposed_per_step_us - pt.phases[worst].exposed_per_step_us)
      worst = k;
  }
  out += fmt::sprintf("# --degrade %s: step %.4f s -> %.4f s, %.1f -> %.1f TFLOP/s/GPU; absorbed by: %s\n",
                      degrade_text.c_str(), pt.step_us / 1e6, d.step_us / 1e6, pt.tflops_per_gpu, d.tflops_per_gpu,
                      d.phases.empty() || d.step_us <= pt.step_us
                          ? "no phase: the slowed collectives stay inside their compute windows (see slack)"
                          : d.phases[worst].name.c_str());
}

void print_header(std::string& out, const step::StepInputs& in) {
  out += fmt::sprintf(
      "# step: workload %s, layout %s (tp %d ep %d pp %d vpp %d, micro-batch %d, %s GEMMs), system %s\n",
      in.workload.c_str(), in.layout.name.c_str(), in.layout.tp, in.layout.ep, in.layout.pp, in.layout.vpp,
      in.layout.micro_batch, std::string(step::to_string(in.layout.precision)).c_str(), in.system.name.c_str());
  out += fmt::sprintf(
      "# FLOPs: 6 x active matmul parameters x tokens + 3 x layers x causal attention core, MTP modules included "
      "(%.2f GFLOP per token, %.2f of them MTP; docs/step.md)\n",
      step::model_flops_per_token(in.arch) / 1e9, step::mtp_flops_per_token(in.arch) / 1e9);
  out += fmt::sprintf("# overlap (%s): tp %.3g ep %.3g pp %.3g dp %.3g\n", in.overlap.source.c_str(), in.overlap.tp,
                      in.overlap.ep, in.overlap.pp, in.overlap.dp);
  for (const auto& [kind, detail] : in.overlap.detail) {
    out += fmt::sprintf("# overlap %s from %s\n", kind.c_str(), detail.c_str());
  }
}

}  // namespace

nlohmann::json step_point_json(const step::StepInputs& in, const step::StepPoint& pt) {
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
  nlohmann::json published = nlohmann::json::array();
  for (const auto* pub : published_at(in.layout, pt.shape.gpus)) {
    published.push_back({{"release", pub->release},
                         {"tflops_per_gpu", pub->tflops_per_gpu},
                         {"tokens_per_s_per_gpu", pub->tokens_per_s_per_gpu},
                         {"counts_mtp", pub->counts_mtp},
                         {"source", pub->source}});
  }
  return {{"gpus", pt.shape.gpus},
          {"dp", pt.shape.dp},
          {"expert_dp", pt.shape.edp},
          {"placement", placement_json(pt.placement)},
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
          {"tokens_per_s_per_gpu", tokens_per_s_per_gpu(pt)},
          {"model_flops_per_step", pt.model_flops},
          {"delivered_tflops_per_gpu", pt.tflops_per_gpu},
          {"retention", pt.retention},
          {"published", published},
          {"layers", layers},
          {"phases", phases}};
}

std::string render_step_table(const StepOutput& o) {
  const step::StepInputs& in = *o.in;
  const std::vector<step::StepPoint>& pts = *o.points;
  std::string out;
  print_header(out, in);
  out += fmt::sprintf("%6s %5s %6s %12s %14s %14s %10s %10s\n", "gpus", "dp", "batch", "step_s", "TFLOP/s/GPU",
                      "tokens/s/GPU", "retention", "bubble_s");
  for (const auto& p : pts) {
    out += fmt::sprintf("%6d %5d %6d %12.4f %14.1f %14.0f %9.1f%% %10.4f\n", p.shape.gpus, p.shape.dp,
                        p.shape.global_batch, p.step_us / 1e6, p.tflops_per_gpu, tokens_per_s_per_gpu(p),
                        100.0 * p.retention, p.bubble_us / 1e6);
  }
  for (const auto& p : pts) {
    for (const auto* pub : published_at(in.layout, p.shape.gpus))
      out += fmt::sprintf("# %s\n", published_line(*pub, p).c_str());
  }
  for (std::size_t i = 0; i < pts.size(); ++i) {
    print_phases(out, pts[i]);
    if (!o.degraded->empty()) print_degraded(out, pts[i], (*o.degraded)[i], o.degrade_text);
  }
  return out;
}

// Markdown: the scaling table, then each GPU count's phases with source, exposed time and slack.
std::string render_step_markdown(const StepOutput& o) {
  const step::StepInputs& in = *o.in;
  const std::vector<step::StepPoint>& pts = *o.points;
  std::string out;
  out += fmt::sprintf("# Training step: %s, layout %s, system %s\n\n", in.workload.c_str(), in.layout.name.c_str(),
                      in.system.name.c_str());
  out += fmt::sprintf(
      "FLOPs: 6 x active matmul parameters x tokens + 3 x layers x causal attention core, MTP modules included "
      "(docs/step.md). Overlap (%s): tp %.3g, ep %.3g, pp %.3g, dp %.3g.\n\n",
      in.overlap.source.c_str(), in.overlap.tp, in.overlap.ep, in.overlap.pp, in.overlap.dp);
  for (const auto& [kind, detail] : in.overlap.detail) {
    out += fmt::sprintf("Overlap %s from %s.\n\n", kind.c_str(), report::md_escape(detail).c_str());
  }
  out += fmt::sprintf(
      "| GPUs | DP | global batch | step (s) | TFLOP/s per GPU | tokens/s per GPU | retention | bubble (s) "
      "|\n|---|---|---|---|---|---|---|---|\n");
  for (const auto& p : pts) {
    out += fmt::sprintf("| %d | %d | %d | %.4f | %.1f | %.0f | %.1f%% | %.4f |\n", p.shape.gpus, p.shape.dp,
                        p.shape.global_batch, p.step_us / 1e6, p.tflops_per_gpu, tokens_per_s_per_gpu(p),
                        100.0 * p.retention, p.bubble_us / 1e6);
  }
  for (const auto& p : pts) {
    for (const auto* pub : published_at(in.layout, p.shape.gpus)) {
      out += fmt::sprintf("\n%s.\n", report::md_escape(published_line(*pub, p)).c_str());
    }
  }
  for (const auto& pt : pts) {
    out += fmt::sprintf("\n## %d GPUs\n\nPlacement: %s.\n\n", pt.shape.gpus,
                        report::md_escape(step::describe(pt.placement)).c_str());
    out += fmt::sprintf(
        "| phase | group | fabric | time per call (us) | slack (us) | exposed per step (us) | source "
        "|\n|---|---|---|---|---|---|---|\n");
    for (const auto& p : pt.phases) {
      out += fmt::sprintf("| %s | %s %d | %s | %.1f | %.1f | %.1f | %s |\n", p.name.c_str(), step::to_string(p.group),
                          p.group_size, p.scale_out ? "scale-out" : "scale-up", p.answer.time_us, p.slack_us,
                          p.exposed_per_step_us, report::md_escape(phase_source(p)).c_str());
    }
  }
  return out;
}

std::string render_step_json(const StepOutput& o) {
  const step::StepInputs& in = *o.in;
  nlohmann::json out{
      {"kind", "step"},
      {"workload", in.workload},
      {"layout", in.layout.name},
      {"system", {{"name", in.system.name}, {"digest", in.system.digest}}},
      {"flop_convention",
       "6 x active matmul parameters x tokens + 3 x layers x causal attention core, MTP modules included"},
      {"flops_per_token", step::model_flops_per_token(in.arch)},
      {"mtp_flops_per_token", step::mtp_flops_per_token(in.arch)},
      {"overlap",
       {{"source", in.overlap.source},
        {"tp", in.overlap.tp},
        {"ep", in.overlap.ep},
        {"pp", in.overlap.pp},
        {"dp", in.overlap.dp},
        {"detail", in.overlap.detail}}},
      {"points", nlohmann::json::array()}};
  for (std::size_t i = 0; i < o.points->size(); ++i) {
    auto j = step_point_json(in, (*o.points)[i]);
    if (!o.degraded->empty()) j["degraded"] = step_point_json(in, (*o.degraded)[i]);
    out["points"].push_back(std::move(j));
  }
  return out.dump(2) + "\n";
}

const report::WriterRegistry<StepOutput>& step_writers() {
  static const report::WriterRegistry<StepOutput> registry = [] {
    report::WriterRegistry<StepOutput> r("step format");
    r.add("table", render_step_table);
    r.add("json", render_step_json);
    r.add("markdown", render_step_markdown);
    r.add("none", [](const StepOutput&) { return std::string(); });
    return r;
  }();
  return registry;
}

}  // namespace collbench::cli
