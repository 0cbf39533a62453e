// The CI performance gate (see gate.hpp; the method is derived in docs/gate.md).
#include "collbench/report/gate.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <numeric>
#include <set>
#include <unordered_map>

#include "collbench/core/error.hpp"
#include "collbench/core/units.hpp"
#include "collbench/report/escape.hpp"
#include "collbench/stats/compare.hpp"

namespace collbench::report {

// ---- policy --------------------------------------------------------------------------------

namespace {

// The collective names of INTERFACES.md section 1 (the report layer does not link the
// collective registry), plus "default" for every collective not listed.
const std::vector<std::string>& floor_keys() {
  static const std::vector<std::string> keys{"default",      "allreduce",   "reducescatter", "allgather",
                                             "alltoall",     "alltoallv",   "broadcast",     "sendrecv",
                                             "moe-dispatch", "moe-combine", "moe-roundtrip"};
  return keys;
}

std::string where(const std::string& source, const YAML::Node& node, std::string_view key) {
  const auto mark = node.Mark();
  if (mark.line >= 0) return fmt::format("{}:{}: key '{}'", source, mark.line + 1, key);
  return fmt::format("{}: key '{}'", source, key);
}

std::string scalar_text(const YAML::Node& value, const std::string& at) {
  if (!value.IsScalar()) throw InputError(at + ": expected a single value");
  return value.as<std::string>();
}

// An accepted interval of a policy value, printed in messages as e.g. (0, 1].
struct Bounds {
  double low, high;
  bool low_inclusive, high_inclusive;
};
constexpr Bounds kOpenUnit{0.0, 1.0, false, false};    // alpha, confidence
constexpr Bounds kEfficiency{0.0, 1.0, false, true};   // floors
constexpr Bounds kMinEffect{0.0, 10.0, true, true};    // a fraction: 10 = 11x slower
constexpr Bounds kMultiplier{0.0, 100.0, true, true};  // noise multiplier

double parse_number(const YAML::Node& value, const std::string& at, const Bounds& b) {
  const std::string text = scalar_text(value, at);
  double x = 0.0;
  try {
    std::size_t pos = 0;
    x = std::stod(text, &pos);
    if (pos != text.size()) throw std::invalid_argument("trailing text");
  } catch (const std::exception&) {
    throw InputError(fmt::format("{}: '{}' is not a number", at, text));
  }
  const bool ok =
      std::isfinite(x) && (b.low_inclusive ? x >= b.low : x > b.low) && (b.high_inclusive ? x <= b.high : x < b.high);
  if (!ok) {
    throw InputError(fmt::format("{}: {} is out of range; accepted: {}{}, {}{}", at, text, b.low_inclusive ? "[" : "(",
                                 b.low, b.high, b.high_inclusive ? "]" : ")"));
  }
  return x;
}

int parse_integer(const YAML::Node& value, const std::string& at, int low, int high) {
  const std::string text = scalar_text(value, at);
  long x = 0;
  try {
    std::size_t pos = 0;
    x = std::stol(text, &pos);
    if (pos != text.size()) throw std::invalid_argument("trailing text");
  } catch (const std::exception&) {
    throw InputError(fmt::format("{}: '{}' is not a whole number", at, text));
  }
  if (x < low || x > high) throw InputError(fmt::format("{}: {} is out of range; accepted: {}..{}", at, x, low, high));
  return static_cast<int>(x);
}

bool parse_boolean(const YAML::Node& value, const std::string& at) {
  const std::string v = scalar_text(value, at);
  if (v == "true" || v == "yes" || v == "on") return true;
  if (v == "false" || v == "no" || v == "off") return false;
  throw InputError(fmt::format("{}: '{}' is not a boolean; accepted: true, false", at, v));
}

}  // namespace

const std::vector<std::string>& gate_policy_keys() {
  static const std::vector<std::string> keys{"description", "repetitions", "min_samples_per_repetition", "alpha",
                                             "confidence",  "min_effect",  "noise_multiplier",           "fail_on_warn",
                                             "floors"};
  return keys;
}

std::optional<double> GatePolicy::floor_for(const std::string& collective) const {
  if (const auto it = floors.find(collective); it != floors.end()) return it->second;
  if (const auto it = floors.find("default"); it != floors.end()) return it->second;
  return std::nullopt;
}

GatePolicy parse_gate_policy(std::string_view yaml_text, const std::string& source) {
  YAML::Node root;
  try {
    root = YAML::Load(std::string(yaml_text));
  } catch (const YAML::Exception& e) {
    throw InputError(fmt::format("{}:{}: invalid YAML: {}", source, e.mark.line + 1, e.msg));
  }
  GatePolicy p;
  p.source = source;
  if (root.IsNull()) return p;  // an empty file: every default
  if (!root.IsMap()) {
    throw InputError(source + ": a gate policy must be a mapping with keys: " + join(gate_policy_keys()));
  }
  const auto& keys = gate_policy_keys();
  for (const auto& kv : root) {
    if (!kv.first.IsScalar()) throw InputError(where(source, kv.first, "?") + ": keys must be plain names");
    const auto key = kv.first.Scalar();
    const std::string at = where(source, kv.first, key);
    const YAML::Node& v = kv.second;
    if (std::find(keys.begin(), keys.end(), key) == keys.end()) {
      throw InputError(at + ": " + unknown_name_message("policy key", key, keys));
    }
    if (key == "description") {
      scalar_text(v, at);
    } else if (key == "repetitions") {
      p.repetitions = parse_integer(v, at, 2, 10000);
    } else if (key == "min_samples_per_repetition") {
      p.min_samples_per_repetition = parse_integer(v, at, 1, 1000000);
    } else if (key == "alpha") {
      p.alpha = parse_number(v, at, kOpenUnit);
    } else if (key == "confidence") {
      p.confidence = parse_number(v, at, kOpenUnit);
    } else if (key == "min_effect") {
      p.min_effect = parse_number(v, at, kMinEffect);
    } else if (key == "noise_multiplier") {
      p.noise_multiplier = parse_number(v, at, kMultiplier);
    } else if (key == "fail_on_warn") {
      p.fail_on_warn = parse_boolean(v, at);
    } else if (key == "floors") {
      if (v.IsNull()) continue;
      if (!v.IsMap()) throw InputError(at + ": expected a mapping of collective: minimum efficiency");
      for (const auto& f : v) {
        if (!f.first.IsScalar()) throw InputError(where(source, f.first, "floors.?") + ": keys must be plain names");
        const auto name = f.first.Scalar();
        const std::string fat = where(source, f.first, "floors." + name);
        if (std::find(floor_keys().begin(), floor_keys().end(), name) == floor_keys().end()) {
          throw InputError(fat + ": " + unknown_name_message("floors key", name, floor_keys()));
        }
        // "alltoall: null": exempt from the default floor.
        p.floors[name] =
            f.second.IsNull() ? std::nullopt : std::optional<double>(parse_number(f.second, fat, kEfficiency));
      }
    }
  }
  return p;
}

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

namespace {

constexpr std::array<Verdict, 8> kAllVerdicts{Verdict::regression, Verdict::below_floor, Verdict::warn,
                                              Verdict::ambiguous,  Verdict::improved,    Verdict::pass,
                                              Verdict::missing,    Verdict::incomparable};

bool is_failure(Verdict v, bool fail_on_warn) {
  return v == Verdict::regression || v == Verdict::below_floor ||
         (fail_on_warn && (v == Verdict::warn || v == Verdict::ambiguous));
}

bool is_skipped(Verdict v) {
  return v == Verdict::missing || v == Verdict::incomparable;
}

}  // namespace

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
                                         const std::optional<record::RunHeader>& current_header) {
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
  return why;
}

