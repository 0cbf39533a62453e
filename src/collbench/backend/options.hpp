// What a backend is built with (--progress, --buffers, --algo): shared by the registry
// (registry.hpp) and the backends themselves, which sit below it.
#pragma once

#include <string>

namespace collbench::backend {

enum class Progress { spin, yield };

struct BackendOptions {
  Progress progress = Progress::spin;
  std::string buffers = "host";  // host (mpi); plain | registered | symmetric (nccl)
  std::string algo = "auto";
};

}  // namespace collbench::backend
