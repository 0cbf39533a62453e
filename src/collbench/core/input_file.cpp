#include "collbench/core/input_file.hpp"

#include <fmt/format.h>
#include <sys/stat.h>

#include <array>
#include <cerrno>
#include <cstring>
#include <fstream>

#include "collbench/core/error.hpp"

namespace collbench {

std::string read_input_file(const std::string& path, std::string_view what, std::string_view expected,
                            std::size_t max_bytes) {
  struct stat st {};
  if (::stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode)) {
    throw InputError(fmt::format("{} '{}' is a directory; give {}", what, path, expected));
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) throw InputError(fmt::format("cannot read {} '{}': {}", what, path, std::strerror(errno)));
  std::string text;
  std::array<char, 65536> buf{};
  while (in.read(buf.data(), buf.size()) || in.gcount() > 0) {
    text.append(buf.data(), static_cast<std::size_t>(in.gcount()));
    if (text.size() > max_bytes) {
      throw InputError(fmt::format("{} '{}' holds more than {} bytes; give {}", what, path, max_bytes, expected));
    }
  }
  if (in.bad()) throw InputError(fmt::format("cannot read {} '{}': {}", what, path, std::strerror(errno)));
  return text;
}

}  // namespace collbench
