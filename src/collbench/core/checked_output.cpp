// Checked output: see checked_output.hpp.
#include "collbench/core/checked_output.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <cstdio>
#include <cstring>

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

}  // namespace

void write_file_checked(const std::string& path, std::string_view text, std::string_view what) {
  if (path.empty())
    throw InputError(fmt::format("{}: an empty path; give a file name", what.empty() ? "output" : what));
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) throw InputError(fmt::format("cannot write {}: {}", prefixed(what, path), std::strerror(errno)));
  const int err = write_all(fd, text);
  const int close_err = ::close(fd) != 0 ? errno : 0;
  if (err != 0 || close_err != 0) {
    throw OutputError(
        fmt::format("writing {} failed: {}", prefixed(what, path), std::strerror(err != 0 ? err : close_err)));
  }
}

void write_file_atomic_checked(const std::string& path, std::string_view text, std::string_view what) {
  if (path.empty())
    throw InputError(fmt::format("{}: an empty path; give a file name", what.empty() ? "output" : what));
  const std::string tmp = path + ".tmp";
  try {
    write_file_checked(tmp, text, what);
  } catch (const OutputError&) {
    ::unlink(tmp.c_str());
    throw;
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    const int err = errno;
    ::unlink(tmp.c_str());
    throw InputError(fmt::format("cannot write {}: {}", prefixed(what, path), std::strerror(err)));
  }
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
