// GPU description: CUDA runtime, driver API by entry point, NVML by dlopen.
#include "collbench/backend/nccl/gpu_info.hpp"

#include <cuda.h>  // types and enum values only: libcuda is reached through the runtime's entry points
#include <cuda_runtime.h>
#include <dlfcn.h>
#include <fmt/format.h>

#include <array>
#include <cstring>
#include <optional>

#include "collbench/backend/nccl/nccl_check.hpp"

namespace collbench::backend::nccl {
namespace {

// Driver-API attribute through cudaGetDriverEntryPointByVersion (no link against libcuda).
std::optional<int> driver_attribute(int device, CUdevice_attribute attribute) {
  using GetFn = CUresult (*)(CUdevice*, int);
  using AttrFn = CUresult (*)(int*, CUdevice_attribute, CUdevice);
  void* get_ptr = nullptr;
  void* attr_ptr = nullptr;
  cudaDriverEntryPointQueryResult q1 = cudaDriverEntryPointSymbolNotFound;
  cudaDriverEntryPointQueryResult q2 = cudaDriverEntryPointSymbolNotFound;
  if (cudaGetDriverEntryPointByVersion("cuDeviceGet", &get_ptr, 12000, cudaEnableDefault, &q1) != cudaSuccess ||
      cudaGetDriverEntryPointByVersion("cuDeviceGetAttribute", &attr_ptr, 12000, cudaEnableDefault, &q2) !=
          cudaSuccess ||
      q1 != cudaDriverEntryPointSuccess || q2 != cudaDriverEntryPointSuccess || get_ptr == nullptr ||
      attr_ptr == nullptr) {
    (void)cudaGetLastError();
    return std::nullopt;
  }
  CUdevice dev = 0;
  if (reinterpret_cast<GetFn>(get_ptr)(&dev, device) != CUDA_SUCCESS) return std::nullopt;
  int value = 0;
  if (reinterpret_cast<AttrFn>(attr_ptr)(&value, attribute, dev) != CUDA_SUCCESS) return std::nullopt;
  return value;
}

// The NVML ABI pieces used here (nvml.h is not part of the toolkit install; these layouts are
// NVML's public, versioned ABI: nvmlGpuFabricInfo_t is the v1 struct of R530+).
using NvmlReturn = int;
struct NvmlDeviceOpaque;
using NvmlDevice = NvmlDeviceOpaque*;
struct NvmlGpuFabricInfo {
  unsigned char cluster_uuid[16];
  NvmlReturn status;
  unsigned int clique_id;
  unsigned char state;
};
constexpr unsigned char kFabricNotSupported = 0;
constexpr unsigned char kFabricCompleted = 3;

// NVLink fabric registration through NVML (multi-node NVLink: the clique is the NVL72 rack's
// NVLink partition). Absent keys when NVML or the call is unavailable.
void add_fabric_info(const std::string& pci_bus_id, std::map<std::string, std::string>& out) {
  void* lib = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
  if (lib == nullptr) return;
  using InitFn = NvmlReturn (*)();
  using ShutdownFn = NvmlReturn (*)();
  using ByBusFn = NvmlReturn (*)(const char*, NvmlDevice*);
  using FabricFn = NvmlReturn (*)(NvmlDevice, NvmlGpuFabricInfo*);
  auto init = reinterpret_cast<InitFn>(dlsym(lib, "nvmlInit_v2"));
  auto shutdown = reinterpret_cast<ShutdownFn>(dlsym(lib, "nvmlShutdown"));
  auto by_bus = reinterpret_cast<ByBusFn>(dlsym(lib, "nvmlDeviceGetHandleByPciBusId_v2"));
  auto fabric = reinterpret_cast<FabricFn>(dlsym(lib, "nvmlDeviceGetGpuFabricInfo"));
  if (init != nullptr && shutdown != nullptr && by_bus != nullptr && init() == 0) {
    NvmlDevice handle = nullptr;
    if (by_bus(pci_bus_id.c_str(), &handle) == 0) {
      out["nvml"] = std::string("1");  // a std::string: GCC 12 -O3 false -Wrestrict on = "literal"
      NvmlGpuFabricInfo info{};
      if (fabric != nullptr && fabric(handle, &info) == 0) {
        if (info.state == kFabricNotSupported) {
          out["fabric_state"] = std::string("not_supported");
        } else if (info.state != kFabricCompleted) {
          out["fabric_state"] = std::string("registering");
        } else if (info.status != 0) {
          out["fabric_state"] = fmt::format("error_{}", info.status);
        } else {
          out["fabric_state"] = std::string("completed");
          std::string uuid;
          for (unsigned char b : info.cluster_uuid) uuid += fmt::format("{:02x}", b);
          out["fabric_cluster_uuid"] = uuid;
          out["fabric_clique_id"] = std::to_string(info.clique_id);
        }
      }
    }
    shutdown();
  }
  dlclose(lib);
}

}  // namespace

std::string format_gpu_uuid(const unsigned char (&b)[16]) {
  return fmt::format(
      "GPU-{:02x}{:02x}{:02x}{:02x}-{:02x}{:02x}-{:02x}{:02x}-{:02x}{:02x}-{:02x}{:02x}{:02x}{:02x}{:02x}{:02x}", b[0],
      b[1], b[2], b[3], b[4], b[5], b[6], b[7], b[8], b[9], b[10], b[11], b[12], b[13], b[14], b[15]);
}

std::map<std::string, std::string> query_gpu_info(int device) {
  std::map<std::string, std::string> out;
  cudaDeviceProp prop{};
  CB_CHECK_CUDA(cudaGetDeviceProperties(&prop, device));
  out["device"] = std::to_string(device);
  out["gpu_name"] = std::string(prop.name, strnlen(prop.name, sizeof prop.name));
  unsigned char uuid[16];
  std::memcpy(uuid, prop.uuid.bytes, sizeof uuid);
  out["gpu_uuid"] = format_gpu_uuid(uuid);
  std::array<char, 32> bus{};
  if (cudaDeviceGetPCIBusId(bus.data(), static_cast<int>(bus.size()), device) == cudaSuccess) {
    out["pci_bus_id"] = std::string(bus.data(), strnlen(bus.data(), bus.size()));
  } else {
    (void)cudaGetLastError();
  }
  out["compute_capability"] = fmt::format("{}.{}", prop.major, prop.minor);
  out["num_sms"] = std::to_string(prop.multiProcessorCount);
  out["memory_bytes"] = std::to_string(prop.totalGlobalMem);
  int khz = 0;
  if (cudaDeviceGetAttribute(&khz, cudaDevAttrClockRate, device) == cudaSuccess) {
    out["sm_clock_mhz"] = std::to_string(khz / 1000);
  }
  if (cudaDeviceGetAttribute(&khz, cudaDevAttrMemoryClockRate, device) == cudaSuccess) {
    out["mem_clock_mhz"] = std::to_string(khz / 1000);
  }
  (void)cudaGetLastError();
  if (const auto mc = driver_attribute(device, CU_DEVICE_ATTRIBUTE_MULTICAST_SUPPORTED)) {
    out["multicast_supported"] = std::string(*mc != 0 ? "1" : "0");
  }
  if (const auto fh = driver_attribute(device, CU_DEVICE_ATTRIBUTE_HANDLE_TYPE_FABRIC_SUPPORTED)) {
    out["fabric_handle_supported"] = std::string(*fh != 0 ? "1" : "0");
  }
  if (const auto it = out.find("pci_bus_id"); it != out.end()) add_fabric_info(it->second, out);
  return out;
}

}  // namespace collbench::backend::nccl
