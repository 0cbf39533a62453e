// Acceptance: from a profile to the cases to run (plan_acceptance), and from their records to
// one verdict per check, size and domain (judge). Pure C++: the runner measures, the writers
// (writers.hpp) render. docs/acceptance.md explains every rule.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "collbench/accept/profile.hpp"
#include "collbench/core/placement.hpp"
#include "collbench/model/published.hpp"
#include "collbench/model/system_profile.hpp"
#include "collbench/plan/case.hpp"
#include "collbench/record/record.hpp"

namespace collbench::accept {

inline constexpr const char* kAcceptSchema = "collbench.accept/1";

// ---- plan ----------------------------------------------------------------------------------

struct PlannedCase {
  std::size_t check_index = 0;
  std::uint64_t bytes = 0;
  int repetition = 0;
  int round = -1;  // sendrecv round (all_rounds checks), else -1
  plan::Case spec;
};

// Checks sharing a placement run together (the runner has one placement per run).
struct PlacementGroup {
  std::string label;  // "default", "ranks-per-domain-72", "domain-sizes-72-72-72-40"
  std::optional<int> ranks_per_domain;
  std::optional<std::string> domain_sizes;
  Placement placement;             // as resolved for this run
  std::vector<PlannedCase> cases;  // repetition-major: every check once, then again
};

// The placement a group will run with (the command line's resolution for the check's flags).
using PlacementResolver = std::function<Placement(const std::optional<int>& ranks_per_domain,
                                                  const std::optional<std::string>& domain_sizes)>;

// Expands every check into cases: sizes x rounds x repetitions, grouped by placement, each
// group ordered repetition-major so that a transient disturbance hits one repetition of many
// checks rather than every repetition of one.
std::vector<PlacementGroup> plan_acceptance(const AcceptanceProfile& profile, const PlacementResolver& resolve);

// ---- verdicts ------------------------------------------------------------------------------

enum class Verdict { pass, fail, waived };
std::string_view to_string(Verdict v);  // PASS FAIL WAIVED

struct LimitResult {
  std::string kind;             // a threshold key: fraction_of_bound, min_busbw_gbps, ...
  double required = 0.0;        // the key's value
  std::optional<double> limit;  // in the metric's unit (GB/s or us); null when not judgeable
  std::string metric;           // busbw_gbps, algbw_gbps, time_us, interference (a ratio)
  std::optional<double> measured;
  bool judged = false;
  bool passed = false;
  std::string note;  // why not judged
};

struct Row {
  std::string check, description, collective, algo, dtype, scope;
  std::uint64_t bytes = 0;
  int domain = -1;  // -1: all ranks (scope global)
  int first_rank = 0, num_ranks = 0;
  std::string domain_label;  // "all (ranks 0-3)", "domain 1 (ranks 2-3)"
  std::string policy_text;   // "median of 3"
  // Per-repetition values and the policy's choice, per metric.
  std::vector<double> busbw_gbps, algbw_gbps, time_us;
  std::optional<double> busbw, algbw, time;
  // Concurrent families (ep-dp-concurrent): t_both / max(t_ep, t_dp) per repetition, and the
  // policy's choice (median, or the smallest for best).
  std::vector<double> interference_values;
  std::optional<double> interference;
  std::optional<double> bound_busbw_gbps, expected_busbw_gbps, bound_time_us, expected_time_us;
  std::string model_note;  // why there is no bound, when there is none
  // Beyond the model's checked range (a GPU, cross-domain row with more GPUs than any published
  // point of its collective): fraction_of_expected is judged against a reference result instead
  // (reference.cpp). `checked_range` says how far the model was checked; the reference is a site
  // baseline (threshold.reference_busbw_gbps) or a published point of the same case.
  bool beyond_checked_range = false;
  std::string checked_range;
  std::optional<double> reference_busbw_gbps;
  std::string reference_source;
  std::vector<LimitResult> limits;
  std::string primary_metric;  // what the console's "measured" column shows
  Verdict verdict = Verdict::pass;
  std::string reason;
  std::vector<std::string> evidence;  // named stragglers / slow pairs
  double timed_s = 0.0;               // timed seconds of the records judged (iterations x mean time, summed)
};

struct AcceptReport {
  std::string profile, source, description;
  std::string system;       // system profile used for bounds, or "" (none)
  std::string system_note;  // why there is none
  int num_ranks = 0;
  std::string started_at, finished_at;  // ISO 8601 UTC (set by the command)
  double duration_s = 0.0;              // wall time of the measurement runs (set by the command)
  double finished_unix = 0.0;
  std::vector<std::string> record_files;
  std::optional<std::string> fault;
  std::vector<Row> rows;
  std::vector<std::string> notes;

  [[nodiscard]] std::size_t count(Verdict v) const;
  [[nodiscard]] int exit_code() const;  // 1 when any row FAILs, else 0
};

// One record per planned case (the runner's records, in the same order), per group.
struct GroupRecords {
  const PlacementGroup* group = nullptr;
  std::vector<record::CaseRecord> records;
};

// Marks a row beyond the model's checked range and finds its reference result (reference.cpp).
void set_reference(Row& row, const Check& check, const Placement& placement, const model::SystemProfile* system,
                   const model::PublishedPoints& published);

// Judges every check. `system` (may be null) gives per-domain bounds for scope-domain checks;
// scope-global checks use the records' own model fields.
// `hosts` (rank -> host name; may be empty) names the host of every rank the evidence names.
AcceptReport judge(const AcceptanceProfile& profile, const std::vector<GroupRecords>& groups,
                   const model::SystemProfile* system, const std::vector<std::string>& hosts = {});

}  // namespace collbench::accept
