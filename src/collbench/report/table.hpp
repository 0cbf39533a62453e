// Console table (nccl-tests columns plus p99, samples and %bound) and CSV. Writers only
// render records; every number they print is a field of the record.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "collbench/record/record.hpp"

namespace collbench::report {

// Whether a table of these records has a root column: a rooted collective's record (broadcast)
// with a root other than 0. Tables without one print no root column, as before records had roots.
bool needs_root_column(const std::vector<record::CaseRecord>& records);
// Whether this one record needs the root column (the table needs it when any of its records does).
bool needs_root_column(const record::CaseRecord& r);
// The root column's cell: the record's root, `none` for families without one (and for broadcast
// records written before records had roots).
std::string root_text(const record::CaseRecord& r, std::string_view none);

// Header lines for a block of rows sharing collective, backend and placement; `root_column` adds
// a root column after redop.
std::string table_header(const record::CaseRecord& first, bool root_column = false);
std::string table_row(const record::CaseRecord& r, bool root_column = false);
// Whether `next` needs a new header after `prev` (collective, backend, ranks or scope changed).
bool needs_new_header(const record::CaseRecord& prev, const record::CaseRecord& next);
// Closing lines: wrong-element total and average busbw, as nccl-tests prints them.
std::string table_footer(const std::vector<record::CaseRecord>& records);
// What the closing lines sum, added one record at a time (a table rendered as its records are
// read: cli/report_tables.cpp); table_footer(records) is table_footer of their totals.
struct TableTotals {
  std::uint64_t wrong = 0;
  double busbw_sum = 0.0;
  std::size_t measured = 0, waived = 0;
  void add(const record::CaseRecord& r);
};
std::string table_footer(const TableTotals& totals);
std::string render_table(const std::vector<record::CaseRecord>& records);

// The CSV's columns; the last, `root`, is empty for families without a root.
std::string csv_header();
std::string csv_row(const record::CaseRecord& r);
std::string render_csv(const std::vector<record::CaseRecord>& records);

}  // namespace collbench::report
