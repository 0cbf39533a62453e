// Placement and model for records that lack them: nccl-tests imports hold one domain of all their
// ranks (placement unknown) and no model. `import` and `report` take --ranks-per-domain and
// --system (docs/report.md, "Placement of imported logs"): the domains are then set, and the
// model's bound and expected value computed from the profile, each said so in the record.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "collbench/model/estimate.hpp"
#include "collbench/model/system_profile.hpp"
#include "collbench/record/input_file.hpp"
#include "collbench/record/record.hpp"

namespace collbench::model {

// Ranks per domain for records without a placement: --ranks-per-domain, else the profile's
// domain size (GPU profiles; CPU profiles simulate domains and give none). `from` says which.
// InputError when --ranks-per-domain exceeds the profile's domain.
struct DomainChoice {
  std::optional<int> ranks_per_domain;
  std::string from;  // "--ranks-per-domain", "system gb300-nvl72 (72-GPU domain)"
};
DomainChoice choose_ranks_per_domain(std::optional<int> ranks_per_domain, const SystemProfile* system);

// A record's model fields from an estimate of its case (of a collective or of a traffic
// matrix); with the measured p50, its efficiency against the bound. The runner's annotation and
// model_fields_for() below share it.
record::ModelFields model_fields_from(const SystemProfile& system, const Estimate& e, std::optional<double> p50_us);

// The record's model fields on `system` (algorithm, dtype, bytes, placement and scope of the
// record); nullopt with `why` set when the model does not cover the case.
std::optional<record::ModelFields> model_fields_for(const SystemProfile& system, const record::CaseRecord& r,
                                                    std::string& why);

// Records of `files` whose placement is unknown get domains of choice.ranks_per_domain (their
// placement note says where it came from, and their case key names the new domains);
// records without a model get one from `system` (or extra.model_note saying why not). Returns how
// many records were placed and modelled.
struct Annotated {
  int placed = 0, modelled = 0;
};
Annotated place_and_model(std::vector<record::InputFile>& files, const DomainChoice& choice,
                          const SystemProfile* system);

}  // namespace collbench::model
