#include "collbench/core/input_file.hpp"

#include <fmt/format.h>
#include <sys/stat.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>

#include "collbench/core/error.hpp"

namespace collbench {

std::string read_input_file(const std::string& path, std::string_view what, std::string_view expected) {
  struct stat st {};
  if (::stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode)) {
    throw InputError(fmt::format("{} '{}' is a directory; give {}", what, path, expected));
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) throw InputError(fmt::format("cannot read {} '{}': {}", what, path, std::strerror(errno)));
  std::ostringstream text;
  text << in.rdbuf();
  if (in.bad()) throw InputError(fmt::format("cannot read {} '{}': {}", what, path, std::strerror(errno)));
  return text.str();
}

}  // namespace collbench
