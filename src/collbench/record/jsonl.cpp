// JSONL writer and reader.
#include "collbench/record/jsonl.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <regex>
#include <sstream>

#include "collbench/core/checked_output.hpp"
#include "collbench/core/error.hpp"
#include "collbench/core/input_file.hpp"
#include "collbench/record/jsonl_stream.hpp"
#include "collbench/record/line_batches.hpp"
#include "collbench/record/value_checks.hpp"

namespace collbench::record {
namespace {

// Whether TEXT is one whole JSON object (what parse_jsonl keeps from an unterminated last line).
bool complete_object(const std::string& text) {
  if (text.find_first_not_of(" \t\r") == std::string::npos) return false;
  try {
    std::vector<std::string> warnings;
    return parse_jsonl(text, "", warnings).size() == 1 && warnings.empty();
  } catch (const InputError&) {
    return false;
  }
}

}  // namespace

JsonlWriter::JsonlWriter(std::string path, OpenMode mode) : path_(std::move(path)) {
  // An open descriptor (--out /dev/stdout, a pipe to jq or a log the shell appends to) is a
  // stream: written through a duplicate, never refused as non-empty, locked, emptied or continued.
  const std::string target = output_target(path_);
  const bool stream = names_open_descriptor(target);
  stream_ = stream;
  if (stream && mode == OpenMode::resume) {
    throw InputError(
        fmt::format("--resume: '{}' is an open descriptor, not a file to continue; give --out a file", path_));
  }
  struct stat st {};
  const bool exists = ::stat(path_.c_str(), &st) == 0;
  if (exists && S_ISDIR(st.st_mode)) {
    throw InputError(
        fmt::format("output file '{}' is a directory; give a file in it, e.g. '{}/results.jsonl'", path_, path_));
  }
  if (!stream && exists && st.st_size > 0 && mode == OpenMode::create) {
    throw InputError(
        fmt::format("output file '{}' exists and is not empty; pass --resume to continue it or "
                    "--force to replace it",
                    path_));
  }
  if (stream) {  // a duplicate: never reopened (a pipe reopened read-write would keep its reader)
    fd_ = duplicate_for_writing(target, "output file");
    return;
  }
  // Never O_TRUNC: --force truncates only once it holds the lock, so a second run cannot empty
  // the file of one still writing it.
  fd_ = ::open(path_.c_str(), O_RDWR | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (fd_ < 0) throw InputError(fmt::format("cannot open output file '{}': {}", path_, std::strerror(errno)));
  try {
    lock_ = WriterLock(fd_, path_);
    // (a device or FIFO cannot be truncated: EINVAL, as O_TRUNC ignored it before)
    if (mode == OpenMode::force && ::ftruncate(fd_, 0) != 0 && errno != EINVAL)
      throw RuntimeFailure(fmt::format("cannot empty '{}' for --force: {}", path_, std::strerror(errno)));
    if (mode == OpenMode::resume && exists && st.st_size > 0) drop_torn_tail();
  } catch (...) {
    lock_ = WriterLock{};
    ::close(fd_);
    fd_ = -1;
    throw;
  }
  if (!exists) sync_parent_directory();
}

// A new file's directory entry must reach the disk too, or a power loss can lose the whole
// file although every line in it was fsync'd.
void JsonlWriter::sync_parent_directory() const {
  const auto slash = path_.find_last_of('/');
  const std::string dir = slash == std::string::npos ? "." : (slash == 0 ? "/" : path_.substr(0, slash));
  const int dfd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dfd < 0) return;  // best effort: the data itself is fsync'd per line
  ::fsync(dfd);
  ::close(dfd);
}

// A run killed mid-write leaves a last line without its newline. Appending after it would
// glue the next record onto the fragment, so resume cuts the fragment off first. A last line
// that is a complete JSON object and lacks only its newline is a finished record (the reader
// keeps it and resume counts its case as done): it gets its newline instead.
void JsonlWriter::drop_torn_tail() {
  const off_t size = ::lseek(fd_, 0, SEEK_END);
  off_t keep = size;
  char c = 0;
  while (keep > 0) {
    if (::pread(fd_, &c, 1, keep - 1) != 1) break;
    if (c == '\n') break;
    --keep;
  }
  if (keep == size) return;
  std::string tail(static_cast<std::size_t>(size - keep), '\0');
  const bool read_ok = ::pread(fd_, tail.data(), tail.size(), keep) == static_cast<ssize_t>(tail.size());
  if (read_ok && complete_object(tail)) {
    if (::write(fd_, "\n", 1) != 1) {
      throw RuntimeFailure(fmt::format("cannot end the last line of '{}': {}", path_, std::strerror(errno)));
    }
    return;
  }
  if (::ftruncate(fd_, keep) != 0) {
    throw RuntimeFailure(fmt::format("cannot cut the torn last line of '{}': {}", path_, std::strerror(errno)));
  }
}

JsonlWriter::~JsonlWriter() {
  lock_ = WriterLock{};  // PATH.lock goes first: after the close another run may already hold the file
  if (fd_ >= 0) ::close(fd_);
}

void JsonlWriter::write_all(int fd, const std::string& data, const std::string& path) {
  std::size_t done = 0;
  while (done < data.size()) {
    const ssize_t n = ::write(fd, data.data() + done, data.size() - done);
    if (n < 0) {
      if (errno == EINTR) continue;
      throw RuntimeFailure(fmt::format("writing '{}' failed: {}", path, std::strerror(errno)));
    }
    done += static_cast<std::size_t>(n);
  }
}

void JsonlWriter::write(const nlohmann::json& object) {
  write_unsynced(object);
  // A case boundary: the line is on disk before the next case starts.
  sync();
}

void JsonlWriter::write_unsynced(const nlohmann::json& object) {
  write_all(fd_, object.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) + "\n", path_);
}

