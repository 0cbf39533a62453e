// Beyond the model's checked range: a cross-domain check on a GPU system with more GPUs than any
// published point of its collective that reached the check's fraction of expected
// (profiles/published/, docs/model.md "Validated range") is not judged against the model's
// expected value alone, which nothing has confirmed at that scale.
// Its fraction_of_expected applies to a reference result instead: the check's site baseline
// (threshold.reference_busbw_gbps), else a published point of the same collective, GPU count and
// size; without one that limit is not judged, and the row says why (docs/acceptance.md).
#include <fmt/format.h>

#include "collbench/accept/judge.hpp"

namespace collbench::accept {

void set_reference(Row& row, const Check& check, const Placement& placement, const model::SystemProfile* system,
                   const model::PublishedPoints& published) {
  if (system == nullptr || system->is_cpu() || check.base.scope != Scope::global || placement.num_domains() <= 1 ||
      !check.threshold.fraction_of_expected) {
    return;
  }
  // Checked: where a published point reached this check's own fraction of expected.
  const double f = *check.threshold.fraction_of_expected;
  const model::CheckedRange range = model::checked_range(*system, published, row.collective, row.num_ranks, f);
  if (row.num_ranks <= range.confirmed_gpus) return;
  row.beyond_checked_range = true;
  row.checked_range = range.largest_gpus == 0
                          ? fmt::format("no published {} point on {}", row.collective, system->name)
                          : fmt::format("published {} points on {} reach {:g} x expected up to {} GPUs", row.collective,
                                        system->name, f, range.confirmed_gpus);
  const Threshold& t = check.threshold;
  if (t.reference_busbw_gbps) {
    row.reference_busbw_gbps = t.reference_busbw_gbps;
    row.reference_source = t.reference_source.empty() ? std::string("site baseline (threshold.reference_busbw_gbps)")
                                                      : fmt::format("site baseline: {}", t.reference_source);
    return;
  }
  for (const auto& p : published.points) {
    if (p.collective == row.collective && p.gpus() == row.num_ranks && p.bytes == row.bytes) {
      row.reference_busbw_gbps = p.measured_busbw_gbps;
      row.reference_source = fmt::format("published: {}", p.source);
      return;
    }
  }
}

}  // namespace collbench::accept