// ---- the relative test ---------------------------------------------------------------------

namespace {

std::string ratio_text(double r) {
  return fmt::format("x{:.3f}", r);
}

std::string interval_text(const RelativeTest& t) {
  return fmt::format("[{}, {}] ({:.0f}% CI)", ratio_text(t.ratio_ci_low), ratio_text(t.ratio_ci_high),
                     100.0 * t.ci_confidence);
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
    reason = fmt::format("slower {} {}; q = {:.2g} <= alpha {:g}; beyond the {}", ratio_text(t.ratio), interval_text(t),
                         t.q_slower, alpha, effect);
    return Verdict::regression;
  }
  if (fast_significant && fast_relevant) {
    reason = fmt::format("faster {} {}; q = {:.2g} <= alpha {:g}; beyond the {}", ratio_text(t.ratio), interval_text(t),
                         t.q_faster, alpha, effect);
    return Verdict::improved;
  }
  if (slow_relevant) {
    reason = fmt::format("slower {} {} beyond the {}, but not significant (q = {:.2g} > alpha {:g})",
                         ratio_text(t.ratio), interval_text(t), effect, t.q_slower, alpha);
    return Verdict::warn;
  }
  if (slow_significant || fast_significant) {
    reason = fmt::format("significant ({}, q = {:.2g}) but within the {}", ratio_text(t.ratio),
                         std::min(t.q_slower, t.q_faster), effect);
  } else {
    reason = fmt::format("no significant change: {} {}; q = {:.2g} (slower), {:.2g} (faster)", ratio_text(t.ratio),
                         interval_text(t), t.q_slower, t.q_faster);
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

}  // namespace

GateReport run_gate(const record::ResultFile& baseline, const record::ResultFile& current, const GatePolicy& policy,
                    const GateOptions& options) {
  if (!options.allow_faults) {
    refuse_faults(baseline);
    refuse_faults(current);
  }
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
    const auto& c = current.cases[it->second];
    CaseVerdict v = identity(c);
    v.baseline_p50_us = p50_of(b);
    v.current_p50_us = p50_of(c);
    v.floor = floor_check(c, policy);
    const auto why = incomparability(b, baseline.header, c, current.header);
    if (!why.empty()) {
      v.verdict = Verdict::incomparable;
      v.reason = join(why, "; ");
      report.cases.push_back(std::move(v));
      continue;
    }
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
    } else if (!positive(bb.medians) || !positive(cb.medians)) {
      v.verdict = Verdict::ambiguous;
      v.reason = "a per-repetition median is not a positive time; the log-time test needs positive times";
    } else {
      v.test = relative_test(std::move(bb.medians), std::move(cb.medians), policy);
      tested.push_back(report.cases.size());
    }
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

