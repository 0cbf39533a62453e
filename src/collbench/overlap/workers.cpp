// Worker threads (workers.hpp).
#include "collbench/overlap/workers.hpp"

#include <stdexcept>

namespace collbench::overlap {

Workers::Workers(int num_threads) {
  if (num_threads < 1) throw std::invalid_argument("a compute load needs at least one thread");
  threads_.reserve(static_cast<std::size_t>(num_threads));
  for (int i = 0; i < num_threads; ++i) threads_.emplace_back([this, i] { loop(i); });
}

Workers::~Workers() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stop_ = true;
  }
  wake_.notify_all();
  for (auto& t : threads_) t.join();
}

void Workers::run(std::function<void(int)> job) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (running_ != 0) throw std::logic_error("compute load started twice without wait()");
    job_ = std::move(job);
    running_ = size();
    ++generation_;
  }
  wake_.notify_all();
}

void Workers::wait() {
  std::unique_lock<std::mutex> lock(mutex_);
  done_.wait(lock, [this] { return running_ == 0; });
}

void Workers::loop(int idx) {
  unsigned long long seen = 0;
  for (;;) {
    std::function<void(int)> job;
    {
      std::unique_lock<std::mutex> lock(mutex_);
      wake_.wait(lock, [&] { return stop_ || generation_ != seen; });
      if (stop_) return;
      seen = generation_;
      job = job_;
    }
    job(idx);
    {
      std::lock_guard<std::mutex> lock(mutex_);
      if (--running_ == 0) done_.notify_all();
    }
  }
}

}  // namespace collbench::overlap
