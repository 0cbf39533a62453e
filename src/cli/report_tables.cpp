// `collbench report FILES` in one pass (see report_tables.hpp).
#include "cli/report_tables.hpp"

#include <array>
#include <cstdio>
#include <optional>
#include <string_view>
#include <utility>

#include "collbench/core/error.hpp"
#include "collbench/record/input_file.hpp"
#include "collbench/report/tables_stream.hpp"

namespace collbench::cli {

namespace {

// Cases handed over at a time: enough to amortise the calls, few enough to stay small (a case
// record with its samples is a few KiB).
constexpr std::size_t kBatch = 1024;

// The names of report::cases_writers() that have a streamed renderer; "none" renders nothing.
struct StreamedFormat {
  std::string_view name;
  std::optional<report::TableFormat> format;
};
constexpr std::array<StreamedFormat, 4> kStreamed{{{"table", report::TableFormat::table},
                                                   {"markdown", report::TableFormat::markdown},
                                                   {"csv", report::TableFormat::csv},
                                                   {"none", std::nullopt}}};

const StreamedFormat* streamed(std::string_view name) {
  for (const auto& s : kStreamed)
    if (s.name == name) return &s;
  return nullptr;
}

struct StreamedTarget {
  report::OutputTarget target;
  report::StreamedTables tables;
};

}  // namespace

bool tables_can_stream(const std::vector<report::OutputTarget>& targets) {
  for (const auto& t : targets)
    if (streamed(t.format) == nullptr) return false;
  return true;
}

int print_streamed_tables(const std::vector<std::string>& paths, const std::vector<report::OutputTarget>& targets,
                          const model::DomainChoice& domains, const model::SystemProfile* system) {
  if (paths.empty()) throw InputError("give one or more results files (JSONL written by collbench run/sweep/import)");
  std::vector<StreamedTarget> outs;
  for (const auto& t : targets)
    if (const auto format = streamed(t.format)->format) outs.push_back({t, report::StreamedTables(*format)});
  std::vector<record::InputFile> batch(1);
  for (const auto& path : paths) {
    for (auto& o : outs) o.tables.begin_file(path);
    const record::InputFile file = record::stream_input(path, kBatch, [&](record::InputFile& f) {
      std::swap(batch.front().cases, f.cases);
      model::place_and_model(batch, domains, system);
      for (auto& r : batch.front().cases)
        for (std::size_t i = 0; i < outs.size(); ++i)
          outs[i].tables.add(i + 1 == outs.size() ? std::move(r) : record::CaseRecord(r));
      batch.front().cases.clear();
    });
    for (const auto& w : file.warnings) std::fprintf(stderr, "collbench: warning: %s\n", w.c_str());
    for (auto& o : outs) o.tables.end_file(file);
  }
  for (const auto& o : outs) {
    if (o.target.path) {
      report::write_output(o.target, o.tables.text().str());
    } else {
      o.tables.text().write(stdout);  // in pieces: the table of 10^6 records is never one string
      std::fflush(stdout);
    }
  }
  return 0;
}

}  // namespace collbench::cli
