// Overlap timing loop (overlap_measure.hpp).
#include "collbench/run/overlap_measure.hpp"

#include <mpi.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <random>
#include <utility>

#include "collbench/overlap/metrics.hpp"
#include "collbench/overlap/pipeline.hpp"
#include "collbench/run/measure.hpp"
#include "collbench/stats/median_bootstrap.hpp"
#include "collbench/stats/summary.hpp"

namespace collbench::run {
namespace {

using Clock = std::chrono::steady_clock;

double since_us(Clock::time_point t0) {
  return std::chrono::duration<double, std::micro>(Clock::now() - t0).count();
}

// The three timed phases of one overlap iteration: the communication alone (per stage when
// pipelined), the compute alone, and both together (the pipeline's schedule).
class OverlapPhases {
 public:
  explicit OverlapPhases(const OverlapOps& ops)
      : ops_(ops),
        compute_(*ops.compute),
        pipeline_(ops.chunks > 0),
        chunks_(pipeline_ ? ops.chunks : 1),
        stages_(pipeline_ ? ops.stages : 0),
        schedule_(pipeline_ ? overlap::pipeline_schedule(ops.chunks, ops.stages) : std::vector<overlap::Slot>{}) {}

  [[nodiscard]] int stages() const { return stages_; }
  // Columns of one iteration: comm, compute, both, then one per stage (pipeline).
  [[nodiscard]] std::size_t columns() const { return 3 + static_cast<std::size_t>(stages_); }

  void comm_alone(double* stage_out) const {
    if (!pipeline_) {
      ops_.launch(0, -1);
      ops_.synchronize();
      return;
    }
    for (int k = 0; k < stages_; ++k) {
      const auto t0 = Clock::now();
      for (int c = 0; c < chunks_; ++c) ops_.launch(c, k);
      ops_.synchronize();
      stage_out[k] = since_us(t0);
    }
  }
  void compute_alone() const {
    for (int c = 0; c < chunks_; ++c) {
      compute_.start();
      compute_.wait();
    }
  }
  void both() const {
    if (!pipeline_) {
      compute_.start();
      ops_.launch(0, -1);
      ops_.synchronize();
      compute_.wait();
      return;
    }
    for (const auto& slot : schedule_) {
      if (slot.compute_chunk >= 0) compute_.start();
      for (const auto& op : slot.comm) ops_.launch(op.chunk, op.stage);
      if (!slot.comm.empty()) ops_.synchronize();
      if (slot.compute_chunk >= 0) compute_.wait();
    }
  }

  // One iteration into `row` (columns() values), each phase after a barrier and a watchdog beat.
  void iteration(int iter, double* row, const Control& control, backend::Progress progress) const {
    beat(iter);
    control.barrier(progress);
    auto t0 = Clock::now();
    comm_alone(row + 3);
    row[0] = since_us(t0);
    beat(iter);
    control.barrier(progress);
    t0 = Clock::now();
    compute_alone();
    row[1] = since_us(t0);
    beat(iter);
    control.barrier(progress);
    t0 = Clock::now();
    both();
    row[2] = since_us(t0);
  }
  void beat(int iter) const {
    if (ops_.progress) ops_.progress(iter);
  }

