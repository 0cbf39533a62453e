// Shared by locate.cpp (analysis) and report/locate_render.cpp (output); not part of the locate API.
#pragma once

#include <string>

namespace collbench::locate {

// "850 us", "1.2 ms", "-" for a value that is not finite.
std::string locate_duration_text(double us);

}  // namespace collbench::locate
