// The CI performance gate: compares a current results file with a stored baseline case by case
// (matched by case_key) and gives each case a verdict with the numbers behind it:
//   MISSING       the case is in one file only
//   INCOMPARABLE  different backend library versions or topology, or a record not status ok
//   BELOW_FLOOR   the current model efficiency (bound time / measured p50) is under the floor
//   REGRESSION    significantly slower (Benjamini-Hochberg q <= alpha) by at least the
//                 minimum effect
//   IMPROVED      the same, faster
//   WARN          slower by at least the minimum effect, but not significant
//   AMBIGUOUS     the test cannot be run (too few samples for the repetitions, bad times)
//   PASS          everything else (no relevant change shown)
// The relative test works on the logs of per-repetition medians (docs/gate.md derives it). Also
// here: the gate policy (YAML). The writers (JSON, Markdown, JUnit XML, console table) and the
// Google Benchmark JSON exporter render in report/gate_writers.hpp. Pure C++: parsing takes text.
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "collbench/record/jsonl.hpp"
#include "collbench/record/record.hpp"

namespace collbench::gate {

// ---- policy --------------------------------------------------------------------------------

struct GatePolicy {
  int repetitions = 10;                // blocks of consecutive iterations per case
  int min_samples_per_repetition = 5;  // fewer samples per block -> AMBIGUOUS
  double alpha = 0.05;                 // false discovery rate across cases (BH)
  double confidence = 0.95;            // of the Hodges-Lehmann interval
  double min_effect = 0.05;            // smallest relevant change, as a fraction (5%)
  double noise_multiplier = 2.0;       // min effect >= this x noise CV of block medians
  bool fail_on_warn = false;           // WARN and AMBIGUOUS also exit 1
  // Minimum model efficiency per collective; "default" applies to collectives not listed, and
  // a listed collective with no value (YAML null) is exempt from the default.
  std::map<std::string, std::optional<double>> floors;
  std::string source = "<defaults>";  // where the policy came from