  // Benjamini-Hochberg over every case with a test, separately for each direction.
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
    v.verdict = decide(*v.test, policy.alpha, v.reason);
  }

  // An absolute floor needs no baseline: it overrides any other verdict.
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
  return report;
}

// ---- writers -------------------------------------------------------------------------------

namespace {

nlohmann::json optional_json(const std::optional<double>& v) {
  return v ? nlohmann::json(*v) : nlohmann::json();
}
nlohmann::json optional_json(const std::optional<std::string>& v) {
  return v ? nlohmann::json(*v) : nlohmann::json();
}

nlohmann::json policy_json(const GatePolicy& p) {
  nlohmann::json floors = nlohmann::json::object();
  for (const auto& [name, value] : p.floors) floors[name] = optional_json(value);
  return {{"source", p.source},
          {"repetitions", p.repetitions},
          {"min_samples_per_repetition", p.min_samples_per_repetition},
          {"alpha", p.alpha},
          {"confidence", p.confidence},
          {"min_effect", p.min_effect},
          {"noise_multiplier", p.noise_multiplier},
          {"fail_on_warn", p.fail_on_warn},
          {"floors", floors}};
}

std::string summary_line(const GateReport& r) {
  std::vector<std::string> parts;
  for (Verdict v : kAllVerdicts) {
    if (const auto n = r.count(v); n != 0) parts.push_back(fmt::format("{} {}", n, to_string(v)));
  }
  if (parts.empty()) parts.emplace_back("no cases");
  return join(parts, ", ");
}

std::string p50_text(const std::optional<double>& v) {
  return v ? fmt::format("{:.4g}", *v) : "-";
}

std::string case_label(const CaseVerdict& c) {
  return fmt::format("{} {} {} {} n={}", c.collective, c.algo, c.dtype, format_bytes(c.bytes), c.num_ranks);
}

// The numbers of a case as one line (JUnit messages and bodies).
std::string numbers_line(const CaseVerdict& c) {
  std::string s =
      fmt::format("baseline p50 {} us, current p50 {} us", p50_text(c.baseline_p50_us), p50_text(c.current_p50_us));
  if (c.test) {
    const auto& t = *c.test;
    s += fmt::format(
        "; HL ratio {} [{}, {}]; U = {:g} ({}); p = {:.3g}/{:.3g}, q = {:.3g}/{:.3g} (slower/faster); "
        "noise CV {:.3f}; minimum effect {:.1f}%; repetitions {} vs {}",
        ratio_text(t.ratio), ratio_text(t.ratio_ci_low), ratio_text(t.ratio_ci_high), t.u,
        t.exact ? "exact" : "normal approx.", t.p_slower, t.p_faster, t.q_slower, t.q_faster, t.noise_cv,
        100.0 * t.min_effect, t.baseline_blocks_us.size(), t.current_blocks_us.size());
  }
  if (c.floor && c.floor->efficiency) {
    s += fmt::format("; efficiency {:.3f} vs floor {:.3f}", *c.floor->efficiency, c.floor->floor);
  }
  return s;
}

}  // namespace

