// Checked output: see checked_output.hpp.
#include "collbench/core/checked_output.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <charconv>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <set>
#include <vector>

namespace collbench {
namespace {

std::string prefixed(std::string_view what, const std::string& path) {
  return what.empty() ? fmt::format("'{}'", path) : fmt::format("{} '{}'", what, path);
}

// Writes every byte of TEXT to FD; the errno of the failure, or 0.
int write_all(int fd, std::string_view text) {
  std::size_t done = 0;
  while (done < text.size()) {
    const ssize_t n = ::write(fd, text.data() + done, text.size() - done);
    if (n < 0) {
      if (errno == EINTR) continue;
      return errno;
    }
    done += static_cast<std::size_t>(n);
  }
  return 0;
}

// Writes TEXT to the open FD, syncs it when `sync` (a regular file about to be renamed) and
// closes it; the errno of the first failure, or 0. Pipes and devices cannot sync (EINVAL).
int write_sync_close(int fd, std::string_view text, bool sync) {
  int err = write_all(fd, text);
  if (err == 0 && sync && ::fsync(fd) != 0 && errno != EINVAL && errno != EROFS && errno != ENOTSUP) err = errno;
  const int close_err = ::close(fd) != 0 ? errno : 0;
  return err != 0 ? err : close_err;
}

std::string parent_of(const std::string& path) {
  const auto slash = path.find_last_of('/');
  if (slash == std::string::npos) return "";
  return path.substr(0, slash + 1);
}

// A device, FIFO or socket: written in place, never replaced. An open descriptor of this process
// is written through a duplicate, which shares its offset (and its O_APPEND) with the original.
void write_in_place(const std::string& path, const std::string& target, std::string_view text, std::string_view what) {
  const int fd = names_open_descriptor(target) ? duplicate_for_writing(target, what)
                                               : ::open(target.c_str(), O_WRONLY | O_CLOEXEC);
  if (fd < 0) throw InputError(fmt::format("cannot write {}: {}", prefixed(what, path), std::strerror(errno)));
  if (const int err = write_sync_close(fd, text, false); err != 0)
    throw OutputError(fmt::format("writing {} failed: {}", prefixed(what, path), std::strerror(err)));
}

// TARGET.tmp.PID, created fresh next to TARGET with TARGET's permissions when it exists.
int open_temporary(const std::string& tmp, const struct stat* existing) {
  const mode_t mode = existing != nullptr ? (existing->st_mode & 07777) : 0644;
  int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, mode);
  if (fd < 0 && errno == EEXIST && ::unlink(tmp.c_str()) == 0)  // left by a killed process with our pid
    fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, mode);
  if (fd >= 0 && existing != nullptr) (void)::fchmod(fd, existing->st_mode & 07777);  // past the umask
  return fd;
}

// A regular file (or none yet): through a temporary and a rename, so a reader never sees half
// of it and a failed write leaves what was there before (or nothing), never an empty file.
void write_by_rename(const std::string& path, const std::string& target, const struct stat* existing,
                     std::string_view text, std::string_view what) {
  const std::string tmp = fmt::format("{}.tmp.{}", target, ::getpid());
  const int fd = open_temporary(tmp, existing);
  if (fd < 0) throw InputError(fmt::format("cannot write {}: {}", prefixed(what, path), std::strerror(errno)));
  if (const int err = write_sync_close(fd, text, true); err != 0) {
    ::unlink(tmp.c_str());
    throw OutputError(fmt::format("writing {} failed: {}", prefixed(what, path), std::strerror(err)));
  }
  if (std::rename(tmp.c_str(), target.c_str()) != 0) {
    const int err = errno;
    ::unlink(tmp.c_str());
    throw InputError(fmt::format("cannot write {}: {}", prefixed(what, path), std::strerror(err)));
  }
}

}  // namespace

std::optional<int> descriptor_of(std::string_view path) {
  if (path == "/dev/stdout") return 1;
  if (path == "/dev/stderr") return 2;
  const auto slash = path.find_last_of('/');
  if (slash == std::string_view::npos || slash + 1 >= path.size()) return std::nullopt;
  const std::string_view name = path.substr(slash + 1);
  if (name.size() > 9 || !std::all_of(name.begin(), name.end(), [](char c) { return c >= '0' && c <= '9'; }))
    return std::nullopt;
  // The folder of this process's descriptors however it is spelled: /dev/fd, /proc/self/fd,
  // /proc/thread-self/fd, /proc/PID/fd (realpath resolves the first three to the last two).
  std::array<char, PATH_MAX> buf{};
  const std::string dir(path.substr(0, slash));
  if (::realpath(dir.empty() ? "/" : dir.c_str(), buf.data()) == nullptr) return std::nullopt;
  const std::string real(buf.data());
  const std::string mine = fmt::format("/proc/{}/", ::getpid());
  const bool own = real == mine + "fd" ||
                   (real.rfind(mine + "task/", 0) == 0 && real.size() > 3 && real.substr(real.size() - 3) == "/fd");
  if (!own) return std::nullopt;
  int fd = 0;
  std::from_chars(name.data(), name.data() + name.size(), fd);
  return fd;
}

