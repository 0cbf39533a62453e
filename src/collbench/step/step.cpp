#include "collbench/step/step.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "collbench/core/collective_facts.hpp"
#include "collbench/core/error.hpp"
#include "collbench/workload/expected.hpp"

namespace collbench::step {
namespace {

constexpr double kUs = 1e6;
constexpr double kBf16Bytes = 2.0;

struct Rates {
  double gemm = 0.0, head = 0.0, attention = 0.0, attention_bwd = 0.0;  // FLOP/s
};

Rates rates_of(const StepInputs& in) {
  if (!in.system.compute) {
    throw InputError(
        fmt::format("system profile '{}' has no 'compute:' section (peak_dense_bf16_tflops, "
                    "peak_dense_fp8_tflops, gemm_efficiency, attention_efficiency) that collbench step "
                    "needs; see docs/step.md",
                    in.system.name));
  }
  const auto& c = *in.system.compute;
  Rates r;
  r.gemm = (in.layout.precision == Precision::fp8 ? c.peak_fp8_flops : c.peak_bf16_flops) * c.gemm_efficiency;
  r.head = c.peak_bf16_flops * c.gemm_efficiency;  // the output layer stays in BF16
  r.attention = c.peak_bf16_flops * c.attention_efficiency;
  const double bwd = c.attention_backward_efficiency > 0.0 ? c.attention_backward_efficiency : c.attention_efficiency;
  r.attention_bwd = c.peak_bf16_flops * bwd;
  return r;
}

// Compute of one layer part for one micro-batch on one GPU, forward; and its backward.
struct PartTimes {
  double fwd = 0.0, bwd = 0.0;
};

PartTimes layer_compute(const StepInputs& in, const Rates& r, bool moe) {
  const auto& a = in.arch;
  const double tokens = static_cast<double>(in.layout.micro_batch) * a.sequence / in.layout.tp;
  const double ffn = moe ? moe_active_params(a) : dense_ffn_params(a);
  const double gemm = 2.0 * tokens * (attention_params(a) + ffn) / r.gemm * kUs;
  const double core_flops = tokens * mean_core_flops_per_layer(a);
  const double core = core_flops / r.attention * kUs;
  PartTimes t;
  t.fwd = gemm + core;
  t.bwd = 2.0 * gemm + core_flops * attention_backward_flop_ratio(a) / r.attention_bwd * kUs;
  if (in.layout.recompute == Recompute::selective) t.bwd += core;
  if (in.layout.recompute == Recompute::full) t.bwd += t.fwd;
  if (in.layout.recompute == Recompute::mla_up_proj) t.bwd += 2.0 * tokens * mla_up_proj_params(a) / r.gemm * kUs;
  return t;
}

// The output layer (`params` = V H), or an MTP module's projection and output layer (2 H^2 + V H),
// at the BF16 GEMM rate.
PartTimes head_compute(const StepInputs& in, const Rates& r, double params) {
  const double tokens = static_cast<double>(in.layout.micro_batch) * in.arch.sequence / in.layout.tp;
  PartTimes t;
  t.fwd = 2.0 * tokens * params / r.head * kUs;
  t.bwd = 2.0 * t.fwd;
  return t;
}

struct PhaseSpec {
  const char* name;
  const char* collective;
  GroupKind group;
  double bytes;
  Dtype dtype;
  const char* measured_first = nullptr;  // a MoE collective tried first in measured files
  bool moe_estimate = false;             // EP: the model's MoE dispatch/combine estimate
};

// Parameters one GPU holds: non-expert (replicated over DP) and expert (over expert DP). An MTP
// module adds its attention, shared experts, router and 2H -> H projection to the first, its
// experts to the second (its output layer is the model's).
double dense_params_per_gpu(const Architecture& a, const Layout& l) {
  const double h = a.hidden;
  const double moe_rest = a.shared_experts * 3.0 * h * a.expert_ffn + h * a.experts;  // shared experts + router
  const double mtp_ffn = a.moe_layers > 0 ? moe_rest : dense_ffn_params(a);
  const double total = a.layers * attention_params(a) + a.dense_layers * dense_ffn_params(a) + a.moe_layers * moe_rest +
                       a.mtp_layers * (attention_params(a) + mtp_ffn + 2.0 * h * h) + embedding_params(a) +
                       head_params(a);
  return total / (l.tp * l.pp);
}

double expert_params_per_gpu(const Architecture& a, const Layout& l) {
  const int moe = a.moe_layers + (a.moe_layers > 0 ? a.mtp_layers : 0);
  return moe * static_cast<double>(a.experts) * 3.0 * a.hidden * a.expert_ffn / (l.ep * l.pp);
}

std::vector<PhaseSpec> phase_specs(const StepInputs& in, const Shape& s) {
  const auto& a = in.arch;
  const auto& l = in.layout;
  const double tokens = static_cast<double>(l.micro_batch) * a.sequence;
  const double activation = tokens * a.hidden * kBf16Bytes;  // one micro-batch's hidden states, BF16
  const double rows = tokens / l.tp * workload::expected_destination_ranks(a.experts, l.ep, a.top_k);
  const double dense = dense_params_per_gpu(a, l), expert = expert_params_per_gpu(a, l);
  const Dtype grad = l.grad_bytes == 4 ? Dtype::float32 : Dtype::bfloat16;
  std::vector<PhaseSpec> out{
      {"TP all-gather", "allgather", GroupKind::tp, activation, Dtype::bfloat16},
      {"TP reduce-scatter", "reducescatter", GroupKind::tp, activation, Dtype::bfloat16},
      {"EP dispatch", "alltoall", GroupKind::ep, rows * a.dispatch_row_bytes, Dtype::bfloat16, "moe-dispatch", true},
      {"EP combine", "alltoall", GroupKind::ep, rows * a.combine_row_bytes, Dtype::bfloat16, "moe-combine", true},
      {"EP backward (dispatch and combine gradients)", "alltoall", GroupKind::ep, rows * a.combine_row_bytes,
       Dtype::bfloat16, "moe-combine", true},
      {"PP send/recv", "sendrecv", GroupKind::pp, activation / l.tp, Dtype::bfloat16},
      {"DP reduce-scatter", "reducescatter", GroupKind::dp, dense * l.grad_bytes, grad},
      {"DP all-gather", "allgather", GroupKind::dp, dense * l.param_bytes, Dtype::bfloat16},
      {"expert-DP reduce-scatter", "reducescatter", GroupKind::edp, expert * l.grad_bytes, grad},
      {"expert-DP all-gather", "allgather", GroupKind::edp, expert * l.param_bytes, Dtype::bfloat16},
  };
  (void)s;
  return out;
}

double overlap_of(const Overlap& o, GroupKind g) {
  switch (g) {
    case GroupKind::tp:
      return o.tp;
    case GroupKind::ep:
      return o.ep;
    case GroupKind::pp:
      return o.pp;
    default:
      return o.dp;
  }
}

// Phases whose group has more than one rank, each timed once; index by name through `find`.
std::vector<Phase> time_phases(const StepInputs& in, const CommTimes& comm, const Shape& s, int ranks_per_domain) {
  std::vector<Phase> out;
  for (const auto& spec : phase_specs(in, s)) {
    const GroupGeometry g = group_geometry(spec.group, in.layout, s, ranks_per_domain);
    if (g.size <= 1) continue;
    Phase p;
    p.name = spec.name;
    p.collective = spec.collective;
    p.group = spec.group;
    p.group_size = g.size;
    p.scale_out = g.spans_domains;
    p.bytes = spec.bytes;
    p.overlap = overlap_of(in.overlap, spec.group);
    CommQuery q{p.collective, &g, p.bytes, spec.dtype, p.name, {}, spec.moe_estimate};
    if (spec.measured_first != nullptr) q.measured_first.emplace_back(spec.measured_first);
    p.answer = comm.time(q);
    // What a straddling EP group costs: the same call with the group inside one domain, where it fits.
    if (spec.moe_estimate && p.scale_out && p.answer.source != "measured" && g.size <= in.ranks_per_domain) {
      p.inside_one_domain_us = comm.model_inside_one_domain_us(q);
    }
    out.push_back(std::move(p));
  }
  return out;
}

int find(const std::vector<Phase>& phases, const char* name) {
  for (std::size_t i = 0; i < phases.size(); ++i) {
    if (phases[i].name == name) return static_cast<int>(i);
  }
  return -1;
}

}  // namespace
}  // namespace collbench::step

