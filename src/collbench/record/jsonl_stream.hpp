// Reading a JSONL file one line at a time (issue 37 item 8): the rules of parse_jsonl
// (jsonl.hpp) and the checks of read_input_file (core/input_file.hpp), without holding the
// file's text or more than one parsed line. Reports over millions of records read this way.
#pragma once

#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "collbench/record/jsonl.hpp"

namespace collbench::record {

// Calls `on_line` with each JSON object of the file at PATH in order, as parse_jsonl would
// return them for the whole text: blank lines skipped, a truncated last line skipped with the
// same warning, any other invalid line the same InputError "PATH:LINE: ...". A directory or an
// unreadable file is the InputError read_input_file gives, `what` and `expected` naming the
// file's kind in it ("results file", "a JSONL file"). An exception thrown by `on_line` ends the
// reading and propagates. Works on pipes and FIFOs (`report <(...)`): the file is read once.
void for_each_jsonl_line(const std::string& path, std::string_view what, std::string_view expected,
                         std::vector<std::string>& warnings, const std::function<void(JsonlLine&&)>& on_line);

// One line of a JSONL file under the same rules into `out`: false for a blank line or a truncated
// last line (`terminated` false; skipped, its warning added to `warnings`), the InputError
// "PATH:LINE: ..." for any other invalid line. `first`: no object came before it in the file;
// `head`: the file's first 64 KiB (named in the message about a JSON document over several lines).
bool read_jsonl_line(std::string_view line, bool terminated, bool first, int line_no, const std::string& path,
                     std::string_view head, std::vector<std::string>& warnings, nlohmann::json& out);

}  // namespace collbench::record
