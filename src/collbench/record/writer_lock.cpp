// One writer per results file: see writer_lock.hpp.
#include "collbench/record/writer_lock.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <cstring>
#include <utility>

#include "collbench/core/error.hpp"

namespace collbench::record {
namespace {

// PATH.lock's text, or "" when it is missing or empty (its holder has not written it yet).
std::string read_side_file(const std::string& side) {
  const int fd = ::open(side.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return "";
  std::array<char, 512> buf{};
  const ssize_t n = ::read(fd, buf.data(), buf.size() - 1);
  ::close(fd);
  std::string text(buf.data(), n > 0 ? static_cast<std::size_t>(n) : 0);
  while (!text.empty() && (text.back() == '\n' || text.back() == '\r')) text.pop_back();
  return text;
}

// Best effort: a folder we cannot write in still gets the lock, only without the record.
void write_side_file(const std::string& side) {
  const int fd = ::open(side.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return;
  const std::string text = holder_text() + "\n";
  (void)!::write(fd, text.data(), text.size());
  ::close(fd);
}

}  // namespace

std::string holder_text() {
  std::array<char, 256> host{};
  if (::gethostname(host.data(), host.size() - 1) != 0) host[0] = '\0';
  return fmt::format("pid {} on host {}", ::getpid(), host[0] != '\0' ? host.data() : "(unknown)");
}

WriterLock::WriterLock(int fd, const std::string& path) {
  struct stat st {};
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) return;
  const std::string side = path + ".lock";
  if (::flock(fd, LOCK_EX | LOCK_NB) != 0) {
    if (errno != EWOULDBLOCK) return;  // a file system without flock: nothing to hold
    const std::string holder = read_side_file(side);
    throw InputError(fmt::format(
        "output file '{}' is being written by another collbench run ({}); wait for it to finish or choose another "
        "--out file",
        path, holder.empty() ? "its pid and host are not recorded yet in " + side : holder));
  }
  side_path_ = side;
  write_side_file(side_path_);
}

WriterLock::WriterLock(WriterLock&& other) noexcept : side_path_(std::exchange(other.side_path_, {})) {}

WriterLock& WriterLock::operator=(WriterLock&& other) noexcept {
  if (this != &other) {
    if (held()) ::unlink(side_path_.c_str());
    side_path_ = std::exchange(other.side_path_, {});
  }
  return *this;
}

WriterLock::~WriterLock() {
  if (held()) ::unlink(side_path_.c_str());
}

}  // namespace collbench::record
