// Reading an input file whole (results, sweep and policy files): a path that names a directory,
// or a file that cannot be read, is bad input naming the path, never an empty file read
// silently (std::ifstream opens a directory on Linux and reads nothing from it).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace collbench {

// The file's bytes. InputError "<what> 'PATH' is a directory; give <expected>" for a directory,
// "cannot read <what> 'PATH': <reason>" when it cannot be opened or read, and "<what> 'PATH'
// holds more than <max_bytes> bytes; give <expected>" past `max_bytes` (read no further: /dev/zero
// or a huge file given by mistake ends there instead of in "out of memory").
std::string read_input_file(const std::string& path, std::string_view what, std::string_view expected,
                            std::size_t max_bytes = SIZE_MAX);

// The most bytes a YAML input (a sweep, a profile) may hold: 64 MiB, thousands of times the
// largest one in profiles/.
inline constexpr std::size_t kMaxYamlBytes = std::size_t{64} << 20;

}  // namespace collbench
