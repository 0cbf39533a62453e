// Output of `collbench step` (docs/step.md): the scaling table with the placement and the
// published figures beside the prediction, each GPU count's phases; as a table, JSON or Markdown.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "collbench/step/step.hpp"

namespace collbench::cli {

nlohmann::json step_point_json(const step::StepInputs& in, const step::StepPoint& pt);
void print_step_table(const step::StepInputs& in, const std::vector<step::StepPoint>& pts,
                      const std::vector<step::StepPoint>& degraded, const std::string& degrade_text);
void print_step_markdown(const step::StepInputs& in, const std::vector<step::StepPoint>& pts);

}  // namespace collbench::cli
