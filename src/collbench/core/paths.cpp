// Data search paths (see paths.hpp).
#include "collbench/core/paths.hpp"

#include <cstdlib>
#include <filesystem>
#include <system_error>

#include "collbench/core/build_info.hpp"

namespace collbench {

namespace fs = std::filesystem;

namespace {

void add_unique(std::vector<std::string>& dirs, const std::string& d) {
  if (d.empty()) return;
  for (const auto& existing : dirs) {
    if (existing == d) return;
  }
  dirs.push_back(d);
}

// <prefix>/share/collbench for the running executable (<prefix>/bin/collbench), or empty.
std::string exe_data_dir() {
  const std::string exe = executable_path();
  if (exe.empty()) return {};
  return (fs::path(exe).parent_path() / build::kBinToDataDir).lexically_normal().string();
}

}  // namespace

std::string executable_path() {
  std::error_code ec;
  const fs::path p = fs::read_symlink("/proc/self/exe", ec);
  return ec ? std::string() : p.string();
}

bool running_from_build_tree() {
  const std::string exe = executable_path();
  const std::string build_dir = fs::path(build::kBinaryDir).lexically_normal().string();
  if (exe.empty() || build_dir.empty()) return false;
  const std::string prefix = build_dir + "/";
  return exe.compare(0, prefix.size(), prefix) == 0;
}

std::vector<std::string> profile_search_dirs() {
  std::vector<std::string> dirs;
  if (const char* path = std::getenv("COLLBENCH_PROFILE_PATH"); path != nullptr) {
    std::string list(path);
    std::size_t start = 0;
    while (start <= list.size()) {
      const std::size_t colon = list.find(':', start);
      const std::size_t end = colon == std::string::npos ? list.size() : colon;
      add_unique(dirs, list.substr(start, end - start));
      if (colon == std::string::npos) break;
      start = colon + 1;
    }
  }
  if (const char* env = std::getenv("COLLBENCH_PROFILE_DIR"); env != nullptr) add_unique(dirs, env);
  // XDG base directory spec: a relative XDG_CONFIG_HOME is invalid and is ignored.
  if (const char* xdg = std::getenv("XDG_CONFIG_HOME"); xdg != nullptr && xdg[0] == '/') {
    add_unique(dirs, std::string(xdg) + "/collbench/profiles");
  } else if (const char* home = std::getenv("HOME"); home != nullptr && *home != '\0') {
    add_unique(dirs, std::string(home) + "/.config/collbench/profiles");
  }
  for (const auto& d : data_search_dirs("profiles")) add_unique(dirs, d);
  return dirs;
}

std::vector<std::string> data_search_dirs(const std::string& name) {
  std::vector<std::string> dirs;
  // A binary in its build tree uses its own source tree first (not an older installed copy); an
  // installed binary never looks at a source tree.
  if (running_from_build_tree()) {
    add_unique(dirs, std::string(build::kSourceDir) + "/" + name);
  } else if (const std::string d = exe_data_dir(); !d.empty()) {
    add_unique(dirs, d + "/" + name);
  }
  add_unique(dirs, std::string(build::kInstallDataDir) + "/" + name);
  return dirs;
}

}  // namespace collbench
