// The case tables of `collbench report FILES` (console table, Markdown, CSV; no comparison) made
// as the records are read, one pass over each file (issue 37 item 8): per file only its rendered
// rows and the few totals its table needs are held, never its records. The text is, byte for
// byte, what render_table, render_cases_markdown and csv_row give over the whole files.
#pragma once

#include <cstddef>
#include <cstdio>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "collbench/record/input_file.hpp"
#include "collbench/record/record.hpp"
#include "collbench/report/table.hpp"

namespace collbench::report {

// Text kept in pieces of about 1 MiB, so that growing it never copies what it holds (a
// std::string of 200 MB would briefly need twice that to grow).
class ChunkedText {
 public:
  void append(std::string_view s);
  void append(ChunkedText&& other);  // takes its pieces over
  void clear() { chunks_.clear(); }
  [[nodiscard]] std::size_t size() const;
  [[nodiscard]] std::string str() const;
  void write(std::FILE* out) const;  // fwrite of every piece, in order

 private:
  std::vector<std::string> chunks_;
};

enum class TableFormat { table, markdown, csv };

class StreamedTables {
 public:
  explicit StreamedTables(TableFormat format);
  // A file's cases in file order between begin_file and end_file; end_file takes the file as the
  // reader returns it (path, header, warnings; its cases are not read).
  void begin_file(const std::string& path);
  void add(record::CaseRecord&& r);
  void end_file(const record::InputFile& file);
  // What `report` prints for the files so far (all of them ended).
  [[nodiscard]] const ChunkedText& text() const { return out_; }

 private:
  // One file's table in both forms until a record needs the root column (then only with it):
  // whether a table has that column is known only after its last record.
  struct FileTable {
    ChunkedText plain, rooted;
    ChunkedText overlap_rows;  // Markdown's overlap rows (the same with and without the column)
    bool root_column = false;
    std::optional<record::CaseRecord> prev;  // the previous case (the console table's header test)
    TableTotals totals;
    std::size_t cases = 0;
  };
  void add_console_row(const record::CaseRecord& r);
  void add_markdown_row(const record::CaseRecord& r);
  TableFormat format_;
  std::string path_;
  FileTable file_;
  ChunkedText out_;
};

}  // namespace collbench::report
