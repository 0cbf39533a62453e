// The runner's backends and communicator sets (see comm_sets.hpp).
#include "collbench/run/comm_sets.hpp"

#include <algorithm>

#include "collbench/backend/policy.hpp"
#include "collbench/backend/registry.hpp"
#include "collbench/coll/collective.hpp"

namespace collbench::run {
namespace {

// Backends are created per (backend, algorithm setting, buffer kind): NCCL reads NCCL_ALGO and
// NCCL_PROTO when a communicator is created, and registered/symmetric buffers belong to it.
std::string backend_algo(const plan::Case& c) {
  return c.algo == "hierarchical" || c.algo == "flat" ? std::string("auto") : c.algo;
}

// A family that runs operations on the levels at once, on a backend that gives it an instance of
// its own (BackendPolicy::separates_concurrent_levels).
bool separate_levels(const plan::Case& c) {
  if (c.scope != Scope::global || !backend::backend_policy(c.backend).separates_concurrent_levels()) return false;
  const auto& families = coll::collective_registry();
  return std::any_of(families.begin(), families.end(),
                     [&](const auto& f) { return f->name() == c.collective && f->uses_levels(); });
}

// Children before their parents: the hierarchical composition refers to the three levels.
void release_comms(BackendSet& set) {
  set.hierarchical.reset();
  set.cross.reset();
  set.domain.reset();
  set.world.reset();
}

}  // namespace

bool polls_for_overlap(const plan::Case& c) {
  return !c.overlap.empty() && backend::backend_policy(c.backend).polls_for_overlap();
}

std::string set_key(const plan::Case& c) {
  const std::string key =
      backend::backend_policy(c.backend).instance_key(c.backend, backend_algo(c), c.buffers, polls_for_overlap(c));
  return separate_levels(c) ? key + "|levels-at-once" : key;
}

backend::BackendOptions options_for(const plan::Case& c, const SetLayout& layout,
                                    std::shared_ptr<backend::CommTally> tally) {
  backend::BackendOptions bo;
  bo.progress = polls_for_overlap(c) ? backend::Progress::yield : layout.progress;
  bo.buffers = c.buffers;
  bo.algo = backend_algo(c);
  bo.share_split_resources = !separate_levels(c);
  bo.tally = std::move(tally);
  return bo;
}

CommSets::CommSets(SetLayout layout) : layout_(layout) {}

CommSets::~CommSets() {
  for (auto& entry : sets_) release_comms(entry.second);
}

void CommSets::start_backends(const std::vector<plan::Case>& cases) {
  for (const auto& c : cases) {
    const std::string key = set_key(c);
    if (backends_.count(key) > 0) continue;
    backends_.emplace(key, backend::make_backend(c.backend, options_for(c, layout_, tally_)));
  }
}

std::vector<const backend::Backend*> CommSets::backends() const {
  std::vector<const backend::Backend*> out;
  for (const auto& entry : backends_) out.push_back(entry.second.get());
  return out;
}

// The set's communicators: the world, this rank's domain, its cross-domain peers.
BackendSet& CommSets::acquire(const plan::Case& c) {
  const std::string key = set_key(c);
  if (const auto it = sets_.find(key); it != sets_.end()) return it->second;
  auto b = backends_.find(key);
  if (b == backends_.end()) {  // a case start_backends() did not see (not in the runner's sweeps)
    b = backends_.emplace(key, backend::make_backend(c.backend, options_for(c, layout_, tally_))).first;
  }
  BackendSet set;
  set.backend = b->second.get();
  set.world = set.backend->world();
  set.domain = set.backend->split(layout_.domain, layout_.world_rank);
  set.cross = set.backend->split(layout_.local_index, layout_.domain);
  set.hierarchical = std::make_unique<backend::HierarchicalComm>(*set.backend, *set.domain, *set.cross, *set.world,
                                                                 layout_.consecutive);
  return sets_.emplace(key, std::move(set)).first->second;
}

void CommSets::release(const plan::Case& c) {
  const auto it = sets_.find(set_key(c));
  if (it == sets_.end()) return;
  release_comms(it->second);
  sets_.erase(it);
}

}  // namespace collbench::run
