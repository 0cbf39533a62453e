// Output of `collbench step` (docs/step.md): the scaling table with the placement and the
// published figures beside the prediction, each GPU count's phases; as a table, JSON or Markdown,
// registered by name for --format (report/writer.hpp).
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "collbench/report/writer.hpp"
#include "collbench/step/step.hpp"

namespace collbench::cli {

// What the writers render: the inputs, one point per GPU count and, with --degrade, the same
// points with the slowed link (empty otherwise).
struct StepOutput {
  const step::StepInputs* in = nullptr;
  const std::vector<step::StepPoint>* points = nullptr;
  const std::vector<step::StepPoint>* degraded = nullptr;
  std::string degrade_text;  // --degrade's value
};

nlohmann::json step_point_json(const step::StepInputs& in, const step::StepPoint& pt);
std::string render_step_table(const StepOutput& o);
std::string render_step_markdown(const StepOutput& o);
std::string render_step_json(const StepOutput& o);
// table, json, markdown, none.
const report::WriterRegistry<StepOutput>& step_writers();

}  // namespace collbench::cli
