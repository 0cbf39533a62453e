// Facts about one GPU for the run header (docs/interfaces.md section 3, `hosts`): name, UUID, PCI bus
// id, compute capability, clocks, multicast (NVLink SHARP) support and the NVLink fabric clique
// (used for domain detection, docs/interfaces.md section 2). CUDA runtime for the basics; the driver
// API only through cudaGetDriverEntryPointByVersion and NVML only through dlopen, so nothing
// here links libcuda or libnvidia-ml and every optional fact is simply absent when unavailable.
#pragma once

#include <map>
#include <string>

namespace collbench::backend::nccl {

// key -> value, e.g. gpu_name, gpu_uuid ("GPU-xxxxxxxx-xxxx-..."), pci_bus_id
// ("0000:19:00.0"), compute_capability ("9.0"), sm_clock_mhz, mem_clock_mhz, num_sms,
// memory_bytes, multicast_supported ("1"/"0"), fabric_cluster_uuid, fabric_clique_id,
// fabric_state. Throws RuntimeFailure when the runtime cannot describe the device at all.
std::map<std::string, std::string> query_gpu_info(int device);

// "GPU-" + the 16 bytes in the 8-4-4-4-12 hex groups nvidia-smi prints.
std::string format_gpu_uuid(const unsigned char (&bytes)[16]);

}  // namespace collbench::backend::nccl