nlohmann::json gate_to_json(const GateReport& r) {
  nlohmann::json counts = nlohmann::json::object();
  for (Verdict v : kAllVerdicts) counts[std::string(to_string(v))] = r.count(v);
  nlohmann::json cases = nlohmann::json::array();
  for (const auto& c : r.cases) {
    nlohmann::json j = {{"case_key", c.case_key},
                        {"verdict", to_string(c.verdict)},
                        {"reason", c.reason},
                        {"collective", c.collective},
                        {"algo", c.algo},
                        {"dtype", c.dtype},
                        {"backend", c.backend},
                        {"bytes", c.bytes},
                        {"num_ranks", c.num_ranks},
                        {"baseline_p50_us", optional_json(c.baseline_p50_us)},
                        {"current_p50_us", optional_json(c.current_p50_us)},
                        {"floor", nullptr},
                        {"test", nullptr}};
    if (c.floor) {
      j["floor"] = {
          {"floor", c.floor->floor}, {"efficiency", optional_json(c.floor->efficiency)}, {"passed", c.floor->passed}};
    }
    if (c.test) {
      const auto& t = *c.test;
      j["test"] = {{"repetitions_baseline", t.baseline_blocks_us.size()},
                   {"repetitions_current", t.current_blocks_us.size()},
                   {"baseline_blocks_us", t.baseline_blocks_us},
                   {"current_blocks_us", t.current_blocks_us},
                   {"shift_log", t.shift_log},
                   {"ci_low_log", t.ci_low_log},
                   {"ci_high_log", t.ci_high_log},
                   {"ci_confidence", t.ci_confidence},
                   {"ratio", t.ratio},
                   {"ratio_ci_low", t.ratio_ci_low},
                   {"ratio_ci_high", t.ratio_ci_high},
                   {"u", t.u},
                   {"exact", t.exact},
                   {"p_slower", t.p_slower},
                   {"p_faster", t.p_faster},
                   {"q_slower", t.q_slower},
                   {"q_faster", t.q_faster},
                   {"noise_cv", t.noise_cv},
                   {"min_effect", t.min_effect}};
    }
    cases.push_back(std::move(j));
  }
  return {{"schema", kGateSchema},
          {"baseline", {{"path", r.baseline_path}, {"run_id", optional_json(r.baseline_run_id)}}},
          {"current", {{"path", r.current_path}, {"run_id", optional_json(r.current_run_id)}}},
          {"policy", policy_json(r.policy)},
          {"summary", {{"counts", counts}, {"exit_code", r.exit_code()}}},
          {"notes", r.notes},
          {"cases", cases}};
}

