// Default implementations of the backend interfaces.
#include "collbench/backend/backend.hpp"

#include <cstring>

namespace collbench::backend {

void Comm::local_copy(void* dst, const void* src, std::size_t bytes) {
  if (bytes > 0 && dst != src) std::memcpy(dst, src, bytes);
}

}  // namespace collbench::backend
