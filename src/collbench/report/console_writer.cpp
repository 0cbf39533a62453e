// Console writers by name (console_writer.hpp).
#include "collbench/report/console_writer.hpp"

#include <functional>
#include <map>
#include <optional>

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
  // The runner prints the CSV header line before the first case (also when the run writes no
  // header: accept, locate).
  std::string begin(const record::RunHeader& /*header*/) override { return {}; }
  std::string add(const record::CaseRecord& r) override { return csv_row(r); }
  std::string end(const std::vector<record::CaseRecord>& /*records*/) override { return {}; }
};

class NoWriter final : public ConsoleWriter {
 public:
  std::string begin(const record::RunHeader& /*header*/) override { return {}; }
  std::string add(const record::CaseRecord& /*r*/) override { return {}; }
  std::string end(const std::vector<record::CaseRecord>& /*records*/) override { return {}; }
};

using Factory = std::function<std::unique_ptr<ConsoleWriter>()>;

const std::vector<std::pair<std::string, Factory>>& registry() {
  static const std::vector<std::pair<std::string, Factory>> writers = {
      {"table", [] { return std::make_unique<TableWriter>(); }},
      {"nccl-tests", [] { return make_nccltests_layout_writer(false); }},
      {"nccl-tests-i", [] { return make_nccltests_layout_writer(true); }},
      {"jsonl", [] { return std::make_unique<JsonlWriter>(); }},
      {"csv", [] { return std::make_unique<CsvWriter>(); }},
      {"none", [] { return std::make_unique<NoWriter>(); }},
  };
  return writers;
}

}  // namespace

std::unique_ptr<ConsoleWriter> make_console_writer(std::string_view name) {
  for (const auto& [n, make] : registry())
    if (n == name) return make();
  throw InputError(unknown_name_message("console format", std::string(name), console_writer_names()));
}

std::vector<std::string> console_writer_names() {
  std::vector<std::string> names;
  for (const auto& entry : registry()) names.push_back(entry.first);
  return names;
}

}  // namespace collbench::report
