// GPU compute load `gemm`: C[m x n] (fp32) = A[m x k] B[k x n] (bf16) with cuBLAS
// (cublasGemmEx, CUBLAS_COMPUTE_32F: bf16 tensor cores, fp32 accumulate) on its own stream,
// `repeat` times per start(). A and B hold ones, so every element of C must equal k exactly
// (k <= 2^20 < 2^24). Column-major as cuBLAS: A is m x k with lda = m. Needs a GPU to run;
// cuBLAS is loaded on first use (cublas_api.hpp).
#include <fmt/format.h>

#include <vector>

#include "collbench/backend/nccl/cublas_api.hpp"
#include "collbench/backend/nccl/gpu_load_kernels.hpp"
#include "collbench/backend/nccl/gpu_loads.hpp"
#include "collbench/backend/nccl/nccl_check.hpp"
#include "collbench/backend/nccl/nccl_resources.hpp"

namespace collbench::backend::nccl {
namespace {

#define CB_CHECK_CUBLAS(call)                                                                  \
  do {                                                                                         \
    const cublasStatus_t cb_blas_rc_ = (call);                                                 \
    if (cb_blas_rc_ != CUBLAS_STATUS_SUCCESS) {                                                \
      mark_failure();                                                                          \
      throw RuntimeFailure(fmt::format("{}:{}: {} failed: {} ({})", __FILE__, __LINE__, #call, \
                                       blas().cublasGetStatusName(cb_blas_rc_),                \
                                       blas().cublasGetStatusString(cb_blas_rc_)));            \
    }                                                                                          \
  } while (0)

// Owns a cuBLAS handle bound to one stream.
class CublasHandle {
 public:
  explicit CublasHandle(cudaStream_t stream) {
    CB_CHECK_CUBLAS(blas().cublasCreate_v2(&handle_));
    CB_CHECK_CUBLAS(blas().cublasSetStream_v2(handle_, stream));
  }
  CublasHandle(const CublasHandle&) = delete;
  CublasHandle& operator=(const CublasHandle&) = delete;
  ~CublasHandle() {
    if (handle_ != nullptr && blas().cublasDestroy_v2(handle_) != CUBLAS_STATUS_SUCCESS) {
      report_release_failure("cublasDestroy", cudaErrorUnknown);
    }
  }
  [[nodiscard]] cublasHandle_t get() const { return handle_; }

 private:
  cublasHandle_t handle_ = nullptr;
};

class GpuGemm final : public overlap::ComputeLoad {
 public:
  explicit GpuGemm(const overlap::ComputeSpec& spec)
      : m_(spec.gemm.m), n_(spec.gemm.n), k_(spec.gemm.k), repeat_(spec.repeat), blas_(stream_.get()) {
    const auto elems = [](std::int64_t a, std::int64_t b) {
      return static_cast<std::size_t>(a) * static_cast<std::size_t>(b);
    };
    a_.reserve(elems(m_, k_) * 2);
    b_.reserve(elems(k_, n_) * 2);
    c_.reserve(elems(m_, n_) * sizeof(float));
    constexpr std::uint16_t kBf16One = 0x3F80;
    launch_fill_u16(a_.get(), elems(m_, k_), kBf16One, stream_.get());
    launch_fill_u16(b_.get(), elems(k_, n_), kBf16One, stream_.get());
    CB_CHECK_CUDA(cudaStreamSynchronize(stream_.get()));
  }

  void start() override {
    const float alpha = 1.0f;
    const float beta = 0.0f;
    for (int r = 0; r < repeat_; ++r) {
      CB_CHECK_CUBLAS(blas().cublasGemmEx(
          blas_.get(), CUBLAS_OP_N, CUBLAS_OP_N, static_cast<int>(m_), static_cast<int>(n_), static_cast<int>(k_),
          &alpha, a_.get(), CUDA_R_16BF, static_cast<int>(m_), b_.get(), CUDA_R_16BF, static_cast<int>(k_), &beta,
          c_.get(), CUDA_R_32F, static_cast<int>(m_), CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT));
    }
  }
  void wait() override { CB_CHECK_CUDA(cudaStreamSynchronize(stream_.get())); }
  [[nodiscard]] std::string device() const override { return "gpu"; }
  [[nodiscard]] std::uint64_t check() override {
    std::vector<float> host(static_cast<std::size_t>(m_) * static_cast<std::size_t>(n_));
    CB_CHECK_CUDA(
        cudaMemcpyAsync(host.data(), c_.get(), host.size() * sizeof(float), cudaMemcpyDeviceToHost, stream_.get()));
    CB_CHECK_CUDA(cudaStreamSynchronize(stream_.get()));
    std::uint64_t wrong = 0;
    for (float v : host) wrong += v != static_cast<float>(k_) ? 1 : 0;
    return wrong;
  }

 private:
  std::int64_t m_, n_, k_;
  int repeat_;
  CudaStream stream_;  // declared before the handle that is bound to it
  CublasHandle blas_;
  DeviceMemory a_, b_, c_;
};

}  // namespace

std::unique_ptr<overlap::ComputeLoad> make_gpu_gemm(const overlap::ComputeSpec& spec) {
  return std::make_unique<GpuGemm>(spec);
}

}  // namespace collbench::backend::nccl
