// A results file's lines in batches, parsed on worker threads (see line_batches.hpp).
#include "collbench/record/line_batches.hpp"

#include <fmt/format.h>
#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <utility>

#include "collbench/core/error.hpp"

namespace collbench::record {

namespace {

constexpr std::size_t kBlock = std::size_t{1} << 20;  // at least the 64 KiB head parse_jsonl's messages read
constexpr std::size_t kHead = 65536;

}  // namespace

LineReader::LineReader(const std::string& path, std::string_view what, std::string_view expected)
    : path_(path), what_(what), block_(kBlock) {
  struct stat st {};
  if (::stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode)) {
    throw InputError(fmt::format("{} '{}' is a directory; give {}", what, path, expected));
  }
  in_.open(path, std::ios::binary);
  if (!in_) throw InputError(fmt::format("cannot read {} '{}': {}", what, path, std::strerror(errno)));
}

bool LineReader::fill() {
  if (done_) return false;
  if (!in_.read(block_.data(), static_cast<std::streamsize>(block_.size())) && in_.gcount() == 0) {
    if (in_.bad()) read_errno_ = errno != 0 ? errno : EIO;
    done_ = true;
    return false;
  }
  const auto got = static_cast<std::size_t>(in_.gcount());
  if (head_.size() < kHead) head_.append(block_.data(), std::min(got, kHead - head_.size()));
  pending_.erase(0, pos_);
  pos_ = 0;
  pending_.append(block_.data(), got);
  return true;
}

bool LineReader::next(LineBatch& batch, std::size_t max_lines) {
  batch.text.clear();
  batch.lines.clear();
  batch.parsed.clear();
  while (batch.lines.size() < max_lines) {
    const std::size_t end = pending_.find('\n', pos_);
    if (end == std::string::npos) {
      if (fill()) continue;
      // The end of the file: what is left is a last line without its '\n' (none after a failed read).
      if (pos_ < pending_.size() && read_errno_ == 0) {
        batch.lines.push_back({batch.text.size(), pending_.size() - pos_, ++line_no_, false});
        batch.text.append(pending_, pos_);
      }
      pos_ = pending_.size();
      break;
    }
    batch.lines.push_back({batch.text.size(), end - pos_, ++line_no_, true});
    batch.text.append(pending_, pos_, end - pos_);
    pos_ = end + 1;
  }
  return !batch.lines.empty();
}

void LineReader::finish() const {
  if (read_errno_ != 0) {
    throw InputError(fmt::format("cannot read {} '{}': {}", what_, path_, std::strerror(read_errno_)));
  }
}

unsigned worker_count(unsigned requested) {
  return std::max(1U, requested != 0 ? requested : std::thread::hardware_concurrency());
}

BatchWorkers::BatchWorkers(unsigned workers, std::size_t max_batches, std::function<void(LineBatch&)> work)
    : work_(std::move(work)), max_batches_(std::max<std::size_t>(max_batches, 1)) {
  try {
    for (unsigned i = 0; i < std::max(workers, 1U); ++i) threads_.emplace_back([this] { run(); });
  } catch (...) {  // a thread that could not start: the started ones must not wait forever
    stop_and_join();
    throw;
  }
}

BatchWorkers::~BatchWorkers() {
  stop_and_join();
}

void BatchWorkers::stop_and_join() {
  {
    const std::lock_guard lock(mutex_);
    stop_ = true;
  }
  work_ready_.notify_all();
  threads_.clear();  // joins
}

bool BatchWorkers::full() const {
  const std::lock_guard lock(mutex_);
  return in_flight_.size() >= max_batches_;
}

bool BatchWorkers::empty() const {
  const std::lock_guard lock(mutex_);
  return in_flight_.empty();
}

void BatchWorkers::submit(LineBatch batch) {
  auto slot = std::make_unique<Slot>();
  slot->batch = std::move(batch);
  {
    const std::lock_guard lock(mutex_);
    queued_.push_back(slot.get());
    in_flight_.push_back(std::move(slot));
  }
  work_ready_.notify_one();
}

LineBatch BatchWorkers::take() {
  std::unique_ptr<Slot> slot;
  {
    std::unique_lock lock(mutex_);
    batch_done_.wait(lock, [&] { return !in_flight_.empty() && in_flight_.front()->done; });
    slot = std::move(in_flight_.front());
    in_flight_.pop_front();
  }
  if (slot->error) std::rethrow_exception(slot->error);
  return std::move(slot->batch);
}

void BatchWorkers::run() {
  std::unique_lock lock(mutex_);
  while (true) {
    work_ready_.wait(lock, [&] { return stop_ || !queued_.empty(); });
    if (stop_) return;
    Slot* slot = queued_.front();
    queued_.pop_front();
    lock.unlock();
    try {
      work_(slot->batch);
    } catch (...) {
      slot->error = std::current_exception();
    }
    lock.lock();
    slot->done = true;
    batch_done_.notify_all();
  }
}

}  // namespace collbench::record