std::string render_gate_markdown(const GateReport& r) {
  std::string out = "## collbench gate\n\n";
  out += fmt::format(
      "Baseline `{}`, current `{}`, policy `{}` (alpha {:g}, {} repetitions, minimum effect {:g}%, "
      "noise multiplier {:g}).\n\n",
      r.baseline_path, r.current_path, r.policy.source, r.policy.alpha, r.policy.repetitions,
      100.0 * r.policy.min_effect, r.policy.noise_multiplier);
  out += fmt::format("**{}** (exit code {})\n\n", summary_line(r), r.exit_code());
  out +=
      "| Verdict | Case | Baseline p50 (us) | Current p50 (us) | Ratio [CI] | q slower / faster | Min effect | "
      "Reason |\n|---|---|---:|---:|---|---|---:|---|\n";
  for (const auto& c : r.cases) {
    std::string ratio = "-", q = "-", effect = "-";
    if (c.test) {
      ratio = fmt::format("{} [{}, {}]", ratio_text(c.test->ratio), ratio_text(c.test->ratio_ci_low),
                          ratio_text(c.test->ratio_ci_high));
      q = fmt::format("{:.2g} / {:.2g}", c.test->q_slower, c.test->q_faster);
      effect = fmt::format("{:.1f}%", 100.0 * c.test->min_effect);
    }
    out += fmt::format("| {} | {}<br>`{}` | {} | {} | {} | {} | {} | {} |\n", to_string(c.verdict),
                       md_escape(case_label(c)), md_escape(c.case_key), p50_text(c.baseline_p50_us),
                       p50_text(c.current_p50_us), ratio, q, effect, md_escape(c.reason));
  }
  for (const auto& n : r.notes) out += fmt::format("\n> note: {}\n", md_escape(n));
  return out;
}

std::string render_gate_junit(const GateReport& r) {
  std::size_t failures = 0, skipped = 0;
  for (const auto& c : r.cases) {
    if (is_failure(c.verdict, r.policy.fail_on_warn))
      ++failures;
    else if (is_skipped(c.verdict))
      ++skipped;
  }
  std::string out = R"(<?xml version="1.0" encoding="UTF-8"?>)";
  out += '\n';
  const std::string counts =
      fmt::format(R"(tests="{}" failures="{}" errors="0" skipped="{}")", r.cases.size(), failures, skipped);
  out += fmt::format("<testsuites name=\"collbench gate\" {}>\n", counts);
  out += fmt::format("  <testsuite name=\"collbench.gate\" {} time=\"0\">\n", counts);
  out += "    <properties>\n";
  out += fmt::format("      <property name=\"baseline\" value=\"{}\"/>\n", xml_escape(r.baseline_path));
  out += fmt::format("      <property name=\"current\" value=\"{}\"/>\n", xml_escape(r.current_path));
  out += fmt::format("      <property name=\"policy\" value=\"{}\"/>\n", xml_escape(r.policy.source));
  out += "    </properties>\n";
  for (const auto& c : r.cases) {
    out += fmt::format("    <testcase classname=\"collbench.gate.{}\" name=\"{}\" time=\"0\">\n",
                       xml_escape(c.collective), xml_escape(c.case_key));
    const std::string message = fmt::format("{}: {}", to_string(c.verdict), c.reason);
    if (is_failure(c.verdict, r.policy.fail_on_warn)) {
      out += fmt::format("      <failure type=\"{}\" message=\"{}\">{}</failure>\n", to_string(c.verdict),
                         xml_escape(message), xml_escape(numbers_line(c)));
    } else if (is_skipped(c.verdict)) {
      out += fmt::format("      <skipped message=\"{}\"/>\n", xml_escape(message));
    }
    out += fmt::format("      <system-out>{}\n{}</system-out>\n", xml_escape(message), xml_escape(numbers_line(c)));
    out += "    </testcase>\n";
  }
  out += "  </testsuite>\n</testsuites>\n";
  return out;
}

