// Output targets of the writer registries (writer.hpp).
#include "collbench/report/writer.hpp"

#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <system_error>
#include <utility>

#include "collbench/core/checked_output.hpp"
#include "collbench/core/error.hpp"
#include "collbench/report/console_writer.hpp"

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

// The file behind an open descriptor when it is a regular one ("inode D:I"), else "fd N": two
// outputs on one terminal or pipe interleave as surely as two on one file.
std::string descriptor_identity(int fd) {
  struct stat buf {};
  if (::fstat(fd, &buf) == 0 && S_ISREG(buf.st_mode)) return fmt::format("inode {}:{}", buf.st_dev, buf.st_ino);
  return fmt::format("fd {}", fd);
}

// Identity of the file TARGET (a path through output_target) writes: a regular file's device and
// inode, a new file's canonical path, an open descriptor's (descriptor_identity); nullopt for a
// device or FIFO, which any number of outputs may write (/dev/null twice).
std::optional<std::string> written_file_identity(const std::string& target) {
  if (const auto fd = descriptor_of(target)) return descriptor_identity(*fd);
  struct stat buf {};
  if (::stat(target.c_str(), &buf) == 0) {
    if (!S_ISREG(buf.st_mode)) return std::nullopt;
    return fmt::format("inode {}:{}", buf.st_dev, buf.st_ino);
  }
  std::error_code ec;
  const fs::path canonical = fs::weakly_canonical(fs::absolute(target, ec), ec);
  return (ec ? fs::absolute(target, ec).lexically_normal() : canonical).string();
}

// TARGET (a path through output_target) is a regular file with something in it (what --force
// replaces); never an open descriptor.
bool holds_something(const std::string& target) {
  std::error_code ec;
  if (names_open_descriptor(target)) return false;
  return fs::is_regular_file(target, ec) && fs::file_size(target, ec) > 0 && !ec;
}

std::string spelled(const OutputTarget& t) {
  return t.path ? fmt::format("{} {}={}", t.flag, t.format, *t.path) : fmt::format("{} {}", t.flag, t.format);
}

// The outputs a run writes, each with the identity of its file: the --out file, standard output
// (when a format goes there), each --format file.
struct Written {
  std::string id;
  std::string what;  // for messages: "the --out file", "standard output, where --format table goes"
};

std::vector<Written> fixed_outputs(const std::vector<OutputTarget>& targets, const std::optional<std::string>& out) {
  std::vector<Written> w;
  if (out) {
    if (auto id = written_file_identity(output_target(*out)))
      w.push_back({*id, "the --out file, where the records go already"});
  }
  for (const auto& t : targets) {
    if (!t.path && !console_writer_is_silent(t.format))
      w.push_back({descriptor_identity(1), "standard output, where " + spelled(t) + " goes"});
  }
  return w;
}

}  // namespace

void check_run_output_files(const std::vector<OutputTarget>& targets, const std::optional<std::string>& out_path,
                            record::OpenMode mode) {
  std::vector<Written> seen = fixed_outputs(targets, out_path);
  if (seen.size() >= 2 && out_path && seen[0].id == seen[1].id) {  // --out /dev/stdout beside a table there
    throw InputError(
        fmt::format("--out '{}' is also {}; add --format none, or give --out a file", *out_path, seen[1].what));
  }
  for (const auto& t : targets) {
    if (!t.path) continue;
    const std::string target = output_target(*t.path);
    if (names_open_descriptor(target)) ::close(duplicate_for_writing(target, spelled(t)));  // open for writing?
    if (const auto id = written_file_identity(target)) {
      for (const auto& other : seen) {
        if (other.id == *id) {
          throw InputError(
              fmt::format("{}: '{}' is also {}; give each output its own file", spelled(t), *t.path, other.what));
        }
      }
      seen.push_back({*id, "the file of " + spelled(t)});
    }
    if (mode == record::OpenMode::force || !holds_something(target)) continue;
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
