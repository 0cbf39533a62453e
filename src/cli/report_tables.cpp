// `collbench report FILES` in one pass (see report_tables.hpp).
#include "cli/report_tables.hpp"

#include <cstdio>
#include <utility>

#include "collbench/core/error.hpp"
#include "collbench/report/input_stream.hpp"
#include "collbench/report/tables_stream.hpp"

namespace collbench::cli {

namespace {

// Cases handed over at a time: enough to amortise the calls, few enough to stay small (a case
// record with its samples is a few KiB).
constexpr std::size_t kBatch = 1024;

report::TableFormat table_format(std::string_view format) {
  if (format == "csv") return report::TableFormat::csv;
  if (format == "markdown") return report::TableFormat::markdown;
  return report::TableFormat::table;
}

}  // namespace

int print_streamed_tables(const std::vector<std::string>& paths, std::string_view format,
                          const report::DomainChoice& domains, const model::SystemProfile* system) {
  if (paths.empty()) throw InputError("give one or more results files (JSONL written by collbench run/sweep/import)");
  report::StreamedTables tables(table_format(format));
  std::vector<report::InputFile> batch(1);
  for (const auto& path : paths) {
    tables.begin_file(path);
    const report::InputFile file = report::stream_input(path, kBatch, [&](report::InputFile& f) {
      std::swap(batch.front().cases, f.cases);
      report::place_and_model(batch, domains, system);
      for (auto& r : batch.front().cases) tables.add(std::move(r));
      batch.front().cases.clear();
    });
    for (const auto& w : file.warnings) std::fprintf(stderr, "collbench: warning: %s\n", w.c_str());
    tables.end_file(file);
  }
  tables.text().write(stdout);
  std::fflush(stdout);
  return 0;
}

}  // namespace collbench::cli