std::string render_gate_table(const GateReport& r) {
  std::string out = fmt::format("# collbench gate: baseline {}{} vs current {}{}\n", r.baseline_path,
                                r.baseline_run_id ? " (run " + *r.baseline_run_id + ")" : "", r.current_path,
                                r.current_run_id ? " (run " + *r.current_run_id + ")" : "");
  out += fmt::format(
      "# policy {}: alpha {:g} (BH), {} repetitions x >= {} samples, minimum effect max({:g}%, {:g} x "
      "noise CV)\n",
      r.policy.source, r.policy.alpha, r.policy.repetitions, r.policy.min_samples_per_repetition,
      100.0 * r.policy.min_effect, r.policy.noise_multiplier);
  out += fmt::format("#{:<12} {:<14} {:<12} {:<9} {:>9} {:>5} {:>11} {:>11} {:>8} {:>19} {:>8} {:>7}  {}\n", "verdict",
                     "collective", "algo", "dtype", "bytes", "ranks", "base p50us", "cur p50us", "ratio", "ratio CI",
                     "q slower", "min eff", "reason");
  for (const auto& c : r.cases) {
    std::string ratio = "-", ci = "-", q = "-", effect = "-";
    if (c.test) {
      ratio = ratio_text(c.test->ratio);
      ci = fmt::format("[{}, {}]", ratio_text(c.test->ratio_ci_low), ratio_text(c.test->ratio_ci_high));
      q = fmt::format("{:.2g}", c.test->q_slower);
      effect = fmt::format("{:.1f}%", 100.0 * c.test->min_effect);
    }
    out += fmt::format(" {:<12} {:<14} {:<12} {:<9} {:>9} {:>5} {:>11} {:>11} {:>8} {:>19} {:>8} {:>7}  {}\n",
                       to_string(c.verdict), c.collective, c.algo, c.dtype, c.bytes, c.num_ranks,
                       p50_text(c.baseline_p50_us), p50_text(c.current_p50_us), ratio, ci, q, effect, c.reason);
  }
  for (const auto& n : r.notes) out += "# note: " + n + "\n";
  out += fmt::format("# {} -> exit {}\n", summary_line(r), r.exit_code());
  return out;
}

// ---- Google Benchmark export ---------------------------------------------------------------

namespace {

nlohmann::json gbench_entry(const std::string& name, const std::string& run_name, std::size_t family,
                            const std::string& run_type, std::size_t repetitions, std::size_t repetition_index,
                            std::uint64_t iterations, double time_us) {
  return {{"name", name},
          {"family_index", family},
          {"per_family_instance_index", 0},
          {"run_name", run_name},
          {"run_type", run_type},
          {"repetitions", repetitions},
          {"repetition_index", repetition_index},
          {"threads", 1},
          {"iterations", iterations},
          {"real_time", time_us},
          {"cpu_time", time_us},  // no CPU time is measured: wall time for both
          {"time_unit", "us"}};
}

// User counters as Google Benchmark prints them (extra numeric keys on an entry).
void add_counters(nlohmann::json& e, const record::CaseRecord& r) {
  e["bytes"] = r.bytes;
  e["algbw_gbps"] = r.algbw_gbps;
  e["busbw_gbps"] = r.busbw_gbps;
  e["num_ranks"] = r.num_ranks;
}

}  // namespace

