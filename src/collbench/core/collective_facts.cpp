#include "collbench/core/collective_facts.hpp"

#include <array>

namespace collbench {
namespace {

constexpr const auto& kFacts = facts_detail::kCollectiveFacts;

constexpr bool ids_unique() {
  for (std::size_t i = 0; i < kFacts.size(); ++i) {
    for (std::size_t j = i + 1; j < kFacts.size(); ++j) {
      if (kFacts[i].id == kFacts[j].id || kFacts[i].name == kFacts[j].name) return false;
    }
  }
  return true;
}
static_assert(ids_unique(), "every collective has one row and one name");

}  // namespace

std::span<const CollectiveFacts> all_collective_facts() {
  return kFacts;
}

const CollectiveFacts& collective_facts(CollectiveId id) {
  for (const auto& f : kFacts) {
    if (f.id == id) return f;
  }
  return kFacts.front();  // unreachable: every id has a row (test_collective_facts.cpp)
}

const CollectiveFacts* find_collective_facts(std::string_view name) {
  for (const auto& f : kFacts) {
    if (f.name == name) return &f;
  }
  return nullptr;
}

std::optional<CollectiveId> collective_id(std::string_view name) {
  const CollectiveFacts* f = find_collective_facts(name);
  return f ? std::optional<CollectiveId>(f->id) : std::nullopt;
}

std::string_view to_string(CollectiveId id) {
  return collective_facts(id).name;
}

std::vector<std::string> collective_names_where(bool CollectiveFacts::*fact) {
  std::vector<std::string> out;
  for (const auto& f : kFacts) {
    if (f.*fact) out.emplace_back(f.name);
  }
  return out;
}

std::string_view to_string(NcclOp op) {
  const auto i = static_cast<std::size_t>(op);
  return i < facts_detail::kOpNames.size() ? facts_detail::kOpNames[i] : "none";
}

}  // namespace collbench
