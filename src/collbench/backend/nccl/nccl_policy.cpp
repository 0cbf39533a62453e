// The NCCL backend's policy: device buffers by default (symmetric for the algorithms that need
// them), the --algo values NCCL implements per collective, the machine's capability for
// in-switch algorithms, and the in-switch accounting of a measured record.
#include "collbench/backend/nccl/nccl_policy.hpp"

#include "collbench/backend/nccl/device_memory.hpp"
#include "collbench/backend/nccl/nccl_backend.hpp"
#include "collbench/backend/nccl/nccl_host.hpp"
#include "collbench/backend/nccl/nvls_host.hpp"

namespace collbench::backend::nccl {
namespace {

class NcclPolicy final : public BackendPolicy {
 public:
  std::string default_buffers(std::string_view algo) const override { return default_nccl_buffers(algo); }
  bool replays_graphs() const override { return true; }
  bool separates_concurrent_levels() const override { return true; }
  std::optional<std::string> algo_waiver(std::string_view algo, std::string_view collective,
                                         int /*graph*/) const override {
    return nccl_algo_waiver(algo, collective);
  }
  std::optional<std::string> capability_waiver(Backend& backend, Comm& comm, std::string_view collective, Dtype dtype,
                                               Redop redop) const override {
    return nccl::capability_waiver(backend, comm, collective, dtype, redop);
  }
  std::optional<DeviceMemory> device_memory(int local_rank, int ranks_on_host) const override {
    return query_device_memory(local_rank, ranks_on_host);
  }
  // In-switch algorithms (nvls, nvlstree, cb-multimem): accumulation type, modelled wire bytes
  // per GPU and the busbw note (nvls_host.hpp; docs/results-format.md).
  RecordNotes record_notes(std::string_view algo, std::string_view collective, Dtype dtype, double bytes,
                           int comm_ranks) const override {
    const auto a = in_switch_accounting(algo, collective, dtype, bytes, comm_ranks);
    RecordNotes notes;
    if (a.accumulation_dtype) notes.emplace_back("accumulation_dtype", *a.accumulation_dtype);
    if (a.wire_bytes_per_gpu) notes.emplace_back("wire_bytes_per_gpu", *a.wire_bytes_per_gpu);
    if (a.busbw_note) notes.emplace_back("busbw_note", *a.busbw_note);
    return notes;
  }
};

}  // namespace

const BackendPolicy& nccl_policy() {
  static const NcclPolicy kPolicy;
  return kPolicy;
}

}  // namespace collbench::backend::nccl
