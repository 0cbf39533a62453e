// CPU compute load `sleep`: every worker thread sleeps `time`. It occupies no core, so the
// collective beside it should hide completely: the control case of the overlap mode.
#include <chrono>
#include <thread>

#include "collbench/overlap/load.hpp"
#include "collbench/overlap/workers.hpp"

namespace collbench::overlap {
namespace {

class CpuSleep final : public ComputeLoad {
 public:
  explicit CpuSleep(const ComputeSpec& spec) : us_(spec.sleep_us), workers_(spec.threads) {}
  void start() override {
    workers_.run([this](int) { std::this_thread::sleep_for(std::chrono::duration<double, std::micro>(us_)); });
  }
  void wait() override { workers_.wait(); }
  [[nodiscard]] std::string device() const override { return "cpu"; }
  [[nodiscard]] std::uint64_t check() override { return 0; }

 private:
  double us_;
  Workers workers_;
};

}  // namespace

std::unique_ptr<ComputeLoad> make_cpu_sleep(const ComputeSpec& spec) {
  return std::make_unique<CpuSleep>(spec);
}

}  // namespace collbench::overlap
