// Shared by locate.cpp (analysis) and locate_render.cpp (output); not part of the report API.
#pragma once

#include <string>

namespace collbench::report {

// "850 us", "1.2 ms", "-" for a value that is not finite.
std::string locate_duration_text(double us);

}  // namespace collbench::report
