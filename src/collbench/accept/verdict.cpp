// Acceptance verdicts: thresholds evaluated on a row's policy values (see verdict.hpp).
#include "collbench/accept/verdict.hpp"

#include <fmt/format.h>

#include "collbench/accept/metric.hpp"
#include "collbench/core/units.hpp"

namespace collbench::accept {
namespace {

// fraction_of_expected beyond the model's checked range (reference.cpp): against the row's
// reference result, or not judged when it has none.
LimitResult reference_limit(const Row& row, double f) {
  LimitResult l;
  l.kind = "fraction_of_reference";
  l.required = f;
  l.metric = "busbw_gbps";
  l.measured = row.busbw;
  if (!row.reference_busbw_gbps) {
    l.note = fmt::format(
        "{} GPUs is beyond the model's checked range ({}), so the expected value is not used alone; give the check "
        "threshold.reference_busbw_gbps (a site baseline) or publish this case in profiles/published/",
        row.num_ranks, row.checked_range);
    return l;
  }
  l.limit = f * *row.reference_busbw_gbps;
  l.judged = row.busbw.has_value();
  l.passed = l.judged && *row.busbw >= *l.limit;
  l.note = fmt::format("reference {}; beyond the checked range ({})", row.reference_source, row.checked_range);
  return l;
}

// Evaluates the thresholds on the row's policy values.
void evaluate_limits(Row& row, const Threshold& t) {
  const auto add = [&row](LimitResult l) { row.limits.push_back(std::move(l)); };
  const auto fraction = [&](const char* kind, double f, const std::optional<double>& model_busbw,
                            const std::optional<double>& model_time, const char* what) {
    LimitResult l;
    l.kind = kind;
    l.required = f;
    if (!model_time || !(*model_time > 0.0)) {
      l.metric = "busbw_gbps";
      l.measured = row.busbw;
      l.note = row.model_note.empty() ? fmt::format("no {} for this case", what) : row.model_note;
      add(l);
      return;
    }
    if (model_busbw && *model_busbw > 0.0) {
      l.metric = "busbw_gbps";
      l.limit = f * *model_busbw;
      l.measured = row.busbw;
      l.judged = row.busbw.has_value();
      l.passed = l.judged && *row.busbw >= *l.limit;
    } else {  // a one-rank communicator has busbw 0: compare times (time <= model time / f)
      l.metric = "time_us";
      l.limit = *model_time / f;
      l.measured = row.time;
      l.judged = row.time.has_value();
      l.passed = l.judged && *row.time <= *l.limit;
    }
    add(l);
  };
  if (t.fraction_of_bound)
    fraction("fraction_of_bound", *t.fraction_of_bound, row.bound_busbw_gbps, row.bound_time_us, "bound");
  if (t.fraction_of_expected && row.beyond_checked_range) {
    add(reference_limit(row, *t.fraction_of_expected));
  } else if (t.fraction_of_expected) {
    fraction("fraction_of_expected", *t.fraction_of_expected, row.expected_busbw_gbps, row.expected_time_us,
             "expected value");
  }
  const auto absolute = [&](const char* kind, double v, const char* metric, const std::optional<double>& measured,
                            bool at_least) {
    LimitResult l;
    l.kind = kind;
    l.required = v;
    l.limit = v;
    l.metric = metric;
    l.measured = measured;
    l.judged = measured.has_value();
    l.passed = l.judged && (at_least ? *measured >= v : *measured <= v);
    if (!l.judged) l.note = "not measured";
    add(l);
  };
  if (t.min_busbw_gbps) absolute("min_busbw_gbps", *t.min_busbw_gbps, "busbw_gbps", row.busbw, true);
  if (t.min_algbw_gbps) absolute("min_algbw_gbps", *t.min_algbw_gbps, "algbw_gbps", row.algbw, true);
  if (t.max_time_us) absolute("max_time_us", *t.max_time_us, "time_us", row.time, false);
  if (t.max_interference) {
    absolute("max_interference", *t.max_interference, "interference", row.interference, false);
    if (!row.interference) row.limits.back().note = "the records carry no interference ratio";
  }
}

std::string limit_text(const LimitResult& l, const Row& row) {
  if (!l.limit || (!l.judged && !l.note.empty())) {
    return fmt::format("{} {:g}: not judged ({})", l.kind, l.required, l.note);
  }
  std::string what;
  if (l.kind == "fraction_of_bound") {
    what = fmt::format("{:g} x bound {}", l.required,
                       l.metric == "time_us" ? format_us(row.bound_time_us.value_or(0))
                                             : format_gbps(row.bound_busbw_gbps.value_or(0)));
  } else if (l.kind == "fraction_of_reference") {
    what =
        fmt::format("{:g} x reference {}, {}", l.required, format_gbps(row.reference_busbw_gbps.value_or(0)), l.note);
  } else if (l.kind == "fraction_of_expected") {
    what = fmt::format("{:g} x expected {}", l.required,
                       l.metric == "time_us" ? format_us(row.expected_time_us.value_or(0))
                                             : format_gbps(row.expected_busbw_gbps.value_or(0)));
  } else {
    what = "floor";
    if (l.kind == "max_time_us" || l.kind == "max_interference") what = "ceiling";
  }
  const bool at_most = lower_is_better(l.metric);
  const char* cmp = l.passed ? (at_most ? "<=" : ">=") : (at_most ? ">" : "<");
  const std::string measured = l.measured ? format_metric(l.metric, *l.measured) : std::string("-");
  return fmt::format("{} {} {} {} ({})", metric_word(l.metric), measured, cmp, format_metric(l.metric, *l.limit), what);
}

// A row without failures or waivers: judged on its thresholds.
void judge_limits(Row& row, const Threshold& t) {
  evaluate_limits(row, t);
  std::vector<std::string> failed, passed, unjudged;
  for (const auto& l : row.limits) {
    if (!l.judged)
      unjudged.push_back(limit_text(l, row));
    else if (!l.passed)
      failed.push_back(limit_text(l, row));
    else
      passed.push_back(limit_text(l, row));
  }
  if (!failed.empty()) {
    row.verdict = Verdict::fail;
    row.reason = failed.front();
    for (std::size_t i = 1; i < failed.size(); ++i) row.reason += "; " + failed[i];
  } else if (passed.empty()) {
    row.verdict = Verdict::fail;
    row.reason = "cannot judge: " + (unjudged.empty() ? std::string("no threshold") : unjudged.front());
    if (!t.has_absolute()) {
      row.reason +=
          "; give the check an absolute floor (min_busbw_gbps, min_algbw_gbps or max_time_us) to "
          "judge it without a model";
    }
  } else {
    row.verdict = Verdict::pass;
    row.reason = passed.front();
    for (std::size_t i = 1; i < passed.size(); ++i) row.reason += "; " + passed[i];
  }
  if (!unjudged.empty() && !passed.empty()) {
    for (const auto& u : unjudged) row.reason += "; " + u;
  }
  row.reason = fmt::format("{} ({})", row.reason, row.policy_text);
}

}  // namespace

void set_verdict(Row& row, const Check& check, const std::vector<std::string>& failures,
                 const std::vector<std::string>& waivers) {
  if (!waivers.empty()) {
    if (check.require_algo) {
      row.verdict = Verdict::fail;
      row.reason = fmt::format("waived ({}), but the check requires algorithm '{}'", waivers.front(), check.base.algo);
    } else {
      row.verdict = Verdict::waived;
      row.reason = waivers.front();
    }
  } else if (!failures.empty()) {
    row.verdict = Verdict::fail;
    row.reason = failures.front();
    for (std::size_t i = 1; i < failures.size(); ++i) row.reason += "; " + failures[i];
  } else {
    judge_limits(row, check.threshold);
  }
  if (row.verdict == Verdict::fail && !row.evidence.empty()) {
    for (const auto& e : row.evidence) row.reason += "; " + e;
  }
}

}  // namespace collbench::accept
