// Output targets of the writer registries (writer.hpp).
#include "collbench/report/writer.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>

#include "collbench/core/checked_output.hpp"
#include "collbench/core/error.hpp"

namespace collbench::report {
namespace {

namespace fs = std::filesystem;

// A file target is checked when the flag is read, before anything runs or is written.
void check_target_path(std::string_view flag, const std::string& value, const std::string& path) {
  if (path.empty()) throw InputError(fmt::format("{} '{}': give a file name after '=' (e.g. out.json)", flag, value));
  const fs::path p(path);
  if (fs::is_directory(p))
    throw InputError(fmt::format("{} '{}': {} is a folder; give a file name", flag, value, path));
  const fs::path parent = p.has_parent_path() ? p.parent_path() : fs::path(".");
  if (!fs::is_directory(parent)) {
    throw InputError(fmt::format("{} '{}': folder '{}' does not exist", flag, value, parent.string()));
  }
}

}  // namespace

void throw_unknown_writer(std::string_view what, std::string_view name, const std::vector<std::string>& names) {
  throw InputError(unknown_name_message(what, name, names));
}

OutputTarget parse_output_target(std::string_view text, const std::vector<std::string>& names, std::string_view flag) {
  OutputTarget t;
  t.flag = std::string(flag);
  const auto eq = text.find('=');
  t.format = std::string(text.substr(0, eq));
  if (std::find(names.begin(), names.end(), t.format) == names.end()) {
    throw InputError(fmt::format("{} '{}': {}", flag, text, unknown_name_message("format", t.format, names)));
  }
  if (eq != std::string_view::npos) {
    t.path = std::string(text.substr(eq + 1));
    check_target_path(flag, std::string(text), *t.path);
  }
  return t;
}

std::vector<OutputTarget> parse_output_targets(const std::vector<std::string>& values,
                                               const std::vector<std::string>& names, const std::string& fallback,
                                               std::string_view flag) {
  std::vector<OutputTarget> files;
  std::optional<OutputTarget> console;
  for (const auto& value : values) {
    OutputTarget t = parse_output_target(value, names, flag);
    if (t.path) {
      files.push_back(std::move(t));
    } else if (console) {
      throw InputError(
          fmt::format("{} {} and {} {}: one format goes to standard output; write the others to files with FMT=PATH "
                      "(e.g. {} {}=out.{})",
                      flag, console->format, flag, t.format, flag, t.format, t.format));
    } else {
      console = std::move(t);
    }
  }
  std::vector<OutputTarget> out;
  out.push_back(console ? std::move(*console) : parse_output_target(fallback, names, flag));
  for (auto& t : files) out.push_back(std::move(t));
  return out;
}

void write_output(const OutputTarget& target, std::string_view text) {
  if (!target.path) {
    std::fwrite(text.data(), 1, text.size(), stdout);
    std::fflush(stdout);
    return;
  }
  write_file_checked(*target.path, text, target.flag);
  if (target.announce) std::fprintf(stderr, "collbench: wrote %s\n", target.path->c_str());
}

}  // namespace collbench::report
