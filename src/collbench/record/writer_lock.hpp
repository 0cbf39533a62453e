// One writer per results file (issue 37 item 2): the JSONL writer holds an exclusive flock(2) on
// its file for the life of the run, so a second run given the same --out (with --force, --resume
// or neither) is refused (exit 2) instead of interleaving its records. The holder's pid and host
// are written to PATH.lock beside it, for the refusal to name them; readers never lock.
#pragma once

#include <string>

namespace collbench::record {

class WriterLock {
 public:
  WriterLock() = default;
  // Locks the open file FD (PATH names it). A device, FIFO or pipe is not locked: many runs may
  // write /dev/null or a pipe. InputError "output file 'PATH' is being written by another
  // collbench run (pid P on host H); ..." when another open file holds the lock.
  WriterLock(int fd, const std::string& path);
  WriterLock(WriterLock&& other) noexcept;
  WriterLock& operator=(WriterLock&& other) noexcept;
  WriterLock(const WriterLock&) = delete;
  WriterLock& operator=(const WriterLock&) = delete;
  // Removes PATH.lock; the flock goes with the file's descriptor, closed by its owner.
  ~WriterLock();

  [[nodiscard]] bool held() const { return !side_path_.empty(); }

 private:
  std::string side_path_;  // PATH.lock, empty when nothing is held
};

// "pid 1234 on host node-a": who this process is, as PATH.lock records it.
std::string holder_text();

}  // namespace collbench::record
