// GPU compute load `stream`: a memory-bound copy of `bytes` device memory on its own stream,
// `repeat` times per start() (gpu_load_kernels.cu). The copy is checked against its source.
// Needs a GPU to run.
#include <vector>

#include "collbench/backend/nccl/gpu_load_kernels.hpp"
#include "collbench/backend/nccl/gpu_loads.hpp"
#include "collbench/backend/nccl/nccl_check.hpp"
#include "collbench/backend/nccl/nccl_resources.hpp"

namespace collbench::backend::nccl {
namespace {

class GpuStream final : public overlap::ComputeLoad {
 public:
  explicit GpuStream(const overlap::ComputeSpec& spec)
      : bytes_(static_cast<std::size_t>(spec.bytes)), repeat_(spec.repeat) {
    src_.reserve(bytes_);
    dst_.reserve(bytes_);
    std::vector<unsigned char> host(bytes_);
    for (std::size_t i = 0; i < bytes_; ++i) host[i] = static_cast<unsigned char>(i * 131u + 7u);
    CB_CHECK_CUDA(cudaMemcpyAsync(src_.get(), host.data(), bytes_, cudaMemcpyHostToDevice, stream_.get()));
    CB_CHECK_CUDA(cudaMemsetAsync(dst_.get(), 0, bytes_, stream_.get()));
    CB_CHECK_CUDA(cudaStreamSynchronize(stream_.get()));
  }
  void start() override { launch_stream_copy(dst_.get(), src_.get(), bytes_, repeat_, stream_.get()); }
  void wait() override { CB_CHECK_CUDA(cudaStreamSynchronize(stream_.get())); }
  [[nodiscard]] std::string device() const override { return "gpu"; }
  [[nodiscard]] std::uint64_t check() override {
    std::vector<unsigned char> host(bytes_);
    CB_CHECK_CUDA(cudaMemcpyAsync(host.data(), dst_.get(), bytes_, cudaMemcpyDeviceToHost, stream_.get()));
    CB_CHECK_CUDA(cudaStreamSynchronize(stream_.get()));
    std::uint64_t wrong = 0;
    for (std::size_t i = 0; i < bytes_; ++i) wrong += host[i] != static_cast<unsigned char>(i * 131u + 7u) ? 1 : 0;
    return wrong;
  }

 private:
  std::size_t bytes_;
  int repeat_;
  CudaStream stream_;
  DeviceMemory src_, dst_;
};

}  // namespace

std::unique_ptr<overlap::ComputeLoad> make_gpu_stream(const overlap::ComputeSpec& spec) {
  return std::make_unique<GpuStream>(spec);
}

}  // namespace collbench::backend::nccl
