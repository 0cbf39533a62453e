// A case record read straight from its JSONL line, without building nlohmann's tree of the line
// first (issue 37 item 8: `report` over millions of records spent most of its time there).
// Pure C++.
#pragma once

#include <optional>
#include <string_view>

#include "collbench/record/record.hpp"

namespace collbench::record {

// The case record of one JSONL line when the line is one the general reader (the JSONL line
// rules, the value checks, then case_from_json) reads without an error or a warning and this
// reader can read the same way: a JSON object of schema collbench.result/1 and kind "case".
// nullopt for every other line, and for lines it leaves to the general reader although they are
// valid: a string with an escape or a byte outside ASCII, a negative number, a number beyond
// uint64 or double, a repeated key, a `repeats` object, a value of a type that reader would
// convert (true where a number belongs). A record returned is the one case_from_json gives.
std::optional<CaseRecord> scan_case_line(std::string_view line);

}  // namespace collbench::record
