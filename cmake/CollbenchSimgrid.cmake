# Simulation build (docs/simulation.md): the same sources compiled with SimGrid's SMPI compiler
# wrapper (smpicxx), so that `smpirun` runs collbench at hundreds to thousands of simulated ranks
# on a simulated platform. Configure it in its own build folder (scripts/simulate does):
#
#   cmake -S . -B build-sim -G Ninja -DCOLLBENCH_SIMGRID=ON
#
# What this changes, explicitly (and nothing else):
#   - the C++ compiler is smpicxx (set before project(); Debian package libsimgrid-dev);
#   - MPI is SMPI's: no find_package(MPI), MPI::MPI_CXX is an empty target (smpicxx adds SMPI's
#     headers and links libsimgrid itself), mpiexec is smpirun;
#   - CUDA/NCCL, tests, micro-benchmarks and the man page/completion step are off (an SMPI program
#     is a shared object that only smpirun can start, so the build cannot run it);
#   - smpicxx force-includes smpi_helpers.h, which turns exit(), malloc() and friends into macros;
#     src/collbench/core/smpi_compat.h, force-included after it, takes back exit (CLI11 has a
#     member function of that name) and leaves the rest: sleeps and clocks become simulated;
#   - COLLBENCH_SIMGRID=1 is defined for the one file that adapts to SMPI
#     (src/collbench/backend/mpi/simulation.cpp).
option(COLLBENCH_SIMGRID "Simulation build: compile with SimGrid's smpicxx (run with smpirun)" OFF)

if(COLLBENCH_SIMGRID AND NOT CMAKE_CXX_COMPILER)
  find_program(COLLBENCH_SMPICXX smpicxx)
  if(NOT COLLBENCH_SMPICXX)
    message(FATAL_ERROR "COLLBENCH_SIMGRID=ON needs SimGrid's smpicxx (Debian: apt-get install libsimgrid-dev simgrid)")
  endif()
  set(CMAKE_CXX_COMPILER "${COLLBENCH_SMPICXX}")
endif()

# Called after project(): everything that needs the compiler known.
macro(collbench_simgrid_setup)
  if(COLLBENCH_SIMGRID)
    if(NOT CMAKE_CXX_COMPILER MATCHES "smpicxx$")
      message(FATAL_ERROR "COLLBENCH_SIMGRID=ON but the C++ compiler is ${CMAKE_CXX_COMPILER}: configure a fresh "
                          "build folder (the compiler is chosen on the first configure)")
    endif()
    find_program(COLLBENCH_SMPIRUN smpirun REQUIRED)
    set(COLLBENCH_WITH_CUDA OFF CACHE BOOL "" FORCE)
    set(COLLBENCH_BUILD_TESTS OFF CACHE BOOL "" FORCE)
    set(COLLBENCH_BUILD_BENCH OFF CACHE BOOL "" FORCE)
    set(COLLBENCH_FUZZ OFF CACHE BOOL "" FORCE)
    add_library(MPI::MPI_CXX INTERFACE IMPORTED)
    set(MPI_CXX_COMPILER "${CMAKE_CXX_COMPILER}")
    set(MPIEXEC_EXECUTABLE "${COLLBENCH_SMPIRUN}")
    set(COLLBENCH_MPI_FLAVOR "smpi")
    set(COLLBENCH_MPIEXEC_PREFLAGS "")
    add_compile_options(-include ${PROJECT_SOURCE_DIR}/src/collbench/core/smpi_compat.h)
    add_compile_definitions(COLLBENCH_SIMGRID=1)
    message(STATUS "collbench: simulation build (SimGrid SMPI, ${CMAKE_CXX_COMPILER}); run it with scripts/simulate")
  endif()
endmacro()
