// Output folders (see out_dir.hpp).
#include "cli/out_dir.hpp"

#include <fmt/format.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>

#include "collbench/core/checked_output.hpp"
#include "collbench/core/error.hpp"

namespace collbench::cli {
namespace fs = std::filesystem;

namespace {

bool is_ours(const std::string& name, const std::vector<std::string>& ours) {
  for (const auto& o : ours) {
    if (!o.empty() && o.back() == '*') {
      if (name.starts_with(o.substr(0, o.size() - 1))) return true;
    } else if (name == o) {
      return true;
    }
  }
  return false;
}

}  // namespace

void prepare_out_dir(const run::Control& control, const std::string& dir, bool force,
                     const std::vector<std::string>& ours) {
  std::string problem;
  if (control.rank() == 0) {
    std::error_code ec;
    if (fs::exists(dir, ec) && !fs::is_directory(dir, ec)) {
      problem = fmt::format("--out-dir {}: exists and is not a directory", dir);
    } else if (fs::is_directory(dir, ec)) {
      std::vector<fs::path> found;
      for (const auto& entry : fs::directory_iterator(dir, ec)) {
        if (is_ours(entry.path().filename().string(), ours)) found.push_back(entry.path());
      }
      if (!found.empty() && !force) {
        problem = fmt::format(
            "--out-dir {}: already holds results ({}, ...); use --force to replace them or another "
            "folder",
            dir, found.front().filename().string());
      } else {
        for (const auto& p : found) fs::remove(p, ec);
      }
    } else if (!fs::create_directories(dir, ec)) {
      problem = fmt::format("--out-dir {}: cannot create: {}", dir, ec.message());
    }
  }
  problem = control.broadcast_string(problem);
  if (!problem.empty()) throw InputError(problem);
}

void write_file_atomic(const std::string& path, const std::string& text) {
  write_file_atomic_checked(path, text);
}

}  // namespace collbench::cli
