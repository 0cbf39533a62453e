// GPU compute load `sleep`: one block of 32 threads spins on %globaltimer for `time` on its own
// stream: it takes (almost) no SM time or memory bandwidth from the collective, the GPU
// counterpart of the CPU control case. Needs a GPU to run.
#include <cstdint>

#include "collbench/backend/nccl/gpu_load_kernels.hpp"
#include "collbench/backend/nccl/gpu_loads.hpp"
#include "collbench/backend/nccl/nccl_check.hpp"
#include "collbench/backend/nccl/nccl_resources.hpp"

namespace collbench::backend::nccl {
namespace {

class GpuSleep final : public overlap::ComputeLoad {
 public:
  explicit GpuSleep(const overlap::ComputeSpec& spec) : ns_(static_cast<std::uint64_t>(spec.sleep_us * 1e3)) {}
  void start() override { launch_spin(ns_, stream_.get()); }
  void wait() override { CB_CHECK_CUDA(cudaStreamSynchronize(stream_.get())); }
  [[nodiscard]] std::string device() const override { return "gpu"; }
  [[nodiscard]] std::uint64_t check() override { return 0; }

 private:
  std::uint64_t ns_;
  CudaStream stream_;
};

}  // namespace

std::unique_ptr<overlap::ComputeLoad> make_gpu_sleep(const overlap::ComputeSpec& spec) {
  return std::make_unique<GpuSleep>(spec);
}

}  // namespace collbench::backend::nccl