 private:
  const OverlapOps& ops_;
  overlap::ComputeLoad& compute_;
  bool pipeline_;
  int chunks_;
  int stages_;
  std::vector<overlap::Slot> schedule_;
};

// Rank 0: a round's slowest-rank rows into the samples, and whether to stop (the reason) or how
// many iterations the next round takes.
std::string take_round(OverlapSamples& out, const std::vector<double>& worst, int round, const OverlapPhases& phases,
                       const plan::StopRule& rule, double elapsed_s, int iter, int& next_round) {
  const std::size_t cols = phases.columns();
  for (int r = 0; r < round; ++r) {
    const double* row = worst.data() + static_cast<std::size_t>(r) * cols;
    out.comm_us.push_back(row[0]);
    out.compute_us.push_back(row[1]);
    out.both_us.push_back(row[2]);
    for (int k = 0; k < phases.stages(); ++k) out.stage_us[static_cast<std::size_t>(k)].push_back(row[3 + k]);
  }
  const double per_iter_s = elapsed_s / std::max(iter, 1);
  const int by_time = per_iter_s > 0 ? static_cast<int>((rule.max_time_s - elapsed_s) / per_iter_s) + 1 : round * 2;
  next_round = std::clamp(std::min({round * 2, rule.max_iters - iter, by_time}), 1, 1024);
  return stop_reason(rule, out.both_us, elapsed_s);
}

}  // namespace

OverlapSamples time_overlap(const OverlapOps& ops, const Control& control, const plan::StopRule& rule,
                            backend::Progress progress) {
  const OverlapPhases phases(ops);
  // One untimed pass of each (first-touch of the load's memory, lazy library setup). The watchdog
  // hears progress before every phase: each gets the whole --timeout.
  phases.beat(0);
  phases.compute_alone();
  phases.beat(0);
  phases.both();

  OverlapSamples out;
  out.stage_us.assign(static_cast<std::size_t>(phases.stages()), {});
  std::vector<double> local, worst;
  int iter = 0;
  int round = std::clamp(rule.min_iters, 1, 8);
  const auto t_begin = Clock::now();
  for (;;) {
    local.assign(static_cast<std::size_t>(round) * phases.columns(), 0.0);
    for (int r = 0; r < round; ++r, ++iter) {
      phases.iteration(iter, local.data() + static_cast<std::size_t>(r) * phases.columns(), control, progress);
    }
    control.max_to_root(local, worst);
    std::string reason;
    int next_round = 0;
    if (control.rank() == 0) {
      const double elapsed = std::chrono::duration<double>(Clock::now() - t_begin).count();
      reason = take_round(out, worst, round, phases, rule, elapsed, iter, next_round);
    }
    reason = control.broadcast_string(reason);
    if (!reason.empty()) {
      out.stop_reason = reason;
      break;
    }
    MPI_Bcast(&next_round, 1, MPI_INT, 0, control.comm());
    round = next_round;
  }
  out.iterations = iter;
  return out;
}

}  // namespace collbench::run

