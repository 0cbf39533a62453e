// MPI datatypes and reduction ops for collbench dtypes. The 16- and 8-bit float formats have
// no MPI type, so they travel as distinct duplicates of MPI_UINT16_T / MPI_UINT8_T and reduce
// through user-defined ops that decode, combine and re-encode (exact for the small integers
// verification uses).
#pragma once

#include <mpi.h>

#include "collbench/core/dtype.hpp"
#include "collbench/core/redop.hpp"

namespace collbench::backend {

MPI_Datatype mpi_datatype(Dtype dtype);
MPI_Op mpi_op(Redop redop, Dtype dtype);

// Frees the derived types and user ops (call before MPI_Finalize; safe if never created).
void free_mpi_types();

}  // namespace collbench::backend
