// JSONL writer and reader.
#include "collbench/record/jsonl.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>

#include <fmt/format.h>

#include "collbench/core/error.hpp"

namespace collbench::record {

JsonlWriter::JsonlWriter(std::string path, OpenMode mode) : path_(std::move(path)) {
  struct stat st {};
  const bool exists = ::stat(path_.c_str(), &st) == 0;
  if (exists && st.st_size > 0 && mode == OpenMode::create) {
    throw InputError(fmt::format("output file '{}' exists and is not empty; pass --resume to continue it or "
                                 "--force to replace it",
                                 path_));
  }
  int flags = O_RDWR | O_CREAT | O_APPEND | O_CLOEXEC;
  if (mode == OpenMode::force) flags |= O_TRUNC;
  fd_ = ::open(path_.c_str(), flags, 0644);
  if (fd_ < 0) throw InputError(fmt::format("cannot open output file '{}': {}", path_, std::strerror(errno)));
  if (mode == OpenMode::resume && exists && st.st_size > 0) drop_torn_tail();
}

// A run killed mid-write leaves a last line without its newline. Appending after it would
// glue the next record onto the fragment, so resume cuts the fragment off first.
void JsonlWriter::drop_torn_tail() {
  const off_t size = ::lseek(fd_, 0, SEEK_END);
  off_t keep = size;
  char c = 0;
  while (keep > 0) {
    if (::pread(fd_, &c, 1, keep - 1) != 1) break;
    if (c == '\n') break;
    --keep;
  }
  if (keep != size && ::ftruncate(fd_, keep) != 0) {
    throw RuntimeFailure(fmt::format("cannot cut the torn last line of '{}': {}", path_, std::strerror(errno)));
  }
}

JsonlWriter::~JsonlWriter() {
  if (fd_ >= 0) ::close(fd_);
}

void JsonlWriter::write(const nlohmann::json& object) {
  const std::string line = object.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
  std::size_t done = 0;
  while (done < line.size()) {
    const ssize_t n = ::write(fd_, line.data() + done, line.size() - done);
    if (n < 0) {
      if (errno == EINTR) continue;
      throw RuntimeFailure(fmt::format("writing '{}' failed: {}", path_, std::strerror(errno)));
    }
    done += static_cast<std::size_t>(n);
  }
  ::fsync(fd_);
}

std::vector<nlohmann::json> read_jsonl_objects(const std::string& path, std::vector<std::string>& warnings) {
  std::ifstream in(path);
  if (!in) throw InputError(fmt::format("cannot read results file '{}'", path));
  std::vector<std::string> lines;
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  // Was the final line terminated? A crash mid-write leaves it without '\n'.
  in.clear();
  in.seekg(0, std::ios::end);
  const auto size = static_cast<std::streamoff>(in.tellg());
  bool last_terminated = true;
  if (size > 0) {
    in.seekg(size - 1);
    char c = 0;
    in.get(c);
    last_terminated = c == '\n';
  }
  std::vector<nlohmann::json> out;
  for (std::size_t i = 0; i < lines.size(); ++i) {
    const auto& line = lines[i];
    if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
    try {
      auto j = nlohmann::json::parse(line);
      if (!j.is_object()) throw InputError(fmt::format("{}:{}: a record must be a JSON object", path, i + 1));
      out.push_back(std::move(j));
    } catch (const nlohmann::json::parse_error& e) {
      if (i + 1 == lines.size() && !last_terminated) {
        warnings.push_back(fmt::format("{}:{}: skipped a truncated last line (the run was probably interrupted)",
                                       path, i + 1));
        continue;
      }
      throw InputError(fmt::format("{}:{}: invalid JSON: {}", path, i + 1, e.what()));
    }
  }
  return out;
}

ResultFile read_results(const std::string& path) {
  ResultFile file;
  file.path = path;
  const auto objects = read_jsonl_objects(path, file.warnings);
  std::size_t index = 0;
  for (const auto& j : objects) {
    ++index;
    const std::string schema = j.value("schema", "");
    if (schema != kSchema) {
      throw InputError(fmt::format("{}: record {} has schema '{}'; this collbench reads '{}'", path, index,
                                   schema.empty() ? "(none)" : schema, kSchema));
    }
    const std::string kind = j.value("kind", "");
    try {
      if (kind == "run_header") {
        file.header = header_from_json(j);
      } else if (kind == "case") {
        file.cases.push_back(case_from_json(j));
      } else {
        throw InputError(fmt::format("unknown record kind '{}'; accepted: run_header, case", kind));
      }
    } catch (const InputError& e) {
      throw InputError(fmt::format("{}: record {}: {}", path, index, e.what()));
    }
  }
  return file;
}

}  // namespace collbench::record
