// Results files as reports read them: line-accurate reading, whole or in batches.
#include "collbench/record/input_file.hpp"

#include <fmt/format.h>

#include <cstdint>
#include <nlohmann/json.hpp>

#include "collbench/core/error.hpp"
#include "collbench/record/jsonl.hpp"
#include "collbench/record/jsonl_stream.hpp"

namespace collbench::record {

namespace {

// One object of a results file into `file`: its run header, or one more case.
void add_object(InputFile& file, int line_no, const nlohmann::json& j) {
  const std::string& path = file.path;
  const auto schema_it = j.find("schema");
  const std::string schema = schema_it != j.end() && schema_it->is_string() ? schema_it->get<std::string>() : "";
  if (schema != kSchema) {
    throw InputError(fmt::format("{}:{}: record has schema '{}'; this collbench reads '{}'", path, line_no,
                                 schema.empty() ? "(none)" : schema, kSchema));
  }
  const auto kind_it = j.find("kind");
  const std::string kind = kind_it != j.end() && kind_it->is_string() ? kind_it->get<std::string>() : "";
  try {
    if (kind == "run_header") {
      if (file.header) {
        throw InputError(fmt::format("a second run header (the first is on line {}); reports read one run per file",
                                     file.header_line));
      }
      file.header = header_from_json(j);
      file.header_line = line_no;
    } else if (kind == "case") {
      file.cases.push_back(case_from_json(j));
      file.case_lines.push_back(line_no);
    } else {
      throw InputError(fmt::format("unknown record kind '{}'; accepted: run_header, case", kind));
    }
  } catch (const InputError& e) {
    throw InputError(fmt::format("{}:{}: {}", path, line_no, e.what()));
  }
}

}  // namespace

InputFile parse_input(std::string_view text, const std::string& path) {
  InputFile file;
  file.path = path;
  // Line splitting, the torn-last-line rule and the depth bound are the record layer's.
  for (const auto& [line_no, j] : parse_jsonl(text, path, file.warnings)) add_object(file, line_no, j);
  return file;
}

InputFile stream_input(const std::string& path, std::size_t batch, const std::function<void(InputFile&)>& on_cases) {
  InputFile file;
  file.path = path;
  const auto hand_over = [&] {
    if (file.cases.empty()) return;
    on_cases(file);
    file.cases.clear();
    file.case_lines.clear();
  };
  for_each_jsonl_line(path, "results file", "a JSONL file", file.warnings, [&](JsonlLine&& l) {
    add_object(file, l.line, l.object);
    if (file.cases.size() >= batch) hand_over();
  });
  hand_over();
  return file;
}

InputFile load_input(const std::string& path) {
  InputFile file;
  std::vector<CaseRecord> cases;
  std::vector<int> lines;
  file = stream_input(path, SIZE_MAX, [&](InputFile& f) {
    cases = std::move(f.cases);
    lines = std::move(f.case_lines);
  });
  file.cases = std::move(cases);
  file.case_lines = std::move(lines);
  return file;
}

}  // namespace collbench::record
