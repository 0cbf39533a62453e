// What a backend is built with (--progress, --buffers, --algo): shared by the registry
// (registry.hpp) and the backends themselves, which sit below it.
#pragma once

#include <memory>
#include <string>

#include "collbench/backend/comm_tally.hpp"

namespace collbench::backend {

enum class Progress { spin, yield };

struct BackendOptions {
  Progress progress = Progress::spin;
  std::string buffers = "host";  // host (mpi); plain | registered | symmetric (nccl)
  std::string algo = "auto";
  // Counts the backend's communicators (comm_tally.hpp); null: not counted.
  std::shared_ptr<CommTally> tally;
};

}  // namespace collbench::backend
