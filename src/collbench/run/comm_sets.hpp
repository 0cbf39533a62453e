// The runner's backends and communicator sets (docs/measurement.md "Communicator lifecycle").
// A set is what one backend instance key needs: the backend's world communicator, this rank's
// domain, its cross-domain peers and the hierarchical composition over the three. Backends are
// started up front, without a communicator (a backend that cannot start, e.g. no GPU, fails
// before anything is written, and the run header takes their library versions); a set's
// communicators are created when its first case runs and released (NCCL: ncclCommFinalize, then
// ncclCommDestroy; MPI: MPI_Comm_free) after its last (plan/comm_schedule.hpp orders the cases).
// Every communicator the backends make is counted in one tally (backend/comm_tally.hpp).
#pragma once

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "collbench/backend/backend.hpp"
#include "collbench/backend/comm_tally.hpp"
#include "collbench/backend/hierarchical.hpp"
#include "collbench/backend/options.hpp"
#include "collbench/plan/case.hpp"

namespace collbench::run {

struct BackendSet {
  backend::Backend* backend = nullptr;  // owned by CommSets, alive for the whole run
  std::unique_ptr<backend::Comm> world;
  std::unique_ptr<backend::Comm> domain;
  std::unique_ptr<backend::Comm> cross;  // ranks with the same local index, one per domain
  std::unique_ptr<backend::HierarchicalComm> hierarchical;
};

// Where this rank stands in the placement (the splits' colours and keys).
struct SetLayout {
  int world_rank = 0;
  int domain = 0;            // this rank's domain
  int local_index = 0;       // its position inside the domain
  bool consecutive = false;  // equal domains of consecutive ranks (HierarchicalComm blocks)
  backend::Progress progress = backend::Progress::spin;
};

// Overlap mode on a backend that polls for it (MPI: non-blocking calls + MPI_Test, yield) gets
// a backend of its own (docs/overlap.md).
bool polls_for_overlap(const plan::Case& c);

// The backend instance (and so the set) a case runs on: backend x algorithm setting x buffers x
// progress, as the backend's policy keys it, with "|levels-at-once" for a family that runs two
// splits at once where the backend separates them (BackendPolicy::separates_concurrent_levels).
std::string set_key(const plan::Case& c);
// What the case's backend instance is built with (one per set_key).
backend::BackendOptions options_for(const plan::Case& c, const SetLayout& layout,
                                    std::shared_ptr<backend::CommTally> tally);

class CommSets {
 public:
  explicit CommSets(SetLayout layout);
  CommSets(const CommSets&) = delete;
  CommSets& operator=(const CommSets&) = delete;
  ~CommSets();

  // Starts every backend `cases` need (collective; throws what the backend throws).
  void start_backends(const std::vector<plan::Case>& cases);
  [[nodiscard]] std::vector<const backend::Backend*> backends() const;
  // The case's set, its communicators created now if they are not alive (collective).
  BackendSet& acquire(const plan::Case& c);
  // Releases the case's set's communicators, if alive (collective: every rank releases the same).
  void release(const plan::Case& c);
  [[nodiscard]] backend::CommCounts counts() const { return tally_->counts(); }
  [[nodiscard]] int live() const { return tally_->live(); }

 private:
  SetLayout layout_;
  std::shared_ptr<backend::CommTally> tally_ = std::make_shared<backend::CommTally>();
  std::map<std::string, std::unique_ptr<backend::Backend>> backends_;
  std::map<std::string, BackendSet> sets_;  // the alive ones
};

}  // namespace collbench::run
