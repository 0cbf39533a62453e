// JSONL files: the crash-safe writer (one complete line per record, one write() call, flushed
// and fsync'd at case boundaries) and the tolerant reader (a truncated last line is skipped
// with a warning naming file and line). INTERFACES.md sections 3 and 4.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "collbench/record/record.hpp"

namespace collbench::record {

enum class OpenMode { create, force, resume };

class JsonlWriter {
 public:
  // create: an existing non-empty file is an InputError; force: truncate; resume: append
  // (after cutting off a torn, unterminated last line).
  JsonlWriter(std::string path, OpenMode mode);
  JsonlWriter(const JsonlWriter&) = delete;
  JsonlWriter& operator=(const JsonlWriter&) = delete;
  ~JsonlWriter();
  void write(const nlohmann::json& object);  // one line, one write(2), fsync
  [[nodiscard]] const std::string& path() const { return path_; }

 private:
  void drop_torn_tail();
  std::string path_;
  int fd_ = -1;
};

struct ResultFile {
  std::string path;
  std::optional<RunHeader> header;
  std::vector<CaseRecord> cases;
  std::vector<std::string> warnings;
};

// Reads a results file. A malformed line other than a truncated last one is an InputError
// naming file and line; an unsupported schema version is an InputError.
ResultFile read_results(const std::string& path);

// Raw JSON objects of a JSONL file with the same tolerance (for tools that need extra keys).
std::vector<nlohmann::json> read_jsonl_objects(const std::string& path, std::vector<std::string>& warnings);

}  // namespace collbench::record
