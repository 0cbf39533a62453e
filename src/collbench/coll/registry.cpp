// The collective registry and the default launch of a family (its operation()).
#include <fmt/format.h>

#include <algorithm>

#include "collbench/coll/collective.hpp"
#include "collbench/core/error.hpp"

namespace collbench::coll {

namespace {

std::vector<CollectiveFactory>& factories() {
  static std::vector<CollectiveFactory> registered;
  return registered;
}

// A family's place: its row in the fact table.
std::size_t table_position(const Collective& c) {
  const auto facts = all_collective_facts();
  return static_cast<std::size_t>(&c.facts() - facts.data());
}

}  // namespace

bool register_collective(CollectiveFactory make) {
  factories().push_back(make);
  return true;
}

const std::vector<std::unique_ptr<Collective>>& collective_registry() {
  static const std::vector<std::unique_ptr<Collective>> kRegistry = [] {
    std::vector<std::unique_ptr<Collective>> r;
    for (const CollectiveFactory make : factories()) r.push_back(make());
    std::sort(r.begin(), r.end(), [](const auto& a, const auto& b) { return table_position(*a) < table_position(*b); });
    return r;
  }();
  return kRegistry;
}

std::vector<std::string> collective_names() {
  std::vector<std::string> names;
  for (const auto& c : collective_registry()) names.emplace_back(c->name());
  return names;
}

const Collective& find_collective(std::string_view name) {
  for (const auto& c : collective_registry()) {
    if (c->name() == name) return *c;
  }
  throw InputError(unknown_name_message("collective", name, collective_names()));
}

void Collective::launch(backend::Comm& comm, const void* send, void* recv, const Shape& shape,
                        const CaseContext& ctx) const {
  const auto op = operation(send, recv, shape, ctx);
  if (!op) throw RuntimeFailure(fmt::format("{}: the family defines neither operation() nor launch()", name()));
  comm.run(*op);
}

backend::BoundCall Collective::bind_launch(backend::Comm& comm, const void* send, void* recv, const Shape& shape,
                                           const CaseContext& ctx) const {
  if (const auto op = operation(send, recv, shape, ctx)) return comm.bind(*op);
  return backend::BoundCall::of<&call_launch>(LaunchArgs{this, &comm, send, recv, &shape, &ctx});
}

}  // namespace collbench::coll