void JsonlWriter::sync() {
  // Pipes, character devices and some file systems cannot sync (EINVAL, EROFS, ENOTSUP):
  // --out /dev/stdout still works.
  if (::fsync(fd_) != 0 && errno != EINVAL && errno != EROFS && errno != ENOTSUP && errno != EINTR) {
    throw RuntimeFailure(fmt::format("syncing '{}' to disk failed: {}", path_, std::strerror(errno)));
  }
}

void JsonlWriter::update_first_line(const std::function<void(nlohmann::json&)>& edit) {
  if (stream_) return;  // a stream's header is written once, as it is
  struct stat st {};
  struct stat link {};
  if (::fstat(fd_, &st) != 0 || !S_ISREG(st.st_mode)) return;
  if (::lstat(path_.c_str(), &link) != 0 || !S_ISREG(link.st_mode)) return;  // a link would be replaced
  std::string text(static_cast<std::size_t>(st.st_size), '\0');
  if (::pread(fd_, text.data(), text.size(), 0) != static_cast<ssize_t>(text.size())) return;
  const auto nl = text.find('\n');
  if (nl == std::string::npos) return;
  nlohmann::json first;
  try {
    first = nlohmann::json::parse(text.substr(0, nl));
  } catch (const nlohmann::json::exception&) {
    return;
  }
  if (!first.is_object()) return;
  edit(first);
  const std::string tmp = path_ + ".collbench-tmp";
  const int out = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, st.st_mode & 07777);
  if (out < 0) throw RuntimeFailure(fmt::format("cannot create '{}': {}", tmp, std::strerror(errno)));
  try {
    write_all(out, first.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace), tmp);
    write_all(out, text.substr(nl), tmp);
  } catch (...) {
    ::close(out);
    ::unlink(tmp.c_str());
    throw;
  }
  const bool synced = ::fsync(out) == 0 || errno == EINVAL || errno == EROFS || errno == ENOTSUP;
  ::close(out);
  if (!synced || ::rename(tmp.c_str(), path_.c_str()) != 0) {
    const std::string why = std::strerror(errno);
    ::unlink(tmp.c_str());
    throw RuntimeFailure(fmt::format("rewriting the run header of '{}' failed: {}", path_, why));
  }
  sync_parent_directory();
  ::close(fd_);
  fd_ = ::open(path_.c_str(), O_RDWR | O_APPEND | O_CLOEXEC);
  if (fd_ < 0) throw RuntimeFailure(fmt::format("cannot reopen '{}': {}", path_, std::strerror(errno)));
}

