# Which MPI to build against, and the mpiexec that matches it (docs/install.md, "Choosing the MPI").
#
#   -DCOLLBENCH_MPI=auto      (default) the MPI of the `mpicxx` found first: a loaded module (HPC-X,
#                             Cray, Intel MPI) wins; on Debian/Ubuntu the alternatives' choice, made
#                             explicit (mpicxx.mpich or mpicxx.openmpi plus the matching mpiexec)
#   -DCOLLBENCH_MPI=mpich     Debian's MPICH: mpicxx.mpich + mpiexec.mpich, whatever the alternatives say
#   -DCOLLBENCH_MPI=openmpi   Debian's Open MPI: mpicxx.openmpi + mpiexec.openmpi (what HPC-X is built on)
#
# Why: Debian installs both MPIs side by side and points /usr/bin/mpicxx and /usr/bin/mpiexec at
# one of them through update-alternatives; installing libopenmpi-dev flips them to Open MPI (it has
# the higher priority). A binary built against one MPI and started by the other's mpiexec runs as N
# singletons, so the compiler wrapper and mpiexec are always chosen as a pair.
#
# Sets COLLBENCH_MPI_FLAVOR (mpich, openmpi or other), COLLBENCH_MPIEXEC_PREFLAGS (what the tests
# pass to mpiexec: Open MPI refuses to run as root and to start more ranks than cores without them).

set(COLLBENCH_MPI "auto" CACHE STRING "MPI to build against: auto, mpich or openmpi")
set_property(CACHE COLLBENCH_MPI PROPERTY STRINGS auto mpich openmpi)
if(NOT COLLBENCH_MPI MATCHES "^(auto|mpich|openmpi)$")
  message(FATAL_ERROR "COLLBENCH_MPI='${COLLBENCH_MPI}' is not one of: auto, mpich, openmpi")
endif()

# Debian names the wrappers and launchers of each MPI with a suffix.
set(_cb_mpi_suffix "")
if(COLLBENCH_MPI STREQUAL "auto")
  find_program(_cb_mpicxx NAMES mpicxx mpic++ mpiCC NO_CACHE)
  if(_cb_mpicxx)
    file(REAL_PATH "${_cb_mpicxx}" _cb_mpicxx_real)
    if(_cb_mpicxx_real MATCHES "\\.(mpich|openmpi)$")
      set(_cb_mpi_suffix "${CMAKE_MATCH_1}")
    endif()
  endif()
else()
  set(_cb_mpi_suffix "${COLLBENCH_MPI}")
endif()

if(_cb_mpi_suffix)
  # Forget what an earlier configure found for a different MPI (switching in one build folder).
  if(DEFINED CACHE{_COLLBENCH_MPI_RESOLVED} AND NOT _COLLBENCH_MPI_RESOLVED STREQUAL _cb_mpi_suffix)
    get_cmake_property(_cb_cache_vars CACHE_VARIABLES)
    foreach(v IN LISTS _cb_cache_vars)
      if(v MATCHES "^MPI_|^MPIEXEC_|^COLLBENCH_MPI_IS_")
        unset(${v} CACHE)
      endif()
    endforeach()
  endif()
  set(_COLLBENCH_MPI_RESOLVED "${_cb_mpi_suffix}" CACHE INTERNAL "")
  if(_cb_mpi_suffix STREQUAL "mpich")
    set(_cb_cxx_names mpicxx.mpich)
    set(_cb_exec_names mpiexec.mpich mpiexec.hydra)
  else()
    set(_cb_cxx_names mpicxx.openmpi mpic++.openmpi)
    set(_cb_exec_names mpiexec.openmpi mpirun.openmpi)
  endif()
  find_program(_cb_cxx NAMES ${_cb_cxx_names} NO_CACHE)
  find_program(_cb_exec NAMES ${_cb_exec_names} NO_CACHE)
  if(NOT _cb_cxx OR NOT _cb_exec)
    if(COLLBENCH_MPI STREQUAL "mpich")
      set(_cb_pkg "mpich libmpich-dev")
    else()
      set(_cb_pkg "openmpi-bin libopenmpi-dev")
    endif()
    message(FATAL_ERROR "COLLBENCH_MPI=${_cb_mpi_suffix}: ${_cb_cxx_names} / ${_cb_exec_names} not found "
                        "(Debian: apt-get install ${_cb_pkg}; or pass -DCOLLBENCH_MPI=auto with your MPI's mpicxx on PATH)")
  endif()
  set(MPI_CXX_COMPILER "${_cb_cxx}" CACHE FILEPATH "MPI C++ compiler wrapper" FORCE)
  set(MPIEXEC_EXECUTABLE "${_cb_exec}" CACHE FILEPATH "mpiexec matching MPI_CXX_COMPILER" FORCE)
endif()

find_package(MPI REQUIRED COMPONENTS CXX)

# The flavour, from the header actually used (a module's mpicxx names no flavour).
include(CheckCXXSourceCompiles)
set(CMAKE_REQUIRED_LIBRARIES MPI::MPI_CXX)
check_cxx_source_compiles("#include <mpi.h>\n#ifndef OPEN_MPI\n#error no\n#endif\nint main(){return 0;}"
                          COLLBENCH_MPI_IS_OPENMPI)
check_cxx_source_compiles("#include <mpi.h>\n#ifndef MPICH_VERSION\n#error no\n#endif\nint main(){return 0;}"
                          COLLBENCH_MPI_IS_MPICH)
unset(CMAKE_REQUIRED_LIBRARIES)
if(COLLBENCH_MPI_IS_OPENMPI)
  set(COLLBENCH_MPI_FLAVOR "openmpi")
elseif(COLLBENCH_MPI_IS_MPICH)
  set(COLLBENCH_MPI_FLAVOR "mpich")
else()
  set(COLLBENCH_MPI_FLAVOR "other")
endif()
if(_cb_mpi_suffix AND NOT _cb_mpi_suffix STREQUAL COLLBENCH_MPI_FLAVOR)
  message(FATAL_ERROR "COLLBENCH_MPI=${_cb_mpi_suffix} but ${MPI_CXX_COMPILER} compiles against a ${COLLBENCH_MPI_FLAVOR} "
                      "mpi.h; clear the MPI_* entries of this build folder's CMakeCache.txt and configure again")
endif()

# Flags the tests put after `mpiexec -n N`. Open MPI (and HPC-X) refuse to start as root without
# --allow-run-as-root, and refuse more ranks than cores without --oversubscribe (the 4-rank tests
# on a 2-core CI machine).
set(_cb_preflags "")
if(COLLBENCH_MPI_FLAVOR STREQUAL "openmpi")
  list(APPEND _cb_preflags --oversubscribe)
  execute_process(COMMAND id -u OUTPUT_VARIABLE _cb_uid OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET)
  if(_cb_uid STREQUAL "0")
    list(APPEND _cb_preflags --allow-run-as-root)
  endif()
endif()
if(NOT DEFINED COLLBENCH_MPIEXEC_PREFLAGS)  # -DCOLLBENCH_MPIEXEC_PREFLAGS=... overrides
  set(COLLBENCH_MPIEXEC_PREFLAGS "${_cb_preflags}")
endif()
message(STATUS "collbench: MPI ${COLLBENCH_MPI_FLAVOR} (${MPI_CXX_COMPILER}), tests run ${MPIEXEC_EXECUTABLE} ${COLLBENCH_MPIEXEC_PREFLAGS}")
