#include "collbench/step/overlap_source.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <map>

#include "collbench/core/collective_facts.hpp"
#include "collbench/core/error.hpp"
#include "collbench/core/units.hpp"

namespace collbench::step {

namespace {

// The collectives whose facts give `use` a preference rank, in that order.
std::vector<std::string> by_preference(std::uint8_t StepUse::*use) {
  std::vector<std::pair<std::uint8_t, std::string>> ranked;
  for (const auto& f : all_collective_facts()) {
    if (f.step.*use > 0) ranked.emplace_back(f.step.*use, std::string(f.name));
  }
  std::sort(ranked.begin(), ranked.end());
  std::vector<std::string> out;
  for (auto& [rank, name] : ranked) out.push_back(std::move(name));
  return out;
}

}  // namespace

const std::vector<std::string>& overlap_collectives(const std::string& kind) {
  static const std::map<std::string, std::vector<std::string>> table{
      {"ep", by_preference(&StepUse::ep)},
      {"tp", by_preference(&StepUse::tp)},
      {"pp", by_preference(&StepUse::pp)},
      {"dp", by_preference(&StepUse::dp)},
  };
  static const std::vector<std::string> none;
  const auto it = table.find(kind);
  return it == table.end() ? none : it->second;
}

namespace {

bool usable(const record::CaseRecord& r) {
  return r.status == "ok" && r.overlap.is_object() && r.overlap.contains("efficiency") &&
         r.overlap["efficiency"].is_number();
}

// Of the usable records of `collective`, the largest bytes, the first at equal bytes; null if none.
const record::CaseRecord* pick(const record::ResultFile& file, const std::string& collective) {
  const record::CaseRecord* best = nullptr;
  for (const auto& r : file.cases) {
    if (r.collective != collective || !usable(r)) continue;
    if (best == nullptr || r.bytes > best->bytes) best = &r;
  }
  return best;
}

std::string load_of(const record::CaseRecord& r) {
  const auto& c = r.overlap.contains("compute") ? r.overlap["compute"] : nlohmann::json();
  return c.is_object() && c.contains("spec") && c["spec"].is_string() ? c["spec"].get<std::string>() : "?";
}

}  // namespace

OverlapPick overlap_from_records(const std::string& kind, const record::ResultFile& file) {
  const auto& collectives = overlap_collectives(kind);
  for (const auto& c : collectives) {
    const record::CaseRecord* r = pick(file, c);
    if (r == nullptr) continue;
    const double measured = r->overlap["efficiency"].get<double>();
    OverlapPick out;
    out.efficiency = std::clamp(measured, 0.0, 1.0);
    out.detail = fmt::format("{}: {} {} on {} ranks beside {}, efficiency {:.3g}{}", file.path, c,
                             format_bytes(r->bytes), r->num_ranks, load_of(*r), measured,
                             out.efficiency == measured ? "" : fmt::format(" (used as {:.3g})", out.efficiency));
    return out;
  }
  throw InputError(fmt::format(
      "--overlap {}={}: no ok record with an overlap efficiency of {} (the collectives that serve {}); record one "
      "with collbench run {} ... --overlap LOAD (docs/overlap.md)",
      kind, file.path, join(collectives, ", "), kind, collectives.empty() ? "" : collectives.front()));
}

}  // namespace collbench::step
