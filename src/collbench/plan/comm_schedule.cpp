// Case order and set lifetimes (see comm_schedule.hpp).
#include "collbench/plan/comm_schedule.hpp"

#include <algorithm>
#include <map>

namespace collbench::plan {
namespace {

// Sets numbered by the first case that names them; per case, its set.
std::vector<int> number_sets(const std::vector<std::string>& set_keys, int& count) {
  std::map<std::string, int> ids;
  std::vector<int> set_of;
  set_of.reserve(set_keys.size());
  for (const auto& key : set_keys) {
    const auto [it, added] = ids.emplace(key, static_cast<int>(ids.size()));
    set_of.push_back(it->second);
  }
  count = static_cast<int>(ids.size());
  return set_of;
}

// The most sets alive at once: a set lives from its first position to its last.
int max_live(const CaseSchedule& s) {
  std::vector<bool> started(s.last_position.size(), false);
  int live = 0;
  int most = 0;
  for (std::size_t pos = 0; pos < s.order.size(); ++pos) {
    const auto set = static_cast<std::size_t>(s.set_of[s.order[pos]]);
    if (!started[set]) {
      started[set] = true;
      most = std::max(most, ++live);
    }
    if (s.last_position[set] == pos) --live;
  }
  return most;
}

}  // namespace

CaseSchedule schedule_cases(const std::vector<std::string>& set_keys, bool keep_order) {
  CaseSchedule s;
  int sets = 0;
  s.set_of = number_sets(set_keys, sets);
  s.order.resize(set_keys.size());
  for (std::size_t i = 0; i < s.order.size(); ++i) s.order[i] = i;
  if (!keep_order) {
    // Sets are numbered by first appearance, so a stable sort by set runs them in that order and
    // keeps the sweep's order inside each.
    std::stable_sort(s.order.begin(), s.order.end(),
                     [&](std::size_t a, std::size_t b) { return s.set_of[a] < s.set_of[b]; });
  }
  s.last_position.assign(static_cast<std::size_t>(sets), 0);
  for (std::size_t pos = 0; pos < s.order.size(); ++pos) {
    s.last_position[static_cast<std::size_t>(s.set_of[s.order[pos]])] = pos;
  }
  s.max_live_sets = max_live(s);
  return s;
}

bool releases_after(const CaseSchedule& schedule, std::size_t position) {
  const auto set = static_cast<std::size_t>(schedule.set_of[schedule.order[position]]);
  return schedule.last_position[set] == position;
}

}  // namespace collbench::plan
