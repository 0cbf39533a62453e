// CPU compute load `gemm`: C[m x n] = A[m x k] B[k x n] in fp32 on worker threads, rows split
// between them (i-p-j loop order, so the inner loop streams rows of B and C and vectorises).
// A and B hold ones, so every element of C must equal k exactly (k <= 2^20 < 2^24).
#include <algorithm>
#include <cstddef>
#include <vector>

#include "collbench/overlap/load.hpp"
#include "collbench/overlap/workers.hpp"

namespace collbench::overlap {
namespace {

class CpuGemm final : public ComputeLoad {
 public:
  explicit CpuGemm(const ComputeSpec& spec)
      : m_(static_cast<std::size_t>(spec.gemm.m)),
        n_(static_cast<std::size_t>(spec.gemm.n)),
        k_(static_cast<std::size_t>(spec.gemm.k)),
        repeat_(spec.repeat),
        a_(m_ * k_, 1.0f),
        b_(k_ * n_, 1.0f),
        c_(m_ * n_, 0.0f),
        workers_(spec.threads) {}

  void start() override {
    workers_.run([this](int idx) {
      const std::size_t parts = static_cast<std::size_t>(workers_.size());
      const std::size_t first = m_ * static_cast<std::size_t>(idx) / parts;
      const std::size_t last = m_ * (static_cast<std::size_t>(idx) + 1) / parts;
      for (int r = 0; r < repeat_; ++r) multiply(first, last);
    });
  }
  void wait() override { workers_.wait(); }
  [[nodiscard]] std::string device() const override { return "cpu"; }
  [[nodiscard]] std::uint64_t check() override {
    const auto expected = static_cast<float>(k_);
    return static_cast<std::uint64_t>(
        std::count_if(c_.begin(), c_.end(), [expected](float v) { return v != expected; }));
  }

 private:
  void multiply(std::size_t first_row, std::size_t last_row) {
    for (std::size_t i = first_row; i < last_row; ++i) {
      float* c = c_.data() + i * n_;
      std::fill(c, c + n_, 0.0f);
      const float* a = a_.data() + i * k_;
      for (std::size_t p = 0; p < k_; ++p) {
        const float av = a[p];
        const float* b = b_.data() + p * n_;
        for (std::size_t j = 0; j < n_; ++j) c[j] += av * b[j];
      }
    }
  }

  std::size_t m_, n_, k_;
  int repeat_;
  std::vector<float> a_, b_, c_;
  Workers workers_;  // last: joined before the matrices go away
};

}  // namespace

std::unique_ptr<ComputeLoad> make_cpu_gemm(const ComputeSpec& spec) {
  return std::make_unique<CpuGemm>(spec);
}

}  // namespace collbench::overlap
