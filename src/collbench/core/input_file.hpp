// Reading an input file whole (results, sweep and policy files): a path that names a directory,
// or a file that cannot be read, is bad input naming the path, never an empty file read
// silently (std::ifstream opens a directory on Linux and reads nothing from it).
#pragma once

#include <string>
#include <string_view>

namespace collbench {

// The file's bytes. InputError "<what> 'PATH' is a directory; give <expected>" for a directory,
// "cannot read <what> 'PATH': <reason>" when it cannot be opened or read.
std::string read_input_file(const std::string& path, std::string_view what, std::string_view expected);

}  // namespace collbench