bool names_open_descriptor(std::string_view path) {
  return descriptor_of(path).has_value();
}

namespace {

// The descriptors the process was started with that a user can have opened for output (a file,
// a pipe, a terminal: not a socket, which is how launchers talk to their ranks); unset until
// remember_inherited_descriptors() runs (tests: every descriptor is accepted).
std::optional<std::set<int>>& inherited_descriptors() {
  static std::optional<std::set<int>> fds;
  return fds;
}

}  // namespace

void remember_inherited_descriptors() {
  std::set<int> fds;
  for (int fd = 0; fd < 1024; ++fd) {
    struct stat st {};
    if (::fstat(fd, &st) == 0 && !S_ISSOCK(st.st_mode)) fds.insert(fd);
  }
  inherited_descriptors() = std::move(fds);
}

int duplicate_for_writing(std::string_view path, std::string_view what) {
  const auto fd = descriptor_of(path);
  const std::string shown = fmt::format("'{}'", path);
  const std::string named = what.empty() ? shown : fmt::format("{} {}", what, shown);
  if (fd == 0) throw InputError(fmt::format("cannot write {}: descriptor 0 is standard input, not an output", named));
  const auto& inherited = inherited_descriptors();
  if (fd && *fd > 2 && inherited && inherited->count(*fd) == 0) {
    throw InputError(fmt::format(
        "cannot write {}: descriptor {} was not given to collbench for output (open it in the shell, e.g. {}>>log)",
        named, *fd, *fd));
  }
  const int flags = fd ? ::fcntl(*fd, F_GETFL) : -1;
  if (flags < 0) throw InputError(fmt::format("cannot write {}: descriptor {} is not open", named, fd.value_or(-1)));
  if ((flags & O_ACCMODE) == O_RDONLY)
    throw InputError(fmt::format("cannot write {}: descriptor {} is open for reading only", named, *fd));
  const int dup = ::fcntl(*fd, F_DUPFD_CLOEXEC, 3);
  if (dup < 0) throw InputError(fmt::format("cannot write {}: {}", named, std::strerror(errno)));
  return dup;
}

std::string output_target(const std::string& path) {
  std::string p = path;
  for (int hops = 0; hops < 40; ++hops) {  // 40: Linux's own limit (ELOOP)
    struct stat st {};
    if (names_open_descriptor(p) || ::lstat(p.c_str(), &st) != 0 || !S_ISLNK(st.st_mode)) return p;
    std::vector<char> buf(4096);
    const ssize_t n = ::readlink(p.c_str(), buf.data(), buf.size());
    if (n <= 0 || static_cast<std::size_t>(n) >= buf.size()) return p;
    std::string link(buf.data(), static_cast<std::size_t>(n));
    p = link.front() == '/' ? link : parent_of(p) + link;
  }
  throw InputError(fmt::format("cannot write '{}': {}", path, std::strerror(ELOOP)));
}

void write_file_checked(const std::string& path, std::string_view text, std::string_view what) {
  if (path.empty())
    throw InputError(fmt::format("{}: an empty path; give a file name", what.empty() ? "output" : what));
  const std::string target = output_target(path);
  if (names_open_descriptor(target)) {
    write_in_place(path, target, text, what);
    return;
  }
  struct stat st {};
  if (::stat(target.c_str(), &st) != 0) {
    if (errno != ENOENT)
      throw InputError(fmt::format("cannot write {}: {}", prefixed(what, path), std::strerror(errno)));
    write_by_rename(path, target, nullptr, text, what);
  } else if (S_ISDIR(st.st_mode)) {
    throw InputError(fmt::format("cannot write {}: {}", prefixed(what, path), std::strerror(EISDIR)));
  } else if (S_ISREG(st.st_mode)) {
    write_by_rename(path, target, &st, text, what);
  } else {
    write_in_place(path, target, text, what);
  }
}

void write_file_atomic_checked(const std::string& path, std::string_view text, std::string_view what) {
  write_file_checked(path, text, what);
}
std::string stdout_name() {
  std::array<char, 4096> buf{};
  const ssize_t n = ::readlink("/proc/self/fd/1", buf.data(), buf.size() - 1);
  if (n <= 0) return "standard output";
  return fmt::format("standard output ({})", std::string_view(buf.data(), static_cast<std::size_t>(n)));
}

void write_stdout(std::string_view text) {
  errno = 0;
  const bool ok = std::fwrite(text.data(), 1, text.size(), stdout) == text.size() && std::fflush(stdout) == 0;
  if (!ok || std::ferror(stdout) != 0) {
    throw OutputError(fmt::format("writing {} failed: {}", stdout_name(),
                                  errno != 0 ? std::strerror(errno) : "an earlier write failed"));
  }
}

void check_stdout() {
  errno = 0;
  const bool flushed = std::fflush(stdout) == 0;
  if (!flushed || std::ferror(stdout) != 0) {
    throw OutputError(fmt::format("writing {} failed: {}", stdout_name(),
                                  errno != 0 ? std::strerror(errno) : "an earlier write failed"));
  }
}

}  // namespace collbench