namespace collbench::step {
namespace {

// Exposed time of one direction of a layer: EP hides first in the layer's compute window, TP in
// what is left (docs/step.md, "Overlap"). Fills `exposed` per call entry; returns the total.
double expose(std::vector<Phase>& phases, const std::vector<std::pair<int, double>>& calls, double window,
              std::vector<double>& exposed) {
  double comm_ep = 0.0, comm_tp = 0.0, overlappable_calls = 0.0;
  for (const auto& [i, n] : calls) {
    (phases[i].group == GroupKind::ep ? comm_ep : comm_tp) += n * phases[i].answer.time_us;
    overlappable_calls += n;
  }
  double hidden_ep = 0.0, hidden_tp = 0.0;
  for (const auto& [i, n] : calls) {
    (void)n;
    if (phases[i].group == GroupKind::ep) hidden_ep = std::min(comm_ep, phases[i].overlap * window);
  }
  for (const auto& [i, n] : calls) {
    (void)n;
    if (phases[i].group == GroupKind::tp) hidden_tp = std::min(comm_tp, phases[i].overlap * (window - hidden_ep));
  }
  double total = 0.0;
  exposed.clear();
  for (const auto& [i, n] : calls) {
    auto& p = phases[i];
    const double comm = p.group == GroupKind::ep ? comm_ep : comm_tp;
    const double hidden = p.group == GroupKind::ep ? hidden_ep : hidden_tp;
    const double mine = n * p.answer.time_us;
    exposed.push_back(comm > 0.0 ? mine * (1.0 - hidden / comm) : 0.0);
    total += exposed.back();
    const double per_call_window = window / overlappable_calls;
    if (p.window_us == 0.0 || per_call_window < p.window_us) p.window_us = per_call_window;
  }
  return total;
}

void add_call(std::vector<std::pair<int, double>>& calls, int phase, double n) {
  if (phase >= 0) calls.emplace_back(phase, n);
}

LayerRow layer_row(const StepInputs& in, const Rates& r, std::vector<Phase>& phases, bool moe) {
  LayerRow row;
  row.kind = moe ? "moe" : "dense";
  row.count = moe ? in.arch.moe_layers : in.arch.dense_layers;
  const PartTimes c = layer_compute(in, r, moe);
  row.fwd_compute_us = c.fwd;
  row.bwd_compute_us = c.bwd;
  const int ag = find(phases, "TP all-gather"), rs = find(phases, "TP reduce-scatter");
  const double tp_calls = moe ? 1.0 : 2.0;  // attention block, and the dense FFN block
  for (auto* calls : {&row.fwd_calls, &row.bwd_calls}) {
    add_call(*calls, ag, tp_calls);
    add_call(*calls, rs, tp_calls);
  }
  if (moe) {
    add_call(row.fwd_calls, find(phases, "EP dispatch"), 1.0);
    add_call(row.fwd_calls, find(phases, "EP combine"), 1.0);
    add_call(row.bwd_calls, find(phases, "EP backward (dispatch and combine gradients)"), 2.0);
  }
  for (const auto& [i, n] : row.fwd_calls) row.fwd_comm_us += n * phases[i].answer.time_us;
  for (const auto& [i, n] : row.bwd_calls) row.bwd_comm_us += n * phases[i].answer.time_us;
  row.fwd_exposed_us = expose(phases, row.fwd_calls, c.fwd, row.fwd_phase_exposed);
  row.bwd_exposed_us = expose(phases, row.bwd_calls, c.bwd, row.bwd_phase_exposed);
  return row;
}

// The output layer, or (mtp) what an MTP module adds to its transformer layer: the 2H -> H
// projection and the output layer again.
LayerRow head_row(const StepInputs& in, const Rates& r, bool mtp) {
  LayerRow row;
  row.kind = mtp ? "mtp" : "output";
  row.count = mtp ? in.arch.mtp_layers : 1;
  const double h = in.arch.hidden;
  const PartTimes c = head_compute(in, r, head_params(in.arch) + (mtp ? 2.0 * h * h : 0.0));
  row.fwd_compute_us = c.fwd;
  row.bwd_compute_us = c.bwd;
  return row;
}

// Work of one pipeline rank per micro-batch: its VPP chunks (virtual stage j on rank j mod PP).
struct RankWork {
  double fwd = 0.0, bwd = 0.0;                  // compute + exposed communication
  double fwd_compute = 0.0, bwd_compute = 0.0;  // compute only
  std::vector<double> phase_exposed;            // per phase, per micro-batch
  std::vector<double> phase_calls;              // per phase, per micro-batch
};

void add_layers(RankWork& w, const LayerRow& row, int n) {
  w.fwd += n * (row.fwd_compute_us + row.fwd_exposed_us);
  w.bwd += n * (row.bwd_compute_us + row.bwd_exposed_us);
  w.fwd_compute += n * row.fwd_compute_us;
  w.bwd_compute += n * row.bwd_compute_us;
  for (std::size_t k = 0; k < row.fwd_calls.size(); ++k) {
    w.phase_exposed[row.fwd_calls[k].first] += n * row.fwd_phase_exposed[k];
    w.phase_calls[row.fwd_calls[k].first] += n * row.fwd_calls[k].second;
  }
  for (std::size_t k = 0; k < row.bwd_calls.size(); ++k) {
    w.phase_exposed[row.bwd_calls[k].first] += n * row.bwd_phase_exposed[k];
    w.phase_calls[row.bwd_calls[k].first] += n * row.bwd_calls[k].second;
  }
}

}  // namespace
}  // namespace collbench::step

