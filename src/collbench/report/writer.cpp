// Output targets of the writer registries (writer.hpp).
#include "collbench/report/writer.hpp"

#include <fmt/format.h>
#include <sys/stat.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <system_error>
#include <utility>

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

// Identity of the file a path writes: device and inode when it exists, else its absolute path.
std::string written_file_identity(const std::string& path) {
  const fs::path target(output_target(path));
  std::error_code ec;
  const auto st = fs::status(target, ec);
  if (!ec && fs::exists(st)) {
    struct stat buf {};
    if (::stat(target.c_str(), &buf) == 0) return fmt::format("inode {}:{}", buf.st_dev, buf.st_ino);
  }
  return fs::absolute(target, ec).lexically_normal().string();
}

// A regular file with something in it (what --force replaces).
bool holds_something(const std::string& path) {
  std::error_code ec;
  const fs::path target(output_target(path));
  return fs::is_regular_file(target, ec) && fs::file_size(target, ec) > 0 && !ec;
}

std::string spelled(const OutputTarget& t) {
  return fmt::format("{} {}={}", t.flag, t.format, *t.path);
}

}  // namespace

void check_run_output_files(const std::vector<OutputTarget>& targets, const std::optional<std::string>& out_path,
                            record::OpenMode mode) {
  std::vector<std::pair<std::string, const OutputTarget*>> seen;
  for (const auto& t : targets) {
    if (!t.path || names_open_descriptor(output_target(*t.path))) continue;
    const std::string id = written_file_identity(*t.path);
    if (out_path && id == written_file_identity(*out_path)) {
      throw InputError(
          fmt::format("{}: '{}' is the --out file, where the records go already; give the format "
                      "another path",
                      spelled(t), *t.path));
    }
    for (const auto& [other_id, other] : seen) {
      if (other_id == id) {
        throw InputError(fmt::format("{}: '{}' is also the file of {}; give each format its own file", spelled(t),
                                     *t.path, spelled(*other)));
      }
    }
    seen.emplace_back(id, &t);
    if (mode == record::OpenMode::force || !holds_something(*t.path)) continue;
    if (mode == record::OpenMode::resume) {
      throw InputError(
          fmt::format("{}: '{}' exists and is not empty; --resume continues only the --out file: "
                      "remove it or give another path ('collbench report' of the --out file prints "
                      "every case)",
                      spelled(t), *t.path));
    }
    throw InputError(fmt::format("{}: '{}' exists and is not empty; pass --force to replace it, or choose another path",
                                 spelled(t), *t.path));
  }
}

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
