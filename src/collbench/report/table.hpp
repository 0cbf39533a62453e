// Console table (nccl-tests columns plus p99, samples and %bound) and CSV. Writers only
// render records; every number they print is a field of the record.
#pragma once

#include <string>
#include <vector>

#include "collbench/record/record.hpp"

namespace collbench::report {

// Header lines for a block of rows sharing collective, backend and placement.
std::string table_header(const record::CaseRecord& first);
std::string table_row(const record::CaseRecord& r);
// Whether `next` needs a new header after `prev` (collective, backend, ranks or scope changed).
bool needs_new_header(const record::CaseRecord& prev, const record::CaseRecord& next);
// Closing lines: wrong-element total and average busbw, as nccl-tests prints them.
std::string table_footer(const std::vector<record::CaseRecord>& records);
std::string render_table(const std::vector<record::CaseRecord>& records);

std::string csv_header();
std::string csv_row(const record::CaseRecord& r);
std::string render_csv(const std::vector<record::CaseRecord>& records);

}  // namespace collbench::report