namespace collbench::step {
namespace {

RankWork rank_work(const StepInputs& in, const Shape& s, const std::vector<LayerRow>& rows, std::vector<Phase>& phases,
                   int rank) {
  const int pp = in.layout.pp, stages = static_cast<int>(s.stage_layers.size());
  RankWork w;
  w.phase_exposed.assign(phases.size(), 0.0);
  w.phase_calls.assign(phases.size(), 0.0);
  const int send = find(phases, "PP send/recv");
  int first = 0;  // first layer of virtual stage j
  for (int j = 0; j < stages; ++j) {
    const int n = s.stage_layers[static_cast<std::size_t>(j)];
    if (j % pp == rank) {
      const int dense = std::clamp(in.arch.dense_layers - first, 0, n);
      RankWork chunk;
      chunk.phase_exposed.assign(phases.size(), 0.0);
      chunk.phase_calls.assign(phases.size(), 0.0);
      add_layers(chunk, rows[0], dense);
      add_layers(chunk, rows[1], n - dense);
      if (j == stages - 1) {  // the output layer, and the MTP modules (Megatron's last stage: "mL")
        add_layers(chunk, rows[2], 1);
        add_layers(chunk, rows[in.arch.moe_layers > 0 ? 1 : 0], in.arch.mtp_layers);
        add_layers(chunk, rows[3], in.arch.mtp_layers);
      }
      if (send >= 0) {  // one activation out per chunk forward, one gradient back per chunk backward
        auto& p = phases[static_cast<std::size_t>(send)];
        const double t = p.answer.time_us;
        const double xf = t - std::min(t, p.overlap * chunk.fwd_compute);
        const double xb = t - std::min(t, p.overlap * chunk.bwd_compute);
        chunk.fwd += xf;
        chunk.bwd += xb;
        chunk.phase_exposed[static_cast<std::size_t>(send)] += xf + xb;
        chunk.phase_calls[static_cast<std::size_t>(send)] += 2.0;
        if (p.window_us == 0.0 || chunk.fwd_compute < p.window_us) p.window_us = chunk.fwd_compute;
      }
      w.fwd += chunk.fwd;
      w.bwd += chunk.bwd;
      w.fwd_compute += chunk.fwd_compute;
      w.bwd_compute += chunk.bwd_compute;
      for (std::size_t k = 0; k < phases.size(); ++k) {
        w.phase_exposed[k] += chunk.phase_exposed[k];
        w.phase_calls[k] += chunk.phase_calls[k];
      }
    }
    first += n;
  }
  return w;
}

// The distributed optimizer's exchanges, once per step: gradients reduce-scattered behind the last
// micro-batch's backward, parameters all-gathered behind the first one's forward.
double dp_exposed(std::vector<Phase>& phases, const RankWork& w) {
  double exposed = 0.0;
  for (const CollectiveId id : {CollectiveId::reducescatter, CollectiveId::allgather}) {
    const bool rs = id == CollectiveId::reducescatter;
    const std::string_view collective = to_string(id);
    double comm = 0.0, overlap = 1.0;
    std::vector<Phase*> mine;
    for (auto& p : phases) {
      if ((p.group == GroupKind::dp || p.group == GroupKind::edp) && p.collective == collective) {
        comm += p.answer.time_us;
        overlap = p.overlap;
        mine.push_back(&p);
      }
    }
    const double window = rs ? w.bwd_compute : w.fwd_compute;
    const double x = comm - std::min(comm, overlap * window);
    for (auto* p : mine) {
      p->window_us = window;
      p->calls_per_step = 1.0;
      p->time_per_step_us = p->answer.time_us;
      p->exposed_per_step_us = comm > 0.0 ? x * p->answer.time_us / comm : 0.0;
    }
    exposed += x;
  }
  return exposed;
}

// Calls, time and exposed time per step of the critical rank's m micro-batches (the bubble's share
// of the critical path is bubble_us), so that exposed <= time and hidden = time - exposed.
void count_calls(const Shape& s, const RankWork& worst, std::vector<Phase>& phases) {
  const double m = s.micro_batches;
  for (std::size_t k = 0; k < phases.size(); ++k) {
    Phase& p = phases[k];
    p.calls_per_step = m * worst.phase_calls[k];
    p.time_per_step_us = p.calls_per_step * p.answer.time_us;
    p.exposed_per_step_us = m * worst.phase_exposed[k];
  }
}

}  // namespace

StepPoint build_step(const StepInputs& in, const CommTimes& comm, int gpus) {
  StepPoint pt;
  pt.shape = shape_at(in.layout, in.arch, gpus);
  pt.placement = place_ep_groups(gpus, in.layout.ep, in.ranks_per_domain, in.packing);
  const Rates r = rates_of(in);
  pt.phases = time_phases(in, comm, pt.shape, in.ranks_per_domain > 0 ? pt.placement.used_per_domain : 0);
  pt.layers = {layer_row(in, r, pt.phases, false), layer_row(in, r, pt.phases, true), head_row(in, r, false),
               head_row(in, r, true)};
  RankWork worst;
  for (int rank = 0; rank < in.layout.pp; ++rank) {
    RankWork w = rank_work(in, pt.shape, pt.layers, pt.phases, rank);
    if (rank == 0 || w.fwd + w.bwd > worst.fwd + worst.bwd) worst = std::move(w), pt.critical_rank = rank;
  }
  const double m = pt.shape.micro_batches;
  pt.microbatch_fwd_us = worst.fwd;
  pt.microbatch_bwd_us = worst.bwd;
  pt.schedule_factor = m + static_cast<double>(in.layout.pp - 1) / in.layout.vpp;
  pt.pipeline_us = pt.schedule_factor * (worst.fwd + worst.bwd);
  pt.bubble_us = pt.pipeline_us - m * (worst.fwd + worst.bwd);
  pt.compute_us = m * (worst.fwd_compute + worst.bwd_compute);
  count_calls(pt.shape, worst, pt.phases);
  pt.dp_exposed_us = dp_exposed(pt.phases, worst);
  for (auto& p : pt.phases) p.slack_us = p.window_us - p.answer.time_us;
  pt.step_us = pt.pipeline_us + pt.dp_exposed_us;
  pt.tokens = static_cast<double>(pt.shape.global_batch) * in.arch.sequence;
  pt.model_flops = pt.tokens * model_flops_per_token(in.arch);
  pt.tflops_per_gpu = pt.model_flops / (pt.step_us / kUs) / gpus / 1e12;
  return pt;
}

}  // namespace collbench::step
