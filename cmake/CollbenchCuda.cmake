# Detects the CUDA toolkit and NCCL. COLLBENCH_WITH_CUDA defaults to ON when both are found.
# The GPU parts never link libcuda directly: driver-API calls go through
# cudaGetDriverEntryPoint; the CUDA runtime is linked statically; NCCL and cuBLAS are opened with
# dlopen when first used. So the binary starts on machines without a driver or NVIDIA's libraries.
include(CheckLanguage)

# cb-multimem (multimem_kernels.cu) is written on NCCL's device API: nccl_device.h, from NCCL 2.28,
# compiled by nvcc (clang cannot: NCCL's device headers test `#if __CUDACC__`, which clang defines
# empty). Without it the build leaves those kernels out and every cb-multimem case is waived with
# COLLBENCH_NCCL_DEVICE_API_REASON (nvls_host.hpp, in_switch_waiver).
function(collbench_nccl_device_api)
  set(reason "")
  if(NOT EXISTS "${NCCL_INCLUDE_DIR}/nccl_device.h")
    set(reason "built against NCCL ${NCCL_VERSION_STRING} headers, which have no nccl_device.h (the device API needs NCCL >= 2.28)")
  elseif(NOT CMAKE_CUDA_COMPILER_ID STREQUAL "NVIDIA")
    set(reason "compiled by ${CMAKE_CUDA_COMPILER_ID} ${CMAKE_CUDA_COMPILER_VERSION} (NCCL's device headers need nvcc)")
  endif()
  if(reason STREQUAL "")
    set(COLLBENCH_NCCL_DEVICE_API ON PARENT_SCOPE)
  else()
    set(COLLBENCH_NCCL_DEVICE_API OFF PARENT_SCOPE)
  endif()
  set(COLLBENCH_NCCL_DEVICE_API_REASON "${reason}" PARENT_SCOPE)
endfunction()
if(NOT DEFINED CMAKE_CUDA_COMPILER AND EXISTS /usr/local/cuda/bin/nvcc)
  set(CMAKE_CUDA_COMPILER /usr/local/cuda/bin/nvcc CACHE FILEPATH "nvcc")
endif()
check_language(CUDA)
set(_cb_cuda_found OFF)
if(CMAKE_CUDA_COMPILER)
  find_path(NCCL_INCLUDE_DIR nccl.h HINTS ${CUDAToolkit_ROOT} /usr/local/cuda ENV NCCL_HOME
    PATH_SUFFIXES include)
  find_library(NCCL_LIBRARY nccl HINTS ${CUDAToolkit_ROOT} /usr/local/cuda ENV NCCL_HOME PATH_SUFFIXES lib64 lib)
  if(NCCL_INCLUDE_DIR AND NCCL_LIBRARY)
    set(_cb_cuda_found ON)
  endif()
endif()
option(COLLBENCH_WITH_CUDA "Build the NCCL GPU backend (needs the CUDA toolkit and NCCL)" ${_cb_cuda_found})
set(COLLBENCH_REQUIRE_CUDA OFF CACHE BOOL "Fail configuration when the GPU backend cannot be built")

if(COLLBENCH_WITH_CUDA)
  if(NOT _cb_cuda_found)
    message(FATAL_ERROR "COLLBENCH_WITH_CUDA=ON but the CUDA toolkit or NCCL was not found")
  endif()
  if(NOT DEFINED CMAKE_CUDA_ARCHITECTURES)
    set(CMAKE_CUDA_ARCHITECTURES 90 100 103)
  endif()
  enable_language(CUDA)
  set(CMAKE_CUDA_STANDARD 17)  # CMake 3.25 has no C++20 flag for nvcc
  set(CMAKE_CUDA_STANDARD_REQUIRED ON)
  find_package(CUDAToolkit REQUIRED)
  # clang as the CUDA compiler (the cuda12 preset, scripts/cuda12-toolkit): it warns that CUDA 12.9
  # is newer than the CUDA it knows, which is expected.
  add_compile_options($<$<COMPILE_LANG_AND_ID:CUDA,Clang>:-Wno-unknown-cuda-version>)
  file(STRINGS "${NCCL_INCLUDE_DIR}/nccl.h" _nccl_ver REGEX "^#define NCCL_(MAJOR|MINOR|PATCH) ")
  string(REGEX REPLACE ".*NCCL_MAJOR ([0-9]+).*NCCL_MINOR ([0-9]+).*NCCL_PATCH ([0-9]+).*" "\\1.\\2.\\3"
    NCCL_VERSION_STRING "${_nccl_ver}")
  # NCCL's headers only: the backend opens libnccl with dlopen (nccl_api.hpp), so nothing links it
  # and the binary starts on machines without it. collbench::nccl (the library itself) is for
  # programs that call NCCL directly.
  collbench_nccl_device_api()
  add_library(collbench::nccl_headers INTERFACE IMPORTED)
  set_target_properties(collbench::nccl_headers PROPERTIES INTERFACE_INCLUDE_DIRECTORIES "${NCCL_INCLUDE_DIR}")
  add_library(collbench::nccl UNKNOWN IMPORTED)
  set_target_properties(collbench::nccl PROPERTIES IMPORTED_LOCATION "${NCCL_LIBRARY}"
    INTERFACE_INCLUDE_DIRECTORIES "${NCCL_INCLUDE_DIR}")
  set(COLLBENCH_BACKENDS "mpi nccl")
  message(STATUS "collbench backends: mpi, nccl (CUDA ${CUDAToolkit_VERSION}, NCCL ${NCCL_VERSION_STRING}, "
    "archs ${CMAKE_CUDA_ARCHITECTURES}, CUDA compiler ${CMAKE_CUDA_COMPILER_ID} ${CMAKE_CUDA_COMPILER_VERSION})")
  if(NOT COLLBENCH_NCCL_DEVICE_API)
    message(STATUS "collbench: cb-multimem left out: ${COLLBENCH_NCCL_DEVICE_API_REASON}")
  endif()
else()
  if(COLLBENCH_REQUIRE_CUDA)
    message(FATAL_ERROR "COLLBENCH_REQUIRE_CUDA=ON but the GPU backend is disabled or CUDA/NCCL were not found")
  endif()
  set(COLLBENCH_BACKENDS "mpi")
  message(STATUS "collbench backends: mpi only (CUDA toolkit or NCCL not found, or COLLBENCH_WITH_CUDA=OFF)")
endif()
