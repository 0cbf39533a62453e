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
  // NCCL: the world communicator is created with splitShare, so that its splits share its
  // internal resources. Off for a set whose family runs operations on two splits at once
  // (ep-dp-concurrent, BackendPolicy::separates_concurrent_levels): with shared resources NCCL
  // orders every kernel of the family behind one internal stream (enqueue.cc, the shared
  // deviceStream), so the "concurrent" parts would run one after the other.
  bool share_split_resources = true;
  // Counts the backend's communicators (comm_tally.hpp); null: not counted.
  std::shared_ptr<CommTally> tally;
};

}  // namespace collbench::backend
