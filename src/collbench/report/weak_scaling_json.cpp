// The weak-scaling report's JSON, as `python3 -m collbench_plot weak-scaling` plots it.
#include "collbench/report/weak_scaling_json.hpp"

#include <fmt/format.h>

namespace collbench::report {

using scaling::Interval;
using scaling::MeasuredPoint;
using scaling::ProjectedPoint;
using scaling::WeakScalingGroup;
using scaling::WeakScalingReport;

namespace {

nlohmann::json interval_json(const std::optional<Interval>& i) {
  return i ? nlohmann::json::array({i->low, i->high}) : nlohmann::json(nullptr);
}

template <class T>
nlohmann::json opt_json(const std::optional<T>& v) {
  return v ? nlohmann::json(*v) : nlohmann::json(nullptr);
}

nlohmann::json measured_point_json(const MeasuredPoint& m) {
  using nlohmann::json;
  json slowest = nullptr;
  if (m.slowest_rank) {
    slowest = {{"rank", *m.slowest_rank},
               {"host", opt_json(m.slowest_host)},
               {"mean_us", opt_json(m.slowest_rank_mean_us)},
               {"median_rank_mean_us", opt_json(m.median_rank_mean_us)}};
  }
  return {{"num_ranks", m.num_ranks},
          {"projected", false},
          {"simulated", m.simulated},
          {"efficiency", opt_json(m.efficiency)},
          {"efficiency_ci", interval_json(m.efficiency_ci)},
          {"pct_bound", opt_json(m.pct_bound)},
          {"pct_bound_ci", interval_json(m.pct_bound_ci)},
          {"anomaly", m.anomaly},
          {"pi", nullptr},
          {"domain_sizes", m.domain_sizes},
          {"num_domains", m.num_domains},
          {"packing", m.packing},
          {"uneven_packing", m.uneven},
          {"p50_us", m.p50_us},
          {"p99_us", m.p99_us},
          {"algbw_gbps", m.algbw_gbps},
          {"busbw_gbps", m.busbw_gbps},
          {"pct_expected", opt_json(m.pct_expected)},
          {"bound_time_us", opt_json(m.bound_time_us)},
          {"bound_busbw_gbps", opt_json(m.bound_busbw_gbps)},
          {"expected_time_us", opt_json(m.expected_time_us)},
          {"expected_busbw_gbps", opt_json(m.expected_busbw_gbps)},
          {"bound_source", m.bound_source.empty() ? json(nullptr) : json(m.bound_source)},
          {"samples", m.samples},
          {"slowest_rank", slowest},
          {"algo_used", m.algo_used.empty() ? json(nullptr) : json(m.algo_used)},
          {"overlap", m.t_both_us ? json{{"t_comm_us", opt_json(m.t_comm_us)},
                                         {"t_compute_us", opt_json(m.t_compute_us)},
                                         {"t_both_us", opt_json(m.t_both_us)},
                                         {"exposed_us", opt_json(m.exposed_us)},
                                         {"efficiency", opt_json(m.overlap_efficiency)}}
                                  : json(nullptr)},
          {"file", m.file},
          {"line", m.line},
          {"run_id", m.run_id},
          {"notes", m.notes}};
}

nlohmann::json projected_point_json(const ProjectedPoint& p) {
  return {{"num_ranks", p.num_ranks},
          {"projected", true},
          {"efficiency", opt_json(p.efficiency)},
          {"efficiency_ci", nullptr},
          {"pi", interval_json(p.pi)},
          {"pct_bound", p.pct_bound},
          {"pct_bound_pi", interval_json(p.pct_bound_pi)},
          {"domain_sizes", p.domain_sizes},
          {"packing", p.packing},
          {"packing_rule", p.packing_rule},
          {"uneven_packing", p.uneven},
          {"system", p.system},
          {"bound_time_us", p.bound_time_us},
          {"bound_busbw_gbps", p.bound_busbw_gbps},
          {"projected_time_us", p.projected_time_us},
          {"projected_busbw_gbps", p.projected_busbw_gbps},
          {"extrapolation", p.extrapolation},
          {"method", p.method},
          {"widening", p.widening},
          {"extrapolation_warning", p.extrapolation_warning},
          {"model_only", p.extrapolation_warning},
          {"interval_clipped", p.interval_clipped},
          {"notes", p.notes}};
}

nlohmann::json group_json(const WeakScalingGroup& g) {
  using nlohmann::json;
  json points = json::array();
  for (const auto& m : g.measured) points.push_back(measured_point_json(m));
  for (const auto& p : g.projected) points.push_back(projected_point_json(p));
  json key = {{"collective", g.collective},
              {"algo", g.algo},
              {"dtype", g.dtype},
              {"backend", g.backend},
              {"scope", g.scope},
              {"bytes_per_rank", g.bytes_per_rank},
              {"overlap", g.overlap.empty() ? json(nullptr) : json(g.overlap)},
              {"place", g.in_place ? "in-place" : "out-of-place"},
              {"timing", g.timing}};
  if (g.redop) key["redop"] = *g.redop;
  json calibration = nullptr;
  if (g.calibration_efficiency) {
    calibration = {{"num_ranks", g.calibration_ranks},
                   {"efficiency_vs_bound", *g.calibration_efficiency},
                   {"ci", interval_json(g.calibration_ci)}};
  }
  return {{"key", key},
          {"reference_ranks", g.reference_ranks > 0 ? json(g.reference_ranks) : json(nullptr)},
          {"calibration", calibration},
          {"notes", g.notes},
          {"points", points}};
}

}  // namespace

nlohmann::json weak_scaling_json(const WeakScalingReport& rep) {
  using nlohmann::json;
  json groups = json::array();
  for (const auto& g : rep.groups) groups.push_back(group_json(g));
  std::string system_title;
  if (rep.cross_system) {
    system_title = fmt::format("measured on {}, projected onto {}", rep.measured_system.value_or("unknown system"),
                               rep.projection_system.value_or(""));
  } else if (rep.measured_system) {
    system_title = *rep.measured_system;
  }
  return {{"schema", scaling::kWeakScalingSchema},
          {"title", rep.title},
          {"system", system_title.empty() ? json(nullptr) : json(system_title)},
          {"measured_system", opt_json(rep.measured_system)},
          {"projection_system", opt_json(rep.projection_system)},
          {"cross_system", rep.cross_system},
          {"projection_status", rep.projection_status.empty() ? json(nullptr) : json(rep.projection_status)},
          {"metric", std::string(to_string(rep.metric))},
          {"confidence", rep.confidence},
          {"bootstrap",
           {{"method", "percentile, medians resampled exactly"}, {"resamples", rep.resamples}, {"seed", rep.seed}}},
          {"requested_ranks", rep.requested_ranks},
          {"extrapolation_warn_factor", rep.extrapolation_warn_factor},
          {"base_ranks", opt_json(rep.base)},
          {"anomaly_below_pct", opt_json(rep.anomaly_below_pct)},
          {"packing", std::string(to_string(rep.packing))},
          {"inputs", rep.inputs},
          {"warnings", rep.warnings},
          {"notes", rep.notes},
          {"groups", groups}};
}

std::string weak_scaling_plot_prefix(std::size_t index) {
  return fmt::format("weak_scaling_{}", index);
}

}  // namespace collbench::report
