// CPU compute load `stream`: copies `bytes` from a source to a destination buffer, split
// between the worker threads, `repeat` times; memory-bound (each byte read once, written once).
#include <cstddef>
#include <cstring>
#include <vector>

#include "collbench/overlap/load.hpp"
#include "collbench/overlap/workers.hpp"

namespace collbench::overlap {
namespace {

class CpuStream final : public ComputeLoad {
 public:
  explicit CpuStream(const ComputeSpec& spec)
      : bytes_(static_cast<std::size_t>(spec.bytes)),
        repeat_(spec.repeat),
        src_(bytes_),
        dst_(bytes_, 0),
        workers_(spec.threads) {
    for (std::size_t i = 0; i < bytes_; ++i) src_[i] = static_cast<unsigned char>(i * 131u + 7u);
  }

  void start() override {
    workers_.run([this](int idx) {
      const std::size_t parts = static_cast<std::size_t>(workers_.size());
      const std::size_t first = bytes_ * static_cast<std::size_t>(idx) / parts;
      const std::size_t last = bytes_ * (static_cast<std::size_t>(idx) + 1) / parts;
      for (int r = 0; r < repeat_; ++r) std::memcpy(dst_.data() + first, src_.data() + first, last - first);
    });
  }
  void wait() override { workers_.wait(); }
  [[nodiscard]] std::string device() const override { return "cpu"; }
  [[nodiscard]] std::uint64_t check() override {
    std::uint64_t wrong = 0;
    for (std::size_t i = 0; i < bytes_; ++i) wrong += dst_[i] != src_[i] ? 1 : 0;
    return wrong;
  }

 private:
  std::size_t bytes_;
  int repeat_;
  std::vector<unsigned char> src_, dst_;
  Workers workers_;  // last: joined before the buffers go away
};

}  // namespace

std::unique_ptr<ComputeLoad> make_cpu_stream(const ComputeSpec& spec) {
  return std::make_unique<CpuStream>(spec);
}

}  // namespace collbench::overlap
