// The writers of `collbench locate`'s findings (JSON, text; the analysis is locate/locate.hpp).
// They only render.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "collbench/locate/locate.hpp"

namespace collbench::report {

inline constexpr const char* kLocateSchema = "collbench.locate/1";

nlohmann::json locate_to_json(const locate::LocateReport& report);
std::string render_locate_text(const locate::LocateReport& report);

}  // namespace collbench::report
