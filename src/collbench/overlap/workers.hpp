// Persistent worker threads for the CPU compute loads: run(job) hands every worker its index
// at once and returns; wait() blocks (without spinning, so the rank's MPI thread keeps its core)
// until all have finished. Threads start in the constructor and are joined in the destructor.
#pragma once

#include <condition_variable>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace collbench::overlap {

class Workers {
 public:
  explicit Workers(int num_threads);
  Workers(const Workers&) = delete;
  Workers& operator=(const Workers&) = delete;
  ~Workers();

  [[nodiscard]] int size() const { return static_cast<int>(threads_.size()); }
  // job(worker_idx) on every worker. The previous job must have been waited for.
  void run(std::function<void(int)> job);
  void wait();

 private:
  void loop(int idx);

  std::mutex mutex_;
  std::condition_variable wake_, done_;
  std::function<void(int)> job_;
  unsigned long long generation_ = 0;
  int running_ = 0;
  bool stop_ = false;
  std::vector<std::thread> threads_;
};

}  // namespace collbench::overlap
