// Default implementations of the backend interfaces.
#include "collbench/backend/backend.hpp"

#include <fmt/format.h>

#include <cstring>

#include "collbench/core/error.hpp"

namespace collbench::backend {

void Comm::local_copy(void* dst, const void* src, std::size_t bytes) {
  if (bytes > 0 && dst != src) std::memcpy(dst, src, bytes);
}

void Comm::local_copy_rows(void* dst, std::size_t dst_pitch, const void* src, std::size_t src_pitch, std::size_t width,
                           std::size_t rows) {
  for (std::size_t r = 0; r < rows; ++r) {
    local_copy(static_cast<char*>(dst) + r * dst_pitch, static_cast<const char*>(src) + r * src_pitch, width);
  }
}

std::optional<std::string> Comm::group_waiver() const {
  return std::string(
      "this backend cannot issue operations on several communicators at once (no group_start/group_end)");
}

void Comm::group_start() {
  throw InputError(group_waiver().value_or("this communicator cannot group operations"));
}

void Comm::group_end() {
  throw InputError(group_waiver().value_or("this communicator cannot group operations"));
}

std::unique_ptr<Replay> Backend::capture(const std::function<void()>& /*issue*/) {
  throw InputError(fmt::format("--graph/-G: the {} backend cannot capture operations to replay", name()));
}

}  // namespace collbench::backend
