// The line under a repeated case (see repeats_line.hpp). Renders only.
#include "collbench/report/repeats_line.hpp"

#include <fmt/format.h>

#include <vector>

namespace collbench::report {

std::string repeats_line(const record::CaseRecord& r) {
  if (!r.repeats || !r.time_us) return {};
  const record::Repeats& rep = *r.repeats;
  std::vector<std::string> medians;
  for (double v : rep.p50_us) medians.push_back(fmt::format("{:.2f}", v));
  std::string list;
  for (std::size_t i = 0; i < medians.size(); ++i) list += (i == 0 ? "" : ", ") + medians[i];
  return fmt::format(
      "#   repeats {}: p50 {} us -> median {:.2f} us | between repeats: spread {:.1f}%, [{:.2f}, {:.2f}] us "
      "({:.0f}% coverage) | within a run: +-{:.2f}% (95% CI of the median)\n",
      rep.k, list, r.time_us->p50, rep.spread_pct, rep.between_low_us, rep.between_high_us,
      100.0 * rep.between_confidence, rep.within_ci_pct);
}

}  // namespace collbench::report