namespace {

std::string read_whole_file(const std::string& path) {
  return read_input_file(path, "results file", "a JSONL file");
}

// "at column 151: syntax error while parsing ..." from nlohmann's "[json.exception.parse_error.101]
// parse error at line 1, column 151: syntax error ..." (each JSONL line is parsed alone, so its
// "line 1" would only confuse next to the file's own line number).
std::string parse_error_text(const nlohmann::json::parse_error& e) {
  const std::string what = e.what();
  const auto colon = what.find(": ", what.find("column "));
  if (colon == std::string::npos) return ": " + what;
  return fmt::format("at column {}: {}", e.byte, what.substr(colon + 2));
}

// The value of a string-valued key, or "" when absent or of another type (checked by the caller).
std::string string_or_empty(const nlohmann::json& j, const char* key) {
  const auto it = j.find(key);
  return it != j.end() && it->is_string() ? it->get<std::string>() : std::string{};
}

// A first line of only "{" or "[": a JSON document written over several lines (a verdict.json,
// a weak-scaling report.json), not JSONL: say so and name its schema (issue 37 item 7).
void check_not_a_json_document(std::string_view text, std::string_view first_line, const std::string& path,
                               int line_no) {
  const auto begin = first_line.find_first_not_of(" \t\r");
  const auto end = first_line.find_last_not_of(" \t\r");
  if (begin == std::string_view::npos || begin != end || (first_line[begin] != '{' && first_line[begin] != '[')) return;
  std::string schema = "no schema";
  // (an ordinary literal, not a raw string: scripts/lint's size check cannot read raw strings)
  static const std::regex kSchemaKey("\"schema\"\\s*:\\s*\"([^\"\\n]{1,80})\"");
  const std::string head(text.substr(0, 65536));
  if (std::smatch m; std::regex_search(head, m, kSchemaKey)) schema = fmt::format("schema '{}'", m[1].str());
  throw InputError(
      fmt::format("{}:{}: a JSON document ({}) written over several lines, not a results file: those hold one JSON "
                  "record per line (JSONL, schema '{}'); give a results file, e.g. the records-*.jsonl beside a "
                  "verdict.json",
                  path, line_no, schema, kSchema));
}

}  // namespace

namespace {

// Where a line comes from: the file's name and the start of its text (for the message about a
// JSON document), and where a skipped line's warning goes.
struct LineSource {
  const std::string& path;
  std::string_view head;
  std::vector<std::string>& warnings;
};

// One line under parse_jsonl's rules into `j`: false for a blank line or a truncated last line
// (skipped with a warning); `first` when no object came before it.
bool parse_line(std::string_view line, bool terminated, bool first, int line_no, const LineSource& src,
                nlohmann::json& j) {
  const std::string& path = src.path;
  if (line.find_first_not_of(" \t\r") == std::string_view::npos) return false;
  try {
    // The callback bounds the nesting depth (a value nested 100000 deep would overflow the
    // stack when copied or printed later).
    j = nlohmann::json::parse(line, [&](int depth, nlohmann::json::parse_event_t, nlohmann::json&) {
      if (depth > kMaxJsonDepth) {
        throw InputError(fmt::format("{}:{}: JSON nested deeper than {} levels; not a collbench record", path, line_no,
                                     kMaxJsonDepth));
      }
      return true;
    });
  } catch (const nlohmann::json::parse_error& e) {
    if (const auto nf = find_non_finite(line)) {
      throw InputError(fmt::format("{}:{}: key '{}': {} is not a JSON number; times and rates are finite numbers >= 0",
                                   path, line_no, nf->key, nf->token));
    }
    // A run killed mid-write leaves a last line without its newline: skip it, say so.
    if (!terminated) {
      src.warnings.push_back(
          fmt::format("{}:{}: skipped a truncated last line (the run was probably interrupted)", path, line_no));
      return false;
    }
    if (first) check_not_a_json_document(src.head, line, path, line_no);
    throw InputError(fmt::format("{}:{}: invalid JSON {}", path, line_no, parse_error_text(e)));
  } catch (const nlohmann::json::out_of_range& e) {
    // A number beyond double's range ("1e315"): not something collbench writes.
    throw InputError(fmt::format("{}:{}: invalid JSON: a number out of range ({})", path, line_no, e.what()));
  }
  if (!j.is_object()) throw InputError(fmt::format("{}:{}: a record must be a JSON object", path, line_no));
  try {
    check_case_values(j);
  } catch (const InputError& e) {
    throw InputError(fmt::format("{}:{}: {}", path, line_no, e.what()));
  }
  return true;
}

}  // namespace

