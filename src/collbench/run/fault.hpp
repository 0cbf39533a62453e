// Fault injection (docs/interfaces.md section 6): COLLBENCH_FAULT="kind:key=value,...;..." with
// kinds corrupt, delay, slow, slow-pair, hang; `case=K` and `iter=I` select where an item
// applies (default everywhere); a hang's `warmup=W` puts it in warm-up iteration W, its `start=1`
// at the run's start, before the first case (where the backends start). Test-only;
// every affected record carries the string.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

namespace collbench::run {

struct FaultItem {
  std::string text;         // the item as given, for messages
  std::string kind;         // corrupt | delay | slow | slow-pair | hang
  std::optional<int> rank;  // corrupt, delay, hang
  std::optional<int> case_index;
  std::optional<int> iter;
  std::optional<int> warmup;  // hang: in warm-up iteration W instead of a timed iteration
  bool at_start = false;      // hang: at the run's start (start=1), before its first case
  double us = 0.0;            // delay
  double factor = 1.0;        // slow, slow-pair
  int a = -1, b = -1;         // slow-pair
};

class FaultPlan {
 public:
  FaultPlan() = default;
  // InputError naming the item, key and accepted values on malformed text.
  static FaultPlan parse(const std::string& text);
  static FaultPlan from_env();  // COLLBENCH_FAULT, empty when unset
  // InputError naming the item, the key and the valid range when an item names a rank (rank, a,
  // b) outside 0..num_ranks-1 or, when `num_cases` is given, a case outside 0..num_cases-1.
  void check_targets(int num_ranks, std::optional<std::size_t> num_cases) const;

  [[nodiscard]] bool empty() const { return items_.empty(); }
  [[nodiscard]] const std::string& text() const { return text_; }
  // Whether any item applies to this case (for the record's `fault` field).
  [[nodiscard]] bool affects_case(int case_index) const;
  [[nodiscard]] bool corrupt(int rank, int case_index) const;
  [[nodiscard]] double delay_us(int rank, int case_index, int iter) const;
  [[nodiscard]] double slow_factor(int case_index) const;
  [[nodiscard]] double pair_factor(int rank_a, int rank_b, int case_index) const;
  [[nodiscard]] bool hang(int rank, int case_index, int iter) const;
  [[nodiscard]] bool hang_in_warmup(int rank, int case_index, int warmup_iter) const;
  [[nodiscard]] bool hang_at_start(int rank) const;  // hang:rank=R,start=1
  [[nodiscard]] const std::vector<FaultItem>& items() const { return items_; }

 private:
  [[nodiscard]] static bool selects(const FaultItem& f, int case_index, std::optional<int> iter);
  std::vector<FaultItem> items_;
  std::string text_;
};

}  // namespace collbench::run
