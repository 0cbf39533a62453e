// The CI performance gate: verdicts, comparability, the relative test, compare() (see gate.hpp;
// the method is derived in docs/gate.md). Policy files: gate_policy.cpp; writers and the Google
// Benchmark export: report/gate_writers.cpp.
#include "collbench/gate/gate.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>
#include <set>
#include <unordered_map>

#include "collbench/core/error.hpp"
#include "collbench/stats/compare.hpp"

namespace collbench::gate {

// ---- verdicts ------------------------------------------------------------------------------

std::string_view to_string(Verdict v) {
  switch (v) {
    case Verdict::pass:
      return "PASS";
    case Verdict::improved:
      return "IMPROVED";
    case Verdict::warn:
      return "WARN";
    case Verdict::ambiguous:
      return "AMBIGUOUS";
    case Verdict::regression:
      return "REGRESSION";
    case Verdict::below_floor:
      return "BELOW_FLOOR";
    case Verdict::missing:
      return "MISSING";
    case Verdict::incomparable:
      return "INCOMPARABLE";
  }
  return "?";
}

bool is_failure(Verdict v, bool fail_on_warn) {
  return v == Verdict::regression || v == Verdict::below_floor ||
         (fail_on_warn && (v == Verdict::warn || v == Verdict::ambiguous));
}

bool is_skipped(Verdict v) {
  return v == Verdict::missing || v == Verdict::incomparable;
}

std::size_t GateReport::count(Verdict v) const {
  return static_cast<std::size_t>(
      std::count_if(cases.begin(), cases.end(), [v](const CaseVerdict& c) { return c.verdict == v; }));
}

int GateReport::exit_code() const {
  bool any_failure = false;
  bool any_comparable = false;
  for (const auto& c : cases) {
    any_failure = any_failure || is_failure(c.verdict, policy.fail_on_warn);
    any_comparable = any_comparable || !is_skipped(c.verdict);
  }
  if (any_failure) return static_cast<int>(ExitCode::check_failed);
  if (!any_comparable) return static_cast<int>(ExitCode::incomparable);
  return static_cast<int>(ExitCode::ok);
}

// ---- comparability -------------------------------------------------------------------------

std::size_t host_count(const std::optional<record::RunHeader>& header) {
  if (!header) return 0;
  std::set<std::string> hosts;
  for (const auto& h : header->hosts) hosts.insert(h.host);
  return hosts.size();
}

namespace {

std::string shown(const std::optional<std::string>& v) {
  if (!v) return "unknown";
  std::string s = *v;
  if (const auto nl = s.find('\n'); nl != std::string::npos) s.resize(nl);
  if (s.size() > 80) s = s.substr(0, 77) + "...";
  return "'" + s + "'";
}

// The run-header fields whose versions decide a backend's performance: the MPI library for
// host-buffer MPI runs; NCCL and the CUDA runtime for NCCL runs (MPI only bootstraps there).
std::vector<std::string> version_fields(const std::string& backend) {
  if (backend == "mpi") return {"mpi_library"};
  if (backend == "nccl") return {"nccl_version", "cuda_runtime"};
  return {"mpi_library", "nccl_version", "cuda_runtime"};
}

const std::optional<std::string>& header_field(const record::RunHeader& h, const std::string& name) {
  if (name == "mpi_library") return h.mpi_library;
  if (name == "nccl_version") return h.nccl_version;
  return h.cuda_runtime;
}

std::string progress_of(const record::CaseRecord& r) {
  const auto it = r.extra.find("progress");
  return it != r.extra.end() && it->is_string() ? it->get<std::string>() : std::string{};
}

}  // namespace

std::vector<std::string> incomparability(const record::CaseRecord& baseline,
                                         const std::optional<record::RunHeader>& baseline_header,
                                         const record::CaseRecord& current,
                                         const std::optional<record::RunHeader>& current_header, bool allow_simulated) {
  std::vector<std::string> why;
  for (const auto* side : {&baseline, &current}) {
    if (side->status != "ok") {
      why.push_back(fmt::format("{} status {}{}", side == &baseline ? "baseline" : "current", side->status,
                                side->reason ? " (" + *side->reason + ")" : ""));
    }
  }
  // Library versions: both unknown (no headers) is no evidence of a difference; one side
  // unknown is, since a gate must not compare across an unverifiable upgrade.
  if (baseline_header.has_value() != current_header.has_value()) {
    why.push_back(
        fmt::format("{} file has no run header (library versions unknown)", baseline_header ? "current" : "baseline"));
  } else if (baseline_header && current_header) {
    for (const auto& field : version_fields(current.backend)) {
      const auto& b = header_field(*baseline_header, field);
      const auto& c = header_field(*current_header, field);
      if (b != c) why.push_back(fmt::format("{} differs: {} (baseline) vs {} (current)", field, shown(b), shown(c)));
    }
    const std::size_t hb = host_count(baseline_header), hc = host_count(current_header);
    if (hb != 0 && hc != 0 && hb != hc) why.push_back(fmt::format("host count differs: {} vs {}", hb, hc));
  }
  if (baseline.num_ranks != current.num_ranks) {
    why.push_back(fmt::format("num_ranks differs: {} vs {}", baseline.num_ranks, current.num_ranks));
  }
  if (baseline.domain_sizes != current.domain_sizes) {
    why.push_back(fmt::format("domain_sizes differ: [{}] vs [{}]", fmt::join(baseline.domain_sizes, ","),
                              fmt::join(current.domain_sizes, ",")));
  }
  const std::string pb = progress_of(baseline), pc = progress_of(current);
  if (!pb.empty() && !pc.empty() && pb != pc) {
    why.push_back(fmt::format("MPI progress mode differs: {} vs {}", pb, pc));
  }
  if (baseline.simulated != current.simulated && !allow_simulated) {
    why.push_back(
        fmt::format("{} is simulated and {} measured (docs/simulation.md); pass --allow-simulated to "
                    "compare them anyway",
                    baseline.simulated ? "baseline" : "current", baseline.simulated ? "current" : "baseline"));
  }
  return why;
}

// ---- the relative test ---------------------------------------------------------------------

std::string ratio_text(double r) {
  return fmt::format("x{:.3f}", r);
}

namespace {

std::string gate_interval_text(const RelativeTest& t) {
  const std::string between =
      t.method == "repeats" ? fmt::format(", {} vs {} repeats", t.current_blocks_us.size(), t.baseline_blocks_us.size())
                            : std::string();
  return fmt::format("[{}, {}] ({:.0f}% CI{})", ratio_text(t.ratio_ci_low), ratio_text(t.ratio_ci_high),
                     100.0 * t.ci_confidence, between);
}

std::vector<double> logs(const std::vector<double>& values) {
  std::vector<double> out;
  out.reserve(values.size());
  for (double v : values) out.push_back(std::log(v));
  return out;
}

// Both records measured with --repeats (k >= 2 each): the between-repeat test on the logs of the
// repeat medians (docs/gate.md, "Between repeats"): Welch's t (one-sided p-values, the shift of the
// mean log and its interval at policy.confidence), and the minimum effect scaled by the pooled
// standard deviation of the log repeat medians, the launch-to-launch noise.
RelativeTest repeats_test(const std::vector<double>& baseline, const std::vector<double>& current,
                          const GatePolicy& policy) {
  RelativeTest t;
  t.method = "repeats";
  t.baseline_blocks_us = baseline;
  t.current_blocks_us = current;
  const auto w = stats::welch_test(logs(current), logs(baseline), policy.confidence);
  t.shift_log = w->shift;
  t.ci_low_log = w->ci_low;
  t.ci_high_log = w->ci_high;
  t.ci_confidence = policy.confidence;
  t.ratio = std::exp(t.shift_log);
  t.ratio_ci_low = std::exp(t.ci_low_log);
  t.ratio_ci_high = std::exp(t.ci_high_log);
  t.t = w->t;
  t.df = w->df;
  t.p_slower = w->p_greater;
  t.p_faster = w->p_less;
  t.noise_cv = w->pooled_sd;
  t.min_effect_log = std::max(std::log1p(policy.min_effect), policy.noise_multiplier * t.noise_cv);
  t.min_effect = std::expm1(t.min_effect_log);
  return t;
}

// Everything but the q-values (which need every case): the HL shift of log per-repetition
// medians with Moses' interval, both one-sided MWU p-values, and the noise-scaled minimum
// effect max(log(1 + min_effect), k x noise), where noise is the robust pooled scale (1.4826 x
// MAD) of the log block medians. A spread of log values is a relative spread, i.e. a CV:
// log(m (1 + e)) = log m + e + O(e^2).
RelativeTest relative_test(std::vector<double> baseline_blocks, std::vector<double> current_blocks,
                           const GatePolicy& policy) {
  RelativeTest t;
  t.baseline_blocks_us = std::move(baseline_blocks);
  t.current_blocks_us = std::move(current_blocks);
  std::vector<double> lx, ly;  // x = current, y = baseline
  for (double v : t.current_blocks_us) lx.push_back(std::log(v));
  for (double v : t.baseline_blocks_us) ly.push_back(std::log(v));
  const auto hl = stats::hodges_lehmann(lx, ly, policy.confidence);
  t.shift_log = hl->shift;
  t.ci_low_log = hl->ci_low;
  t.ci_high_log = hl->ci_high;
  t.ci_confidence = hl->confidence;
  t.ratio = std::exp(t.shift_log);
  t.ratio_ci_low = std::exp(t.ci_low_log);
  t.ratio_ci_high = std::exp(t.ci_high_log);
  const auto slower = stats::mann_whitney_greater(lx, ly);
  const auto faster = stats::mann_whitney_greater(ly, lx);
  t.u = slower.u;
  t.exact = slower.exact;
  t.p_slower = slower.p_value;
  t.p_faster = faster.p_value;
  t.noise_cv = stats::pooled_mad_scale(lx, ly);
  t.min_effect_log = std::max(std::log1p(policy.min_effect), policy.noise_multiplier * t.noise_cv);
  t.min_effect = std::expm1(t.min_effect_log);
  return t;
}

// The verdict of a completed test (q-values filled in), with its reason.
Verdict decide(const RelativeTest& t, double alpha, std::string& reason) {
  const bool slow_significant = t.q_slower <= alpha;
  const bool fast_significant = t.q_faster <= alpha;
  const bool slow_relevant = t.shift_log >= t.min_effect_log;
  const bool fast_relevant = t.shift_log <= -t.min_effect_log;
  const std::string effect = fmt::format("minimum effect {:.1f}%", 100.0 * t.min_effect);
  if (slow_significant && slow_relevant) {
    reason = fmt::format("slower {} {}; q = {:.2g} <= alpha {:g}; beyond the {}", ratio_text(t.ratio),
                         gate_interval_text(t), t.q_slower, alpha, effect);
    return Verdict::regression;
  }
  if (fast_significant && fast_relevant) {
    reason = fmt::format("faster {} {}; q = {:.2g} <= alpha {:g}; beyond the {}", ratio_text(t.ratio),
                         gate_interval_text(t), t.q_faster, alpha, effect);
    return Verdict::improved;
  }
  if (slow_relevant) {
    reason = fmt::format("slower {} {} beyond the {}, but not significant (q = {:.2g} > alpha {:g})",
                         ratio_text(t.ratio), gate_interval_text(t), effect, t.q_slower, alpha);
    return Verdict::warn;
  }
  if (slow_significant || fast_significant) {
    reason = fmt::format("significant ({}, q = {:.2g}) but within the {}", ratio_text(t.ratio),
                         std::min(t.q_slower, t.q_faster), effect);
  } else {
    reason = fmt::format("no significant change: {} {}; q = {:.2g} (slower), {:.2g} (faster)", ratio_text(t.ratio),
                         gate_interval_text(t), t.q_slower, t.q_faster);
  }
  return Verdict::pass;
}

void refuse_faults(const record::ResultFile& file) {
  if (file.header && file.header->fault) {
    throw InputError(
        fmt::format("{}: the run header carries the injected fault '{}'; the gate refuses faulted "
                    "results (--allow-faults is for testing the gate itself)",
                    file.path, *file.header->fault));
  }
  for (const auto& c : file.cases) {
    if (c.fault) {
      throw InputError(
          fmt::format("{}: case '{}' carries the injected fault '{}'; the gate refuses faulted "
                      "results (--allow-faults is for testing the gate itself)",
                      file.path, c.case_key, *c.fault));
    }
  }
}

std::unordered_map<std::string, std::size_t> index_by_key(const record::ResultFile& file) {
  std::unordered_map<std::string, std::size_t> index;
  for (std::size_t i = 0; i < file.cases.size(); ++i) {
    if (!index.emplace(file.cases[i].case_key, i).second) {
      throw InputError(
          fmt::format("{}: case '{}' appears more than once (records {} and {}); a gate input holds "
                      "one record per case",
                      file.path, file.cases[i].case_key, index[file.cases[i].case_key] + 1, i + 1));
    }
  }
  return index;
}

CaseVerdict identity(const record::CaseRecord& r) {
  CaseVerdict v;
  v.case_key = r.case_key;
  v.collective = r.collective;
  v.algo = r.algo_requested;
  v.dtype = r.dtype;
  v.backend = r.backend;
  v.bytes = r.bytes;
  v.num_ranks = r.num_ranks;
  if (r.time_us) v.timed_s = r.time_us->mean * static_cast<double>(r.iterations) / 1e6;
  return v;
}

std::optional<double> p50_of(const record::CaseRecord& r) {
  if (r.time_us) return r.time_us->p50;
  return std::nullopt;
}

std::optional<FloorCheck> floor_check(const record::CaseRecord& current, const GatePolicy& policy) {
  const auto floor = policy.floor_for(current.collective);
  if (!floor || current.status != "ok") return std::nullopt;
  FloorCheck f;
  f.floor = *floor;
  if (current.model) {
    f.efficiency = current.model->efficiency;
    f.passed = *f.efficiency >= *floor;
  }
  return f;
}

// The repeat medians of both records when both were measured with --repeats (k >= 2) and every
// median is a positive time; nullopt otherwise (the block test decides).
std::optional<std::pair<std::vector<double>, std::vector<double>>> repeat_medians(const record::CaseRecord& b,
                                                                                  const record::CaseRecord& c) {
  const auto usable = [](const record::CaseRecord& r) {
    return r.repeats && r.repeats->p50_us.size() >= 2 &&
           std::all_of(r.repeats->p50_us.begin(), r.repeats->p50_us.end(),
                       [](double x) { return x > 0.0 && std::isfinite(x); });
  };
  if (!usable(b) || !usable(c)) return std::nullopt;
  return std::make_pair(b.repeats->p50_us, c.repeats->p50_us);
}

// A report's inputs, policy and the notes of its files (their warnings, accepted faults).
GateReport gate_report_header(const record::ResultFile& baseline, const record::ResultFile& current,
                              const GatePolicy& policy) {
  GateReport report;
  report.baseline_path = baseline.path;
  report.current_path = current.path;
  if (baseline.header) report.baseline_run_id = baseline.header->run_id;
  if (current.header) report.current_run_id = current.header->run_id;
  report.policy = policy;
  for (const auto* file : {&baseline, &current}) {
    for (const auto& w : file->warnings) report.notes.push_back(w);
    if (file->header && file->header->fault) {
      report.notes.push_back(
          fmt::format("{}: injected fault '{}' accepted (--allow-faults)", file->path, *file->header->fault));
    }
  }
  return report;
}

// The relative test of a comparable pair on its per-repetition block medians, into v.test (true),
// or the ambiguous verdict when the samples cannot give one (false).
bool gate_block_test(const record::CaseRecord& b, const record::CaseRecord& c, const GatePolicy& policy,
                     CaseVerdict& v) {
  auto bb = stats::block_medians(b.samples_us, policy.repetitions, policy.min_samples_per_repetition);
  auto cb = stats::block_medians(c.samples_us, policy.repetitions, policy.min_samples_per_repetition);
  const auto positive = [](const std::vector<double>& medians) {
    return std::all_of(medians.begin(), medians.end(), [](double x) { return x > 0.0 && std::isfinite(x); });
  };
  if (bb.medians.empty() || cb.medians.empty()) {
    v.verdict = Verdict::ambiguous;
    std::vector<std::string> parts;
    if (bb.medians.empty()) parts.push_back("baseline: " + bb.reason);
    if (cb.medians.empty()) parts.push_back("current: " + cb.reason);
    v.reason = "too few samples for the relative test (" + join(parts, "; ") + ")";
    return false;
  }
  if (!positive(bb.medians) || !positive(cb.medians)) {
    v.verdict = Verdict::ambiguous;
    v.reason = "a per-repetition median is not a positive time; the log-time test needs positive times";
    return false;
  }
  v.test = relative_test(std::move(bb.medians), std::move(cb.medians), policy);
  return true;
}

// The verdict of a case in both files, before the BH step: incomparable, ambiguous, or with a
// test awaiting it (`tested`).
CaseVerdict gate_pair_verdict(const record::CaseRecord& b, const record::ResultFile& baseline,
                              const record::CaseRecord& c, const record::ResultFile& current, const GatePolicy& policy,
                              const GateOptions& options, bool& tested) {
  CaseVerdict v = identity(c);
  v.baseline_p50_us = p50_of(b);
  v.current_p50_us = p50_of(c);
  v.floor = floor_check(c, policy);
  tested = false;
  const auto why = incomparability(b, baseline.header, c, current.header, options.allow_simulated);
  if (!why.empty()) {
    v.verdict = Verdict::incomparable;
    v.reason = join(why, "; ");
  } else if (const auto rt = repeat_medians(b, c)) {
    v.test = repeats_test(rt->first, rt->second, policy);
    tested = true;
  } else {
    tested = gate_block_test(b, c, policy, v);
  }
  return v;
}

// Benjamini-Hochberg over every case with a test, separately for each direction, and the
// verdicts of those cases.
void gate_decide_tested(GateReport& report, const std::vector<std::size_t>& tested, double alpha) {
  std::vector<double> p_slower, p_faster;
  for (std::size_t i : tested) {
    p_slower.push_back(report.cases[i].test->p_slower);
    p_faster.push_back(report.cases[i].test->p_faster);
  }
  const auto q_slower = stats::benjamini_hochberg(p_slower);
  const auto q_faster = stats::benjamini_hochberg(p_faster);
  for (std::size_t j = 0; j < tested.size(); ++j) {
    auto& v = report.cases[tested[j]];
    v.test->q_slower = q_slower[j];
    v.test->q_faster = q_faster[j];
    v.verdict = decide(*v.test, alpha, v.reason);
  }
}

// An absolute floor needs no baseline: it overrides any other verdict.
void gate_apply_floors(GateReport& report) {
  std::size_t unchecked_floors = 0;
  for (auto& v : report.cases) {
    if (!v.floor) continue;
    if (!v.floor->efficiency) {
      ++unchecked_floors;
    } else if (!v.floor->passed) {
      v.reason = fmt::format("efficiency {:.3f} < floor {:.3f} ({}: {})", *v.floor->efficiency, v.floor->floor,
                             to_string(v.verdict), v.reason);
      v.verdict = Verdict::below_floor;
    }
  }
  if (unchecked_floors != 0) {
    report.notes.push_back(
        fmt::format("efficiency floors not checked for {} case(s) without a model (measure with "
                    "--system PROFILE to get bounds)",
                    unchecked_floors));
  }
}

}  // namespace

GateReport run_gate(const record::ResultFile& baseline, const record::ResultFile& current, const GatePolicy& policy,
                    const GateOptions& options) {
  if (!options.allow_faults) {
    refuse_faults(baseline);
    refuse_faults(current);
  }
  GateReport report = gate_report_header(baseline, current, policy);
  const auto baseline_index = index_by_key(baseline);
  const auto current_index = index_by_key(current);

  std::vector<std::size_t> tested;  // indices into report.cases awaiting the BH step
  for (const auto& b : baseline.cases) {
    const auto it = current_index.find(b.case_key);
    if (it == current_index.end()) {
      CaseVerdict v = identity(b);
      v.verdict = Verdict::missing;
      v.reason = "only in the baseline (not measured in the current run)";
      v.baseline_p50_us = p50_of(b);
      report.cases.push_back(std::move(v));
      continue;
    }
    bool awaits_bh = false;
    CaseVerdict v = gate_pair_verdict(b, baseline, current.cases[it->second], current, policy, options, awaits_bh);
    if (awaits_bh) tested.push_back(report.cases.size());
    report.cases.push_back(std::move(v));
  }
  for (const auto& c : current.cases) {
    if (baseline_index.count(c.case_key) != 0) continue;
    CaseVerdict v = identity(c);
    v.verdict = Verdict::missing;
    v.reason = "only in the current run (no baseline yet)";
    v.current_p50_us = p50_of(c);
    v.floor = floor_check(c, policy);
    report.cases.push_back(std::move(v));
  }
  gate_decide_tested(report, tested, policy.alpha);
  gate_apply_floors(report);
  return report;
}

}  // namespace collbench::gate
