// Internal to the nccl-tests console-log reader (nccltests_text.cpp): the table layouts of every
// nccl-tests version, from a header line or inferred from a data row, the launcher prefixes in
// front of the output, and the reading of one cell. Not part of the record layer's interface.
#pragma once

#include <cstddef>
#include <optional>
#include <regex>
#include <string>
#include <string_view>
#include <vector>

#include "collbench/record/nccltests_import.hpp"

namespace collbench::record::nccltests_detail {

enum class Col {
  size,
  count,
  type,
  redop,
  root,
  time,
  algbw,
  busbw,
  wrong,
  max_error,
  i_min,
  i_max,
  i_p99,
  i_cv,
  timestamp
};

struct Column {
  Col kind;
  int half;  // 0 out-of-place, 1 in-place, -1 neither
  std::string label;
};

struct Layout {
  std::vector<Column> cols;
  std::size_t num_fields = 0;  // a timestamp column takes two whitespace-separated fields
  bool legacy_ms = false;      // 2017 layout ("bytes N type op"): times in ms
  int line = 0;                // the header line, 0 when inferred
  std::string text;            // the labels, for messages
};

// A comment line that holds a table header (size or bytes, algbw and busbw among its labels).
bool looks_like_table_header(std::string_view comment);
// The layout of a header line; InputError for unknown, repeated or missing columns.
Layout parse_header_layout(std::string_view comment, std::string_view group_text, int line, const std::string& path);
// The layout of a data row without a header ("size count type ..."), when its fields say.
std::optional<Layout> infer_layout(const std::vector<std::string_view>& t);

// Launcher prefixes seen in front of nccl-tests output.
const std::vector<std::regex>& launcher_prefixes();
// The launcher prefix of the table header line, as a pattern for the data rows that follow
// (digit runs may change from line to line, the rest may not).
std::optional<std::regex> prefix_shape(std::string_view prefix);

// Where a cell is read, for messages, and whether its times are printed in ms.
struct CellContext {
  const std::string* path = nullptr;
  int line = 0;
  bool ms = false;
  std::vector<std::string>* warnings = nullptr;  // non-finite numbers are left empty with a warning
};
// Reads token `tok` of column `col` into `row`; InputError when it is not what the column holds.
void read_cell(NcclTestsRow& row, const Column& col, std::string_view tok, const CellContext& ctx);

}  // namespace collbench::record::nccltests_detail
