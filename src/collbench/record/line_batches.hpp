// A results file's lines in batches, parsed on worker threads and taken back in file order
// (issue 37 item 8): stream_input's reader. The calling thread reads the file and takes the
// batches back; the workers only parse lines, each without knowing the lines before it, and any
// line they cannot parse alone (an error, a warning, a line whose message depends on the lines
// before it) is read again on the calling thread by the serial reader, in file order, so that
// warnings and the first error are the serial reader's. Pure C++ (std::jthread).
#pragma once

#include <condition_variable>
#include <cstddef>
#include <deque>
#include <exception>
#include <fstream>
#include <functional>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "collbench/record/record.hpp"

namespace collbench::record {

// What a worker made of one line alone.
struct ParsedLine {
  // blank: skipped; record: a case record of this schema; object: another object that passed the
  // line rules (a run header); again: to be read again by the serial reader.
  enum class Kind { blank, record, object, again };
  Kind kind = Kind::again;
  CaseRecord record;
  nlohmann::json object;
};

// Consecutive lines of a file, and what the worker made of each (`parsed`, same order).
struct LineBatch {
  struct Line {
    std::size_t begin = 0, size = 0;  // in `text`
    int number = 0;                   // 1-based line of the file
    bool terminated = true;           // false: the last line, without its '\n'
  };
  std::string text;
  std::vector<Line> lines;
  std::vector<ParsedLine> parsed;
  [[nodiscard]] std::string_view line(const Line& l) const { return std::string_view(text).substr(l.begin, l.size); }
};

// A file read in blocks of 1 MiB and split into lines at '\n', as for_each_jsonl_line reads it.
class LineReader {
 public:
  // The InputError of read_input_file for a directory or a file that cannot be opened, `what` and
  // `expected` naming its kind ("results file", "a JSONL file").
  LineReader(const std::string& path, std::string_view what, std::string_view expected);
  // The next lines, up to `max_lines` of them, into `batch` (emptied first); false when none is left.
  bool next(LineBatch& batch, std::size_t max_lines);
  // The InputError "cannot read ..." when a read failed (the lines read before it were handed out).
  void finish() const;
  // The file's first 64 KiB, as far as read (parse_jsonl's message about a JSON document names its schema).
  [[nodiscard]] std::string_view head() const { return head_; }

 private:
  bool fill();  // one more block into pending_; false at the end of the file or after a failed read
  std::string path_, what_;
  std::ifstream in_;
  std::vector<char> block_;
  std::string pending_;  // read, not yet handed out from pos_ on: at most one block and one line
  std::size_t pos_ = 0;
  std::string head_;
  int line_no_ = 0;
  bool done_ = false;
  int read_errno_ = 0;
};

// Worker threads applying `work` to batches; the batches come back in the order they went in.
// The destructor stops and joins them (a batch being worked on is finished first).
class BatchWorkers {
 public:
  BatchWorkers(unsigned workers, std::size_t max_batches, std::function<void(LineBatch&)> work);
  BatchWorkers(const BatchWorkers&) = delete;
  BatchWorkers& operator=(const BatchWorkers&) = delete;
  ~BatchWorkers();
  [[nodiscard]] bool full() const;   // max_batches in flight: take() before the next submit()
  [[nodiscard]] bool empty() const;  // none in flight
  void submit(LineBatch batch);
  // The oldest batch in flight once worked on; what `work` threw on it, rethrown.
  LineBatch take();

 private:
  struct Slot {
    LineBatch batch;
    std::exception_ptr error;
    bool done = false;
  };
  void run();
  void stop_and_join();
  std::function<void(LineBatch&)> work_;
  std::size_t max_batches_;
  mutable std::mutex mutex_;
  std::condition_variable work_ready_, batch_done_;
  std::deque<std::unique_ptr<Slot>> in_flight_;  // file order
  std::deque<Slot*> queued_;                     // not yet taken by a worker
  bool stop_ = false;
  std::vector<std::jthread> threads_;  // last: joined before the rest is destroyed
};

// The number of workers for `requested` (0: std::thread::hardware_concurrency()), at least 1.
unsigned worker_count(unsigned requested);

}  // namespace collbench::record
