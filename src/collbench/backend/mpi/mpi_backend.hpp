// The MPI backend: host buffers, MPI-3 collectives. With Progress::yield every call is the
// non-blocking variant polled with MPI_Test + sched_yield, so oversubscribed ranks (more
// ranks than cores) give their core away instead of busy-polling (docs/interfaces.md section 7).
#pragma once

#include <mpi.h>

#include <memory>

#include "collbench/backend/backend.hpp"
#include "collbench/backend/options.hpp"

namespace collbench::backend {

// Owns a communicator (freed on destruction unless it is MPI_COMM_WORLD/SELF).
class MpiCommHandle {
 public:
  MpiCommHandle() = default;
  explicit MpiCommHandle(MPI_Comm comm) : comm_(comm) {}
  MpiCommHandle(const MpiCommHandle&) = delete;
  MpiCommHandle& operator=(const MpiCommHandle&) = delete;
  MpiCommHandle(MpiCommHandle&& other) noexcept : comm_(other.release()) {}
  MpiCommHandle& operator=(MpiCommHandle&& other) noexcept;
  ~MpiCommHandle();
  [[nodiscard]] MPI_Comm get() const { return comm_; }
  MPI_Comm release();

 private:
  MPI_Comm comm_ = MPI_COMM_NULL;
};

// Waits for a request: MPI_Wait (spin) or MPI_Test + sched_yield (yield).
void mpi_wait(MPI_Request& request, Progress progress);

std::unique_ptr<Backend> make_mpi_backend(const BackendOptions& options);

// The MPI library's version string (MPI_Get_library_version, first line).
std::string mpi_library_version();

}  // namespace collbench::backend