std::vector<JsonlLine> parse_jsonl(std::string_view text, const std::string& path, std::vector<std::string>& warnings) {
  std::vector<JsonlLine> out;
  const LineSource src{path, text, warnings};
  std::size_t pos = 0;
  int line_no = 0;
  while (pos < text.size()) {
    const std::size_t end = text.find('\n', pos);
    const bool terminated = end != std::string_view::npos;
    const std::string_view line = text.substr(pos, (terminated ? end : text.size()) - pos);
    pos = terminated ? end + 1 : text.size();
    ++line_no;
    nlohmann::json j;
    if (parse_line(line, terminated, out.empty(), line_no, src, j)) out.push_back({line_no, std::move(j)});
  }
  return out;
}

bool read_jsonl_line(std::string_view line, bool terminated, bool first, int line_no, const std::string& path,
                     std::string_view head, std::vector<std::string>& warnings, nlohmann::json& out) {
  return parse_line(line, terminated, first, line_no, LineSource{path, head, warnings}, out);
}

void for_each_jsonl_line(const std::string& path, std::string_view what, std::string_view expected,
                         std::vector<std::string>& warnings, const std::function<void(JsonlLine&&)>& on_line) {
  LineReader reader(path, what, expected);
  LineBatch batch;
  bool first = true;
  while (reader.next(batch, 1024)) {
    for (const auto& line : batch.lines) {
      JsonlLine l{line.number, {}};
      if (!read_jsonl_line(batch.line(line), line.terminated, first, line.number, path, reader.head(), warnings,
                           l.object))
        continue;
      first = false;
      on_line(std::move(l));
    }
  }
  reader.finish();
}

std::vector<nlohmann::json> read_jsonl_objects(const std::string& path, std::vector<std::string>& warnings) {
  std::vector<nlohmann::json> out;
  for (auto& l : parse_jsonl(read_whole_file(path), path, warnings)) out.push_back(std::move(l.object));
  return out;
}

ResultFile parse_results(std::string_view text, const std::string& path) {
  ResultFile file;
  file.path = path;
  for (const auto& [line, j] : parse_jsonl(text, path, file.warnings)) {
    const std::string schema = string_or_empty(j, "schema");
    if (schema != kSchema) {
      throw InputError(fmt::format("{}:{}: record has schema '{}'; this collbench reads '{}'", path, line,
                                   schema.empty() ? "(none)" : schema, kSchema));
    }
    const std::string kind = string_or_empty(j, "kind");
    try {
      if (kind == "run_header") {
        if (file.header) {
          throw InputError(
              "a second run header: one file holds one run (resume appends cases, never a header); "
              "keep runs in separate files");
        }
        file.header = header_from_json(j);
      } else if (kind == "case") {
        file.cases.push_back(case_from_json(j));
      } else {
        throw InputError(fmt::format("unknown record kind '{}'; accepted: run_header, case", kind));
      }
    } catch (const InputError& e) {
      throw InputError(fmt::format("{}:{}: {}", path, line, e.what()));
    }
  }
  return file;
}

ResultFile read_results(const std::string& path) {
  return parse_results(read_whole_file(path), path);
}

}  // namespace collbench::record
