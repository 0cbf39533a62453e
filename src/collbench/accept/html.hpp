// Acceptance results as one self-contained HTML page (verdict banner, PASS/FAIL/WAIVED counts, a
// chart of each judged row's measured value against its limit, the verdict table with reasons
// and evidence, notes, and the provenance of the record files), and the reader that turns a
// verdict.json (schema collbench.accept/1, written by accept_to_json) back into an AcceptReport,
// so that `collbench report accept DIR --html FILE` renders results of an earlier run. Rendering
// only: the verdicts are the judge's. Pure C++ (no MPI, no GPU).
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "collbench/accept/judge.hpp"
#include "collbench/record/input_file.hpp"
#include "collbench/report/html.hpp"

namespace collbench::accept {

// The inverse of accept_to_json. InputError naming `path` and the key when the JSON is not an
// acceptance verdict (another schema, a missing or mistyped key).
AcceptReport accept_from_json(const nlohmann::json& j, const std::string& path);

// `records`: the run's record files (records-*.jsonl) as read back, for provenance; may be empty
// (then the page says that provenance is unavailable). `notes`: what the caller could not read.
std::string render_accept_html(const AcceptReport& report, const std::vector<record::InputFile>& records,
                               const report::HtmlContext& ctx, const std::vector<std::string>& notes = {});

}  // namespace collbench::accept
