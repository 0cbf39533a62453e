// Value checks of the records a reader accepts (docs/errors.md, "Results files"): times and
// rates are finite numbers >= 0. JSON has no NaN or Infinity; a writer that emits them anyway
// (Python's json module does) is named with the key that holds one instead of a column number.
#pragma once

#include <cstddef>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>

namespace collbench::record {

// A case record's times (time_us.*, samples_us, per_rank.*, per_rank_p50_us) and rates
// (algbw_gbps, busbw_gbps) that are negative: InputError "key 'time_us.p50': -3 is negative;
// times and rates are numbers >= 0". Values of another type are left to the record reader.
void check_case_values(const nlohmann::json& record);

struct NonFinite {
  std::string key;    // "time_us.p50", "samples_us[3]"
  std::string token;  // NaN, Infinity or -Infinity as written
};

// The first NaN, Infinity or -Infinity literal outside strings of one JSONL line, with the key
// that holds it, when the line is otherwise valid JSON; nullopt else.
std::optional<NonFinite> find_non_finite(std::string_view line);

}  // namespace collbench::record
