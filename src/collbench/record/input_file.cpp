// Results files as reports read them: line-accurate reading, whole or in batches.
#include "collbench/record/input_file.hpp"

#include <fmt/format.h>

#include <cstdint>
#include <nlohmann/json.hpp>

#include "collbench/core/error.hpp"
#include "collbench/record/case_scan.hpp"
#include "collbench/record/jsonl.hpp"
#include "collbench/record/jsonl_stream.hpp"
#include "collbench/record/line_batches.hpp"

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

namespace {

constexpr std::size_t kLinesPerBatch = 256;

// A line's object is a case record of this schema (add_object reads it with case_from_json).
bool is_case(const nlohmann::json& j) {
  const auto schema = j.find("schema");
  const auto kind = j.find("kind");
  return schema != j.end() && *schema == kSchema && kind != j.end() && *kind == "case";
}

// One line alone, on a worker: blank, a case record (read by scan_case_line, else through the
// JSON tree), another object, or again (anything that threw or warned: the serial reader's).
ParsedLine parse_alone(std::string_view line, bool terminated) {
  ParsedLine p;
  if (line.find_first_not_of(" \t\r") == std::string_view::npos) {
    p.kind = ParsedLine::Kind::blank;
    return p;
  }
  try {
    if (auto r = scan_case_line(line)) {
      p.record = std::move(*r);
      p.kind = ParsedLine::Kind::record;
      return p;
    }
    std::vector<std::string> warnings;
    if (!read_jsonl_line(line, terminated, false, 0, std::string(), {}, warnings, p.object)) return p;
    if (is_case(p.object)) {
      p.record = case_from_json(p.object);
      p.object = nullptr;
      p.kind = ParsedLine::Kind::record;
    } else {
      p.kind = ParsedLine::Kind::object;
    }
  } catch (...) {  // read again on the calling thread, in file order, where it throws the same
    p = ParsedLine{};
  }
  return p;
}

void parse_batch(LineBatch& batch) {
  batch.parsed.clear();
  batch.parsed.reserve(batch.lines.size());
  for (const auto& l : batch.lines) batch.parsed.push_back(parse_alone(batch.line(l), l.terminated));
}

// The lines of a batch into `file`, in order, as the serial reader takes them; `first`: no object
// came before in the file.
void take_batch(LineBatch& batch, const LineReader& reader, InputFile& file, bool& first,
                const std::function<void()>& after_line) {
  for (std::size_t i = 0; i < batch.lines.size(); ++i) {
    const auto& l = batch.lines[i];
    ParsedLine& p = batch.parsed[i];
    if (p.kind == ParsedLine::Kind::blank) continue;
    if (p.kind == ParsedLine::Kind::record) {
      file.cases.push_back(std::move(p.record));
      file.case_lines.push_back(l.number);
    } else if (p.kind == ParsedLine::Kind::object) {
      add_object(file, l.number, p.object);
    } else {
      nlohmann::json j;
      if (!read_jsonl_line(batch.line(l), l.terminated, first, l.number, file.path, reader.head(), file.warnings, j))
        continue;
      add_object(file, l.number, j);
    }
    first = false;
    after_line();
  }
}

}  // namespace

InputFile stream_input(const std::string& path, std::size_t batch, const std::function<void(InputFile&)>& on_cases,
                       unsigned workers) {
  InputFile file;
  file.path = path;
  const auto hand_over = [&] {
    if (file.cases.empty()) return;
    on_cases(file);
    file.cases.clear();
    file.case_lines.clear();
  };
  const auto after_line = [&] {
    if (file.cases.size() >= batch) hand_over();
  };
  LineReader reader(path, "results file", "a JSONL file");
  const unsigned n = worker_count(workers);
  BatchWorkers pool(n, 2 * std::size_t{n} + 2, parse_batch);  // bounded: at most 2n + 2 batches read ahead
  bool first = true;
  LineBatch lines;
  while (reader.next(lines, kLinesPerBatch)) {
    if (pool.full()) {
      LineBatch done = pool.take();
      take_batch(done, reader, file, first, after_line);
    }
    pool.submit(std::move(lines));
  }
  while (!pool.empty()) {
    LineBatch done = pool.take();
    take_batch(done, reader, file, first, after_line);
  }
  reader.finish();
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