  // The floor for a collective, if any.
  [[nodiscard]] std::optional<double> floor_for(const std::string& collective) const;
};

// Parses a policy (YAML text; `source` names it in messages). Unknown keys, values out of range
// and malformed YAML are InputErrors naming source, line and key, with the closest valid key.
GatePolicy parse_gate_policy(std::string_view yaml_text, const std::string& source);

const std::vector<std::string>& gate_policy_keys();

// ---- verdicts ------------------------------------------------------------------------------

enum class Verdict { pass, improved, warn, ambiguous, regression, below_floor, missing, incomparable };
std::string_view to_string(Verdict v);  // PASS, IMPROVED, ..., BELOW_FLOOR, ...
// Every verdict, in the order the summaries list them.
inline constexpr std::array<Verdict, 8> kAllVerdicts{Verdict::regression, Verdict::below_floor, Verdict::warn,
                                                     Verdict::ambiguous,  Verdict::improved,    Verdict::pass,
                                                     Verdict::missing,    Verdict::incomparable};
// A verdict that fails the gate (WARN and AMBIGUOUS only with fail_on_warn).
bool is_failure(Verdict v, bool fail_on_warn);
// MISSING or INCOMPARABLE: nothing was compared.
bool is_skipped(Verdict v);
// A time ratio as printed in verdicts and reports: "x1.234".
std::string ratio_text(double r);

struct FloorCheck {
  double floor = 0.0;
  std::optional<double> efficiency;  // null when the current record has no model
  bool passed = true;
};

// The relative test on log per-repetition medians, x = current, y = baseline. Two methods
// (docs/gate.md): "blocks" (medians of consecutive blocks of one run's samples; Mann-Whitney U and
// Hodges-Lehmann) and, when both records carry --repeats, "repeats" (the repeat medians, each from
// fresh communicators and buffers; Welch's t on their logs).
struct RelativeTest {
  std::string method = "blocks";                              // blocks | repeats
  std::vector<double> baseline_blocks_us, current_blocks_us;  // per-repetition (or per-repeat) medians
  // Hodges-Lehmann shift of log times (log of the typical current/baseline ratio) and its
  // Moses interval, also as ratios exp(.).
  double shift_log = 0.0, ci_low_log = 0.0, ci_high_log = 0.0;
  double ci_confidence = 0.0;  // coverage achieved by the interval
  double ratio = 1.0, ratio_ci_low = 1.0, ratio_ci_high = 1.0;
  // One-sided Mann-Whitney U: U counts (current block > baseline block) pairs (blocks only).
  double u = 0.0;
  // Welch's t of the log repeat medians and its integer degrees of freedom (repeats only).
  double t = 0.0;
  int df = 0;
  double p_slower = 1.0, p_faster = 1.0;  // raw one-sided p-values
  double q_slower = 1.0, q_faster = 1.0;  // Benjamini-Hochberg adjusted across cases
  bool exact = false;
  double noise_cv = 0.0;        // blocks: robust pooled scale (1.4826 MAD) of log block medians;
                                // repeats: pooled standard deviation of log repeat medians (a CV)
  double min_effect = 0.0;      // the case's minimum effect as a fraction: exp(min_effect_log) - 1
  double min_effect_log = 0.0;  // max(log(1 + policy.min_effect), k x noise_cv)
};

struct CaseVerdict {
  std::string case_key;
  Verdict verdict = Verdict::pass;
  std::string reason;  // one line: why this verdict, with the deciding numbers
  // identity (from the current record, else the baseline one)
  std::string collective, algo, dtype, backend;
  std::uint64_t bytes = 0;
  int num_ranks = 0;
  std::optional<double> baseline_p50_us, current_p50_us;
  double timed_s = 0.0;  // seconds in timed iterations behind the record (current, else baseline): mean x iterations
  std::optional<FloorCheck> floor;
  std::optional<RelativeTest> test;
};

struct GateOptions {
  bool allow_faults = false;     // accept records with an injected fault (tests only)
  bool allow_simulated = false;  // compare a simulated record with a measured one (else INCOMPARABLE)
};

struct GateReport {
  std::string baseline_path, current_path;
  std::optional<std::string> baseline_run_id, current_run_id;
  GatePolicy policy;
  std::vector<CaseVerdict> cases;  // baseline order, then cases only in the current file
  std::vector<std::string> notes;  // reader warnings and other remarks
  // Set by the caller (the writers render them): when the gate ran (ISO 8601 UTC, empty when
  // unknown) and its wall time in seconds (reading, testing).
  std::string started_at;
  double duration_s = 0.0;

  [[nodiscard]] std::size_t count(Verdict v) const;
  // 1 regression or floor failure (or WARN/AMBIGUOUS under fail_on_warn), 4 nothing
  // comparable (every case MISSING or INCOMPARABLE, or no cases), else 0.
  [[nodiscard]] int exit_code() const;
};

// Compares `current` with `baseline`. An InputError when a record (or a run header) carries an
// injected fault and !options.allow_faults, or when a file repeats a case_key.
GateReport run_gate(const record::ResultFile& baseline, const record::ResultFile& current, const GatePolicy& policy,
                    const GateOptions& options = {});

// The comparability check of two matched records (with their files' run headers): the list of
// reasons they cannot be compared, empty when they can. A simulated record and a measured one are
// incomparable unless `allow_simulated` (gate --allow-simulated).
std::vector<std::string> incomparability(const record::CaseRecord& baseline,
                                         const std::optional<record::RunHeader>& baseline_header,
                                         const record::CaseRecord& current,
                                         const std::optional<record::RunHeader>& current_header,
                                         bool allow_simulated = false);

// Number of distinct hosts in a run header (0 when unknown).
std::size_t host_count(const std::optional<record::RunHeader>& header);

}  // namespace collbench::gate