namespace collbench::run {

namespace {

constexpr int kOverlapResamples = 2000;
constexpr double kOverlapConfidence = 0.95;

// 95% percentile-bootstrap intervals of efficiency and exposed time: the three phases' samples
// are independent, so each resample draws each phase's median from its own samples (seeded, so a
// record is reproducible). Null intervals when a phase has no samples or efficiency is undefined.
std::pair<nlohmann::json, nlohmann::json> overlap_intervals(const OverlapSamples& s) {
  if (s.comm_us.empty() || s.compute_us.empty() || s.both_us.empty()) return {nullptr, nullptr};
  std::array<std::vector<double>, 3> sorted{s.comm_us, s.compute_us, s.both_us};
  for (auto& v : sorted) std::sort(v.begin(), v.end());
  std::mt19937_64 rng(stats::mix_seed(1, sorted[0].size(), sorted[1].size(), sorted[2].size()));
  std::vector<double> efficiency, exposed;
  for (int i = 0; i < kOverlapResamples; ++i) {
    const double c = stats::resampled_median(sorted[0], rng), p = stats::resampled_median(sorted[1], rng),
                 b = stats::resampled_median(sorted[2], rng);
    const overlap::OverlapMetrics m = overlap::overlap_metrics(c, p, b);
    exposed.push_back(m.exposed_us);
    if (m.efficiency) efficiency.push_back(*m.efficiency);
  }
  const auto interval = [](std::vector<double>& v) -> nlohmann::json {
    if (v.size() < kOverlapResamples) return nullptr;  // undefined in some resamples
    std::sort(v.begin(), v.end());
    const double tail = (1.0 - kOverlapConfidence) / 2.0;
    return nlohmann::json::array({stats::percentile_sorted(v, tail), stats::percentile_sorted(v, 1.0 - tail)});
  };
  return {interval(efficiency), interval(exposed)};
}

}  // namespace

namespace {

// The record's overlap.compute: the load, and its own rate alone (GEMM GFLOP/s, stream GB/s).
nlohmann::json load_record(const Measurement::Overlap& o, const overlap::OverlapMetrics& m) {
  const auto& c = o.compute;
  const int units = std::max(o.chunks, 1) * c.repeat;  // load units per compute-alone sample
  nlohmann::json load{
      {"spec", c.text},     {"name", c.load},
      {"device", o.device}, {"threads", o.device == "cpu" ? nlohmann::json(c.threads) : nlohmann::json(nullptr)},
      {"repeat", c.repeat}, {"description", overlap::describe(c, o.device)}};
  if (c.load == "gemm") {
    load["gemm"] = {
        {"m", c.gemm.m}, {"n", c.gemm.n}, {"k", c.gemm.k}, {"dtype", o.device == "gpu" ? "bfloat16" : "float32"}};
    if (!c.workload.empty()) load["workload"] = c.workload;
    load["gflops_alone"] = m.t_compute_us > 0 ? c.gemm.flops() * units / (m.t_compute_us * 1e3) : 0.0;
  } else if (c.load == "stream") {
    load["bytes"] = c.bytes;
    load["gbps_alone"] = m.t_compute_us > 0 ? 2.0 * static_cast<double>(c.bytes) * units / (m.t_compute_us * 1e3) : 0.0;
  } else if (c.load == "sleep") {
    load["sleep_us"] = c.sleep_us;
  }
  return load;
}

}  // namespace

nlohmann::json overlap_record(const Measurement::Overlap& o, const std::string& progress) {
  const auto& s = o.samples;
  const auto p50 = [](const std::vector<double>& v) { return v.empty() ? 0.0 : stats::summarize(v).p50; };
  const auto stats_json = [](const std::vector<double>& v) -> nlohmann::json {
    if (v.empty()) return nullptr;
    const auto t = stats::summarize(v);
    return {{"p50", t.p50}, {"p5", t.p5}, {"p95", t.p95}, {"min", t.min}, {"max", t.max}, {"cv", t.cv}};
  };
  const overlap::OverlapMetrics m = overlap::overlap_metrics(p50(s.comm_us), p50(s.compute_us), p50(s.both_us));
  const auto intervals = overlap_intervals(s);
  std::uint64_t compute_wrong = 0;
  for (auto w : o.compute_wrong_by_rank) compute_wrong += w;
  const nlohmann::json load = load_record(o, m);
  nlohmann::json j{
      {"t_comm_us", m.t_comm_us},
      {"t_compute_us", m.t_compute_us},
      {"t_both_us", m.t_both_us},
      {"exposed_us", m.exposed_us},
      {"efficiency", m.efficiency ? nlohmann::json(*m.efficiency) : nlohmann::json(nullptr)},
      {"efficiency_ci", intervals.first},
      {"exposed_ci_us", intervals.second},
      {"exposed_fraction", m.t_comm_us > 0 ? nlohmann::json(m.exposed_us / m.t_comm_us) : nlohmann::json(nullptr)},
      {"iterations", s.iterations},
      {"stop_reason", s.stop_reason},
      {"progress", progress},
      {"compute", load},
      {"compute_wrong", compute_wrong},
      {"time_us",
       {{"comm", stats_json(s.comm_us)}, {"compute", stats_json(s.compute_us)}, {"both", stats_json(s.both_us)}}},
      {"pipeline", nullptr}};
  if (o.chunks > 0) {
    std::vector<double> stage_us;
    for (const auto& v : s.stage_us) stage_us.push_back(p50(v));
    overlap::ChunkTimes per_chunk;
    for (double t : stage_us) per_chunk.stage_us.push_back(t / o.chunks);
    per_chunk.compute_us = m.t_compute_us / o.chunks;
    const double ideal = overlap::ideal_step_us(m.t_comm_us, m.t_compute_us);
    j["pipeline"] = {
        {"chunks", o.chunks},
        {"stages", o.stages},
        {"stage_us", stage_us},
        {"step_us", m.t_both_us},
        {"ideal_us", ideal},
        {"serial_us", m.t_comm_us + m.t_compute_us},
        {"schedule_us", overlap::schedule_time_us(overlap::pipeline_schedule(o.chunks, o.stages), per_chunk)},
        {"step_over_ideal", ideal > 0 ? nlohmann::json(m.t_both_us / ideal) : nlohmann::json(nullptr)}};
  }
  return j;
}

}  // namespace collbench::run
