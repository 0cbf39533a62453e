// JSONL files: the crash-safe writer (one complete line per record, one write() call, flushed
// and fsync'd at case boundaries) and the tolerant reader (a truncated last line is skipped
// with a warning naming file and line). docs/interfaces.md sections 3 and 4.
#pragma once

#include <functional>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "collbench/record/record.hpp"
#include "collbench/record/writer_lock.hpp"

namespace collbench::record {

enum class OpenMode { create, force, resume };

class JsonlWriter {
 public:
  // create: an existing non-empty file is an InputError; force: truncate; resume: append
  // (after cutting off a torn, unterminated last line). A regular file is locked for the
  // writer's life (writer_lock.hpp): one held by another run is an InputError naming it. An open
  // descriptor (/dev/stdout) is written through a duplicate: never refused, locked or emptied.
  JsonlWriter(std::string path, OpenMode mode);
  JsonlWriter(const JsonlWriter&) = delete;
  JsonlWriter& operator=(const JsonlWriter&) = delete;
  ~JsonlWriter();
  void write(const nlohmann::json& object);  // one line, one write(2), fsync
  // The same line and write(2) without the fsync, and the fsync alone: a writer of many records
  // that can be written again (import) syncs once per batch and at its end instead of per line.
  // A crash then still leaves whole lines and at most a torn last one; a power loss may lose the
  // lines written since the last sync.
  void write_unsynced(const nlohmann::json& object);
  void sync();
  // Rewrites the file's first line (the run header) as `edit` leaves it, for what is known only
  // when the run ends (its communicators): the whole file goes to PATH.collbench-tmp, is fsync'd
  // and renamed over PATH, so a crash leaves the old file or the new one, never a mix; writes
  // then append to the new file. Nothing happens when PATH is not a regular file (a pipe,
  // /dev/stdout, a symbolic link) or has no complete first line that is a JSON object.
  void update_first_line(const std::function<void(nlohmann::json&)>& edit);
  [[nodiscard]] const std::string& path() const { return path_; }

 private:
  void drop_torn_tail();
  static void write_all(int fd, const std::string& data, const std::string& path);
  void sync_parent_directory() const;
  std::string path_;
  int fd_ = -1;
  bool stream_ = false;  // an open descriptor (--out /dev/stdout): written through a duplicate
  WriterLock lock_;
};

struct ResultFile {
  std::string path;
  std::optional<RunHeader> header;
  std::vector<CaseRecord> cases;
  std::vector<std::string> warnings;
};

// A file whose run measured cases several times on purpose (accept's repetitions of a check,
// locate's bisection steps: its run header's configuration lists a case more than once) holds
// one record per repetition under the same case key. Those records are merged here into one per
// key, as --repeats merges its repeats (docs/measurement.md "Repeats"): time_us the median over
// the repetitions of each statistic, `repeats` with each repetition's median and interval,
// samples_us concatenated, iterations summed; identity from the first, status the first that is
// not ok. Keys that appear once, and every key of any other file, are left as they are (a key
// repeated there is refused by the gate). `grouped` receives the number of keys merged.
ResultFile group_repetitions(ResultFile file, std::size_t& grouped);

// One JSON object of a JSONL text and its 1-based line.
struct JsonlLine {
  int line = 0;
  nlohmann::json object;
};

// Nesting deeper than this is refused (InputError): records nest 3 levels, and a line of
// 100000 '[' would otherwise exhaust the stack when the value is copied or printed.
inline constexpr int kMaxJsonDepth = 64;

// Splits JSONL text into objects. Blank lines are skipped; a last line without its '\n' that
// is not valid JSON (a run killed mid-write) is skipped with a warning "PATH:LINE: skipped a
// truncated last line ..."; any other invalid line is an InputError "PATH:LINE: ...".
std::vector<JsonlLine> parse_jsonl(std::string_view text, const std::string& path, std::vector<std::string>& warnings);

// Reads a results file. A malformed line other than a truncated last one is an InputError
// naming file and line; an unsupported schema version is an InputError.
ResultFile read_results(const std::string& path);

// The same, over text already in memory (`path` names it in messages).
ResultFile parse_results(std::string_view text, const std::string& path);

// Raw JSON objects of a JSONL file with the same tolerance (for tools that need extra keys).
std::vector<nlohmann::json> read_jsonl_objects(const std::string& path, std::vector<std::string>& warnings);

}  // namespace collbench::record
