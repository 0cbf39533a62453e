// Which system the weak-scaling records were measured on, which profiles give bounds and
// projections (--system, --project-onto), and the model's estimate from a profile.
#include <fmt/format.h>

#include <map>

#include "collbench/core/dtype.hpp"
#include "collbench/core/error.hpp"
#include "collbench/core/names.hpp"
#include "collbench/core/placement.hpp"
#include "collbench/model/estimate.hpp"
#include "collbench/scaling/weak_scaling_detail.hpp"

namespace collbench::scaling::weak_scaling_detail {

using record::CaseRecord;

bool measured(const CaseRecord& r) {
  return r.status == "ok" && r.time_us.has_value() && r.time_us->p50 > 0.0;
}

namespace {

std::optional<std::string> header_system(const record::InputFile& f) {
  if (!f.header || !f.header->system.is_object()) return std::nullopt;
  const auto it = f.header->system.find("name");
  if (it == f.header->system.end() || !it->is_string()) return std::nullopt;
  return it->get<std::string>();
}

// Which system were the records measured on? Records' model.system first, run headers next:
// the name and where it was first seen; InputError when they name several.
std::optional<std::pair<std::string, std::string>> recorded_system(const std::vector<record::InputFile>& files) {
  std::map<std::string, std::string> from_records;  // system -> where first seen
  std::map<std::string, std::string> from_headers;
  for (const auto& f : files) {
    for (std::size_t i = 0; i < f.cases.size(); ++i) {
      const auto& r = f.cases[i];
      if (r.model && measured(r)) from_records.emplace(r.model->system, fmt::format("{}:{}", f.path, f.case_lines[i]));
    }
    if (const auto s = header_system(f)) from_headers.emplace(*s, fmt::format("{}:{}", f.path, f.header_line));
  }
  const auto& found = from_records.empty() ? from_headers : from_records;
  if (found.size() > 1) {
    std::vector<std::string> list;
    for (const auto& [name, where] : found) list.push_back(fmt::format("'{}' ({})", name, where));
    throw InputError(
        fmt::format("the records were measured on several systems: {}; a weak-scaling report compares "
                    "rank counts on one system (report each system separately)",
                    join(list)));
  }
  if (found.empty()) return std::nullopt;
  return *found.begin();
}

}  // namespace

Systems resolve_systems(const std::vector<record::InputFile>& files, const WeakScalingOptions& opt) {
  Systems s;
  std::optional<std::string> recorded;
  std::string where;
  if (const auto found = recorded_system(files)) {
    recorded = found->first;
    where = found->second;
  }
  const auto& sys = opt.system;
  const auto& onto = opt.project_onto;
  if (sys && recorded && sys->name != *recorded) {
    if (!onto) {
      throw InputError(fmt::format(
          "the records were measured on '{}' ({}) but --system names '{}'; projections onto another system are "
          "refused unless asked for explicitly: pass --project-onto {} (the report's title will say so), or "
          "--system {}",
          *recorded, where, sys->name, sys->name, *recorded));
    }
    throw InputError(
        fmt::format("--system '{}' contradicts the records, measured on '{}' ({}); with --project-onto, "
                    "--system names the system the records were measured on (or leave it out)",
                    sys->name, *recorded, where));
  }
  s.measured_from_records = recorded.has_value();
  s.measured = recorded ? recorded : (sys ? std::optional<std::string>(sys->name) : std::nullopt);
  if (sys) s.bounds = &*sys;
  if (!s.bounds && onto && s.measured && onto->name == *s.measured) s.bounds = &*onto;
  if (onto) {
    s.projection = &*onto;
    s.cross = !s.measured || onto->name != *s.measured;
  } else if (sys) {
    s.projection = &*sys;
  } else {
    s.status = recorded ? fmt::format(
                              "no projection: no system profile given (the records name '{}'; pass --system {} "
                              "to project with its profile)",
                              *recorded, *recorded)
                        : "no projection: no system profile given (pass --system NAME, the system the records were "
                          "measured on; `collbench model --list-systems` lists them)";
  }
  if (s.projection && opt.requested_ranks.empty()) s.status = "no projection: no rank counts requested (--ranks)";
  return s;
}

// The model's estimate for a measured or projected case; nullopt with `why` filled otherwise.
std::optional<model::Estimate> estimate_for(const model::SystemProfile& profile, const std::string& collective,
                                            const std::string& algo, const std::string& dtype, std::uint64_t bytes,
                                            const std::string& scope, const std::vector<int>& domain_sizes,
                                            std::string& why) {
  try {
    model::CaseGeometry g;
    g.collective = collective;
    g.algo = algo;
    g.dtype = parse_dtype(dtype);
    g.bytes = bytes;
    int n = 0;
    for (int s : domain_sizes) n += s;
    g.placement = placement_from_sizes(n, domain_sizes);
    g.scope = parse_scope(scope);
    auto outcome = model::model_case(profile, g);
    if (!outcome.estimate) why = outcome.why_not.empty() ? "not modelled" : outcome.why_not;
    return outcome.estimate;
  } catch (const Error& e) {
    why = e.what();
    return std::nullopt;
  }
}

}  // namespace collbench::scaling::weak_scaling_detail
