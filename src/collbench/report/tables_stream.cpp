// Case tables rendered as the records are read (see tables_stream.hpp).
#include "collbench/report/tables_stream.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <utility>

#include "collbench/report/markdown.hpp"

namespace collbench::report {

namespace {

constexpr std::size_t kChunk = std::size_t{1} << 20;

}  // namespace

void ChunkedText::append(std::string_view s) {
  if (s.empty()) return;
  if (chunks_.empty() || chunks_.back().size() + s.size() > kChunk) {
    chunks_.emplace_back();
    chunks_.back().reserve(std::max(kChunk, s.size()));
  }
  chunks_.back().append(s);
}

void ChunkedText::append(ChunkedText&& other) {
  for (auto& c : other.chunks_) chunks_.push_back(std::move(c));
  other.chunks_.clear();
}

std::size_t ChunkedText::size() const {
  std::size_t n = 0;
  for (const auto& c : chunks_) n += c.size();
  return n;
}

std::string ChunkedText::str() const {
  std::string out;
  out.reserve(size());
  for (const auto& c : chunks_) out += c;
  return out;
}

void ChunkedText::write(std::FILE* out) const {
  for (const auto& c : chunks_) std::fwrite(c.data(), 1, c.size(), out);
}

StreamedTables::StreamedTables(TableFormat format) : format_(format) {
  if (format_ == TableFormat::csv) out_.append("file," + csv_header());
  if (format_ == TableFormat::markdown) out_.append("# collbench report\n\n");
}

void StreamedTables::begin_file(const std::string& path) {
  path_ = path;
  file_ = FileTable{};
}

// The console table's rows: a header before the first case and wherever needs_new_header says.
void StreamedTables::add_console_row(const record::CaseRecord& r) {
  const bool head = !file_.prev || needs_new_header(*file_.prev, r);
  if (!file_.root_column) {
    if (head) file_.plain.append(table_header(r, false));
    file_.plain.append(table_row(r, false));
  }
  if (head) file_.rooted.append(table_header(r, true));
  file_.rooted.append(table_row(r, true));
}

void StreamedTables::add_markdown_row(const record::CaseRecord& r) {
  if (!file_.root_column) file_.plain.append(markdown_case_row(r, false));
  file_.rooted.append(markdown_case_row(r, true));
  file_.overlap_rows.append(markdown_overlap_row(r));
}

void StreamedTables::add(record::CaseRecord&& r) {
  ++file_.cases;
  if (format_ == TableFormat::csv) {
    std::string path = path_;
    if (path.find_first_of(",\"\n") != std::string::npos) path = "\"" + path + "\"";
    out_.append(path + "," + csv_row(r));
    return;
  }
  if (!file_.root_column && needs_root_column(r)) {
    file_.root_column = true;
    file_.plain.clear();  // from here on only the table with the column is kept
  }
  if (format_ == TableFormat::table) {
    add_console_row(r);
    file_.totals.add(r);
    file_.prev = std::move(r);
  } else {
    add_markdown_row(r);
  }
}

void StreamedTables::end_file(const record::InputFile& file) {
  ChunkedText& rows = file_.root_column ? file_.rooted : file_.plain;
  if (format_ == TableFormat::table) {
    out_.append(fmt::format("# file: {}\n", file.path));
    if (file_.cases == 0) {
      out_.append("# (no cases)\n");
    } else {
      out_.append(std::move(rows));
      out_.append(table_footer(file_.totals));
    }
  } else if (format_ == TableFormat::markdown) {
    out_.append(markdown_file_head(file));
    if (file_.cases == 0) {
      out_.append("no cases\n\n");
    } else {
      out_.append(markdown_case_head(file_.root_column));
      out_.append(std::move(rows));
      out_.append(markdown_overlap_section(file_.overlap_rows.str()));
      out_.append("\n");
    }
  }
  file_ = FileTable{};
}

}  // namespace collbench::report
