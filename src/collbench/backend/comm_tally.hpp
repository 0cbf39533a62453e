// How many library communicators a run creates and holds at once (the run header's
// `communicators: {created, max_live}`, docs/results-format.md). Each backend communicator that
// carries measured operations holds a CommTicket from its creation to its release: MPI, every
// MPI_Comm_dup / MPI_Comm_split of the backend; NCCL, every ncclComm_t (the world communicator
// from ncclCommInitRankConfig and each ncclCommSplit). The runner owns one tally per run and hands
// it to its backends (BackendOptions::tally). The control communicators (the runner's and the
// NCCL backend's private duplicates of MPI_COMM_WORLD) are not counted.
#pragma once

#include <algorithm>
#include <memory>
#include <utility>

namespace collbench::backend {

struct CommCounts {
  int created = 0;
  int max_live = 0;
  friend bool operator==(const CommCounts&, const CommCounts&) = default;
};

class CommTally {
 public:
  void add() {
    ++created_;
    ++live_;
    max_live_ = std::max(max_live_, live_);
  }
  void remove() { --live_; }
  [[nodiscard]] int live() const { return live_; }
  [[nodiscard]] CommCounts counts() const { return {created_, max_live_}; }

 private:
  int created_ = 0;
  int live_ = 0;
  int max_live_ = 0;
};

// One communicator's place in a tally, from construction to destruction (RAII); a null tally
// counts nothing.
class CommTicket {
 public:
  explicit CommTicket(std::shared_ptr<CommTally> tally = nullptr) : tally_(std::move(tally)) {
    if (tally_) tally_->add();
  }
  CommTicket(const CommTicket&) = delete;
  CommTicket& operator=(const CommTicket&) = delete;
  CommTicket(CommTicket&& other) noexcept : tally_(std::move(other.tally_)) {}
  CommTicket& operator=(CommTicket&& other) noexcept {
    if (this != &other) {
      if (tally_) tally_->remove();
      tally_ = std::move(other.tally_);
    }
    return *this;
  }
  ~CommTicket() {
    if (tally_) tally_->remove();
  }

 private:
  std::shared_ptr<CommTally> tally_;
};

}  // namespace collbench::backend
