// Weak-scaling report: how well the per-GPU performance of a collective at a fixed size per
// rank holds up as the rank count N grows (e.g. 256 -> 512 -> 1,024 GPUs, or 1 -> 2 -> 4 CPU
// ranks), measured against the analytic bound, with bootstrap confidence intervals, and model
// projections to rank counts that were not measured. The method is documented in
// docs/report.md. Pure C++ (no MPI, no GPU): it reads records and system profiles only.
//
// Every number comes from a record, from the model (labelled with the profile it came from),
// or from a projection (labelled `projected`, kept apart from measured points).
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "collbench/model/system_profile.hpp"
#include "collbench/record/input_file.hpp"
#include "collbench/stats/median_bootstrap.hpp"

namespace collbench::scaling {

inline constexpr const char* kWeakScalingSchema = "collbench.weak_scaling/1";

// ---- bootstrap (stats/median_bootstrap.hpp) ------------------------------------------------------

using stats::bootstrap_median_ci;
using stats::bootstrap_median_ratio_ci;
using stats::Interval;
using stats::resampled_median;

// ---- options -----------------------------------------------------------------------------------

// The per-GPU metric of E(N): busbw (GB/s per rank; the default) or time (1 / p50 at a fixed
// size per rank, i.e. per-GPU throughput).
enum class Metric { busbw, time };
Metric parse_metric(std::string_view name);
std::string_view to_string(Metric m);
// What E(N) is for this metric, as the reports (Markdown, HTML) state it.
std::string_view efficiency_definition(Metric m);

// How a projection to N ranks fills domains of M ranks (M: the calibration point's largest
// domain). full: N/M whole domains, no projection when M does not divide N; even: ceil(N/M)
// domains as equal as possible (sizes differ by at most one); partial: whole domains and a
// partial last one (its few NICs carry its ranks' off-domain share: a lower bound).
enum class Packing { full, even, partial };
Packing parse_packing(std::string_view name);
std::string_view to_string(Packing p);
// The domain sizes of N ranks in domains of at most M under `packing`; empty for full packing
// when M does not divide N.
std::vector<int> projected_domain_sizes(int n, int m, Packing packing);

struct WeakScalingOptions {
  std::vector<int> requested_ranks{256, 512, 1024};  // projected when not measured
  Metric metric = Metric::busbw;
  // --system: the system the records were measured on, and the profile projections use. A
  // record whose model.system (or run header system) names another system is refused unless
  // project_onto is set.
  std::optional<model::SystemProfile> system;
  // --project-onto: project the measurements onto this system explicitly (cross-system).
  std::optional<model::SystemProfile> project_onto;
  double confidence = 0.95;
  int resamples = 2000;
  std::uint64_t seed = 1;
  double extrapolation_warn_factor = 4.0;  // warn when N > factor x the largest measured N
  // --calibrate-at N: calibrate projections on the point at N (default: the largest measured N) and
  // project every requested rank count above it, measured or not, so a projection from a small
  // point can be drawn beside the measured (or simulated) points it tries to predict.
  std::optional<int> calibrate_at;
  // --base N: the reference point N0 of E(N) (default: the smallest measured N with a positive metric).
  std::optional<int> base;
  // --anomaly-below PCT: measured points below PCT % of their bound are anomalies: flagged in every
  // format and left out of calibration. Default (nullopt): 40 for GPU measurements (backend nccl),
  // off for CPU ones (backend mpi: CPU efficiencies far below 1 are normal, docs/model.md). 0: off.
  std::optional<double> anomaly_below_pct;
  Packing packing = Packing::full;  // --packing of projected points
  // --allow-mixed-progress: compute E(N) of a point whose progress mode (spin, yield) differs from
  // the reference point's; without it such a point has no E(N) (a note and a warning say why).
  bool allow_mixed_progress = false;
};

// A projected point's prediction interval (docs/report.md, "Intervals within the physics"): the
// calibration's relative interval `rel` (its ends over the calibration efficiency) widened by k,
// applied to the projected %bound, and clipped to [0, 100]: no projection implies beating the
// bound. E(N) at a fixed N is proportional to the efficiency, so its interval is the same one
// scaled by efficiency / pct_bound, and both panels of a plot show one interval; its upper end is
// then at most bound_busbw(N) / busbw(N0). `clipped` when the upper end was cut (the widened
// calibration spread reached `unclipped_high` percent).
struct ProjectedInterval {
  Interval pct_bound;
  std::optional<Interval> efficiency;
  bool clipped = false;
  double unclipped_high = 0.0;
};
ProjectedInterval projected_interval(double pct_bound, const Interval& rel, double k, std::optional<double> efficiency);

// The efficiency against the bound at N between two measured points (n_lo < N < n_hi), linear in
// log2 N: eff_lo + t (eff_hi - eff_lo), t = log2(N / n_lo) / log2(n_hi / n_lo). A projection
// between measured points uses it; only beyond the largest is the largest's efficiency carried.
double interpolate_efficiency(int n_lo, double eff_lo, int n_hi, double eff_hi, int n);

// ---- the report --------------------------------------------------------------------------------

struct MeasuredPoint {
  int num_ranks = 0;
  std::vector<int> domain_sizes;
  int num_domains = 0;
  std::string packing;  // "4x64", "3x72+40"
  bool uneven = false;  // domains of different sizes
  std::string file, run_id, algo_used;
  bool simulated = false;  // the record came from a simulation (SimGrid SMPI), not a measurement
  std::string progress;    // the record's progress mode (spin, yield); empty when it has none (imports)
  int line = 0;
  std::size_t samples = 0;
  double p50_us = 0, p99_us = 0, algbw_gbps = 0, busbw_gbps = 0;
  std::optional<double> efficiency;  // E(N)
  std::optional<Interval> efficiency_ci;
  std::optional<double> bound_time_us, bound_busbw_gbps, expected_time_us, expected_busbw_gbps;
  std::optional<double> pct_bound;  // 100 x bound time / p50
  std::optional<Interval> pct_bound_ci;
  std::optional<double> pct_expected;  // 100 x expected time / p50
  bool anomaly = false;                // pct_bound below the anomaly threshold: not a calibration point
  std::string bound_source;            // "record (model.system X)", "model: profile X (computed by the report)", ""
  std::optional<int> slowest_rank;     // argmax of per_rank.mean_us
  std::optional<double> slowest_rank_mean_us, median_rank_mean_us;
  std::optional<std::string> slowest_host;
  // Overlap mode (record.overlap, docs/overlap.md): the collective beside the group's compute load.
  std::optional<double> t_comm_us, t_compute_us, t_both_us, exposed_us, overlap_efficiency;
  nlohmann::json overlap;  // the record's overlap object (renderers print it with report/overlap_text.hpp)
  std::vector<std::string> notes;
};

struct ProjectedPoint {
  int num_ranks = 0;
  std::vector<int> domain_sizes;
  std::string packing;
  std::string packing_rule;  // full | even | partial (--packing)
  bool uneven = false;
  std::string system;  // profile whose bound is used
  double bound_time_us = 0, bound_busbw_gbps = 0;
  double projected_time_us = 0, projected_busbw_gbps = 0;  // bound x calibration efficiency
  std::optional<double> efficiency;                        // projected E(N)
  std::optional<Interval> pi;                              // prediction interval of E(N)
  double pct_bound = 0;                                    // 100 x calibration efficiency
  std::optional<Interval> pct_bound_pi;
  double extrapolation = 1.0;          // N / largest measured N
  double widening = 1.0;               // k = 1 + log2(max(1, N / L))
  bool extrapolation_warning = false;  // N > extrapolation_warn_factor x L: "model only", drawn dashed
  bool interval_clipped = false;       // the prediction interval was cut at the bound (a note says by how much)
  // How the efficiency was chosen: "interpolated" between the measured points either side of N,
  // "nearest measured" below the smallest, "extrapolated from the largest measured N" above it,
  // or "calibrated at N=... (--calibrate-at)".
  std::string method;
  std::vector<std::string> notes;
};

struct WeakScalingGroup {
  std::string collective, algo, dtype, scope, backend, timing;
  std::optional<std::string> redop;
  bool in_place = false;
  std::uint64_t bytes_per_rank = 0;
  std::string overlap;                    // the compute load beside the collective (--overlap spec; chunks), or empty
  int reference_ranks = 0;                // N0; 0 when no point has a positive metric
  std::vector<MeasuredPoint> measured;    // ascending N
  std::vector<ProjectedPoint> projected;  // ascending N
  // Calibration of projections: efficiency vs bound at the largest measured N (or --calibrate-at).
  int calibration_ranks = 0;
  std::optional<double> calibration_efficiency;
  std::optional<Interval> calibration_ci;
  std::vector<std::string> notes;  // why a projection or an E(N) is missing, duplicates, ...
};

struct WeakScalingReport {
  std::string title;
  std::vector<std::string> inputs;
  std::optional<std::string> measured_system;    // from records, run headers or --system
  std::optional<std::string> projection_system;  // profile used for projections
  bool cross_system = false;                     // --project-onto another system
  std::string projection_status;                 // empty when projections were made; else why not
  Metric metric = Metric::busbw;
  double confidence = 0.95;
  int resamples = 0;
  std::uint64_t seed = 0;
  std::vector<int> requested_ranks;
  double extrapolation_warn_factor = 4.0;
  std::optional<int> base;                  // --base
  std::optional<double> anomaly_below_pct;  // --anomaly-below; nullopt: the default per record
  Packing packing = Packing::full;
  std::vector<WeakScalingGroup> groups;
  std::vector<std::string> warnings;  // reader warnings, extrapolation warnings
  std::vector<std::string> notes;     // cases left out and why
};

// Builds the report. InputError when nothing can be grouped (no measured ok cases), when records
// name several systems, or when --system contradicts the records without --project-onto.
WeakScalingReport build_weak_scaling(const std::vector<record::InputFile>& files, const WeakScalingOptions& options);

}  // namespace collbench::scaling