nlohmann::json export_gbench(const record::ResultFile& file, const GbenchOptions& options) {
  nlohmann::json context = {{"date", file.header ? file.header->started_at : std::string{}},
                            {"host_name", file.header && !file.header->hosts.empty() ? file.header->hosts[0].host : ""},
                            {"executable", "collbench"},
                            {"num_cpus", 0},
                            {"mhz_per_cpu", 0},
                            {"cpu_scaling_enabled", false},
                            {"caches", nlohmann::json::array()},
                            {"load_avg", nlohmann::json::array()},
                            {"library_build_type", "release"},
                            {"collbench_source", file.path}};
  if (file.header) {
    context["collbench_run_id"] = file.header->run_id;
    context["collbench_version"] = file.header->tool_version;
    context["mpi_library"] = optional_json(file.header->mpi_library);
    context["nccl_version"] = optional_json(file.header->nccl_version);
    context["cuda_runtime"] = optional_json(file.header->cuda_runtime);
  }
  nlohmann::json benchmarks = nlohmann::json::array();
  for (std::size_t family = 0; family < file.cases.size(); ++family) {
    const auto& r = file.cases[family];
    const std::string& name = r.case_key;
    if (r.status != "ok" || !r.time_us) {
      auto e = gbench_entry(name, name, family, "iteration", 1, 0, 0, 0.0);
      e["error_occurred"] = true;
      e["error_message"] = fmt::format("status {}{}", r.status, r.reason ? ": " + *r.reason : "");
      benchmarks.push_back(std::move(e));
      continue;
    }
    const auto blocks = stats::block_medians(r.samples_us, options.repetitions, options.min_samples_per_repetition);
    if (blocks.medians.empty()) {
      auto e =
          gbench_entry(name, name, family, "iteration", 1, 0, static_cast<std::uint64_t>(r.iterations), r.time_us->p50);
      add_counters(e, r);
      benchmarks.push_back(std::move(e));
      continue;
    }
    const std::size_t reps = blocks.medians.size();
    const std::size_t n = r.samples_us.size();
    if (!options.aggregates_only) {
      for (std::size_t i = 0; i < reps; ++i) {
        const std::size_t block_size = (i + 1) * n / reps - i * n / reps;
        auto e = gbench_entry(name, name, family, "iteration", reps, i, block_size, blocks.medians[i]);
        add_counters(e, r);
        benchmarks.push_back(std::move(e));
      }
    }
    // Aggregates over the repetitions, as Google Benchmark computes them (stddev with n - 1).
    const double mean = std::accumulate(blocks.medians.begin(), blocks.medians.end(), 0.0) / static_cast<double>(reps);
    double ss = 0.0;
    for (double v : blocks.medians) ss += (v - mean) * (v - mean);
    const double stddev = reps > 1 ? std::sqrt(ss / static_cast<double>(reps - 1)) : 0.0;
    struct Aggregate {
      const char* agg;
      double value;
      const char* unit;
    };
    const std::array<Aggregate, 4> aggregates{{{"mean", mean, "time"},
                                               {"median", stats::median(blocks.medians), "time"},
                                               {"stddev", stddev, "time"},
                                               {"cv", mean > 0.0 ? stddev / mean : 0.0, "percentage"}}};
    for (const auto& a : aggregates) {
      auto e = gbench_entry(name + "_" + a.agg, name, family, "aggregate", reps, 0, reps, a.value);
      e.erase("repetition_index");
      e["aggregate_name"] = a.agg;
      e["aggregate_unit"] = a.unit;
      if (std::string_view(a.unit) == "time") add_counters(e, r);
      benchmarks.push_back(std::move(e));
    }
  }
  return {{"context", context}, {"benchmarks", benchmarks}};
}

}  // namespace collbench::report
