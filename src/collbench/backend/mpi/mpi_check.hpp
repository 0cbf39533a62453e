// CB_CHECK_MPI: turns a failing MPI call into an exception carrying file, line, the call's
// text and MPI's own error string.
#pragma once

#include <mpi.h>

#include <string>

#include "collbench/core/error.hpp"

namespace collbench::backend {

[[noreturn]] void throw_mpi_error(int code, const char* call, const char* file, int line);

}  // namespace collbench::backend

#define CB_CHECK_MPI(call)                                                                                       \
  do {                                                                                                           \
    const int cb_mpi_rc_ = (call);                                                                               \
    if (cb_mpi_rc_ != MPI_SUCCESS) ::collbench::backend::throw_mpi_error(cb_mpi_rc_, #call, __FILE__, __LINE__); \
  } while (0)
