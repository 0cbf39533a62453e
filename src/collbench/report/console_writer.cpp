// Console writers by name (console_writer.hpp).
#include "collbench/report/console_writer.hpp"

#include <fmt/format.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <functional>
#include <map>
#include <optional>

#include "collbench/core/checked_output.hpp"
#include "collbench/core/error.hpp"
#include "collbench/report/nccltests_layout_writer.hpp"
#include "collbench/report/table.hpp"

namespace collbench::report {
namespace {

// Whether the run header's cases (config.cases) hold a rooted one with a root other than 0: the
// streamed table's root column (needs_root_column, before any record exists).
bool config_has_root(const nlohmann::json& config) {
  if (!config.is_object() || !config.contains("cases") || !config["cases"].is_array()) return false;
  const nlohmann::json& cases = config["cases"];
  for (std::size_t i = 0; i < cases.size(); ++i) {
    const nlohmann::json& c = cases[i];
    if (!c.is_object() || !c.contains("root") || !c["root"].is_number_integer()) continue;
    if (record::rooted_collective(c.value("collective", std::string())) && c["root"].get<int>() != 0) return true;
  }
  return false;
}

// collbench's table: a header per block, a row per case, nccl-tests' closing lines.
class TableWriter final : public ConsoleWriter {
 public:
  std::string begin(const record::RunHeader& header) override {
    root_column_ = config_has_root(header.config);
    return {};
  }
  std::string add(const record::CaseRecord& r) override {
    std::string text;
    if (!previous_ || needs_new_header(*previous_, r)) text = table_header(r, root_column_);
    previous_ = r;
    return text + table_row(r, root_column_);
  }
  std::string end(const std::vector<record::CaseRecord>& records) override {
    return records.empty() ? std::string() : table_footer(records);
  }

 private:
  std::optional<record::CaseRecord> previous_;
  bool root_column_ = false;
};

class JsonlWriter final : public ConsoleWriter {
 public:
  std::string begin(const record::RunHeader& /*header*/) override { return {}; }
  std::string add(const record::CaseRecord& r) override {
    return record::to_json(r).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
  }
  std::string end(const std::vector<record::CaseRecord>& /*records*/) override { return {}; }
};

class CsvWriter final : public ConsoleWriter {
 public:
  std::string begin(const record::RunHeader& /*header*/) override { return csv_header(); }
  std::string add(const record::CaseRecord& r) override { return csv_row(r); }
  std::string end(const std::vector<record::CaseRecord>& /*records*/) override { return {}; }
};

class NoWriter final : public ConsoleWriter {
 public:
  std::string begin(const record::RunHeader& /*header*/) override { return {}; }
  std::string add(const record::CaseRecord& /*r*/) override { return {}; }
  std::string end(const std::vector<record::CaseRecord>& /*records*/) override { return {}; }
  [[nodiscard]] bool silent() const override { return true; }
};

struct Entry {
  std::string name;
  bool takes_layout = false;  // --layout picks its columns
  std::function<std::unique_ptr<ConsoleWriter>(const ConsoleOptions&)> make;
  bool silent = false;  // writes nothing (its ConsoleWriter::silent() says the same)
};

const std::vector<Entry>& registry() {
  static const std::vector<Entry> writers = {
      {"table", true,
       [](const ConsoleOptions& o) -> std::unique_ptr<ConsoleWriter> {
         if (o.nccl_tests_layout) return make_nccltests_layout_writer(o.per_iteration_columns);
         return std::make_unique<TableWriter>();
       }},
      {"jsonl", false, [](const ConsoleOptions&) { return std::make_unique<JsonlWriter>(); }},
      {"csv", false, [](const ConsoleOptions&) { return std::make_unique<CsvWriter>(); }},
      {"none", false, [](const ConsoleOptions&) { return std::make_unique<NoWriter>(); }, true},
  };
  return writers;
}

const Entry& entry(std::string_view name) {
  for (const auto& e : registry())
    if (e.name == name) return e;
  throw_unknown_writer("console format", name, console_writer_names());
}

}  // namespace

std::unique_ptr<ConsoleWriter> make_console_writer(std::string_view name, const ConsoleOptions& options) {
  return entry(name).make(options);
}

std::vector<std::string> console_writer_names() {
  std::vector<std::string> names;
  for (const auto& e : registry()) names.push_back(e.name);
  return names;
}

bool console_writer_takes_layout(std::string_view name) {
  return entry(name).takes_layout;
}

bool console_writer_is_silent(std::string_view name) {
  return entry(name).silent;
}

// ---- multiplex ---------------------------------------------------------------------------------

void ConsoleMultiplex::CloseFile::operator()(std::FILE* f) const {
  std::fclose(f);
}

void check_console_targets(const std::vector<OutputTarget>& targets, const ConsoleOptions& options) {
  if (!options.nccl_tests_layout || targets.empty()) return;
  for (const auto& t : targets)
    if (console_writer_takes_layout(t.format)) return;
  throw InputError(
      fmt::format("--layout {} applies to --format table, not --format {}", options.layout, targets.front().format));
}

ConsoleMultiplex::ConsoleMultiplex(const std::vector<OutputTarget>& targets, const ConsoleOptions& options) {
  check_console_targets(targets, options);
  for (const auto& t : targets) entries_.push_back({make_console_writer(t.format, options), t, nullptr});
}

void ConsoleMultiplex::write(Entry& e, const std::string& text) {
  if (!e.target.path) {
    write_stdout(text);
    return;
  }
  if (text.empty()) return;
  if (std::fwrite(text.data(), 1, text.size(), e.file.get()) != text.size() || std::fflush(e.file.get()) != 0) {
    throw OutputError(fmt::format("{}: writing {} failed: {}", e.target.flag, *e.target.path, std::strerror(errno)));
  }
}

void ConsoleMultiplex::begin(const record::RunHeader& header) {
  for (auto& e : entries_) {
    if (e.target.path) {
      const std::string target = output_target(*e.target.path);
      // An open descriptor (/dev/stdout, a log the shell writes) through a duplicate: never
      // reopened or truncated, and sharing the offset of the process's own descriptor.
      if (names_open_descriptor(target)) {
        const int fd = duplicate_for_writing(target, e.target.flag);
        e.file.reset(::fdopen(fd, "w"));
        if (!e.file) ::close(fd);
      } else {
        e.file.reset(std::fopen(target.c_str(), "wb"));
      }
      if (!e.file) {
        throw InputError(
            fmt::format("{}: cannot open {} for writing: {}", e.target.flag, *e.target.path, std::strerror(errno)));
      }
    }
    write(e, e.writer->begin(header));
  }
}

void ConsoleMultiplex::add(const record::CaseRecord& r) {
  for (auto& e : entries_) write(e, e.writer->add(r));
}

void ConsoleMultiplex::end(const std::vector<record::CaseRecord>& records) {
  for (auto& e : entries_) {
    write(e, e.writer->end(records));
    if (e.file && std::fclose(e.file.release()) != 0) {
      throw OutputError(fmt::format("{}: closing {} failed: {}", e.target.flag, *e.target.path, std::strerror(errno)));
    }
  }
}

bool ConsoleMultiplex::silent() const {
  for (const auto& e : entries_)
    if (!e.writer->silent()) return false;
  return true;
}

}  // namespace collbench::report
