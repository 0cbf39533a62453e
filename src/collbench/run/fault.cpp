// COLLBENCH_FAULT parsing.
#include "collbench/run/fault.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <string_view>

#include "collbench/core/error.hpp"
#include "collbench/core/names.hpp"

namespace collbench::run {
namespace {

const std::vector<std::string> kKinds{"corrupt", "delay", "slow", "slow-pair", "hang"};

std::vector<std::string> keys_for(const std::string& kind) {
  if (kind == "corrupt") return {"rank", "case", "iter"};
  if (kind == "delay") return {"rank", "us", "case", "iter"};
  if (kind == "slow") return {"factor", "case", "iter"};
  if (kind == "slow-pair") return {"a", "b", "factor", "case", "iter"};
  return {"rank", "case", "iter", "warmup", "start"};  // hang
}

double number(const std::string& item, const std::string& key, const std::string& value) {
  try {
    std::size_t pos = 0;
    const double v = std::stod(value, &pos);
    if (pos != value.size() || !std::isfinite(v) || v < 0) throw std::invalid_argument("bad");
    return v;
  } catch (const std::exception&) {
    throw InputError(fmt::format("COLLBENCH_FAULT item '{}': {}='{}' is not a non-negative number", item, key, value));
  }
}

// What each key sets, and whether it takes whole numbers only.
struct KeySetter {
  std::string_view key;
  bool whole;
  void (*set)(FaultItem&, double);
};
const KeySetter kKeySetters[] = {
    {"rank", true, [](FaultItem& f, double v) { f.rank = static_cast<int>(v); }},
    {"case", true, [](FaultItem& f, double v) { f.case_index = static_cast<int>(v); }},
    {"iter", true, [](FaultItem& f, double v) { f.iter = static_cast<int>(v); }},
    {"warmup", true, [](FaultItem& f, double v) { f.warmup = static_cast<int>(v); }},
    {"start", true, [](FaultItem& f, double v) { f.at_start = v != 0; }},
    {"us", false, [](FaultItem& f, double v) { f.us = v; }},
    {"factor", false, [](FaultItem& f, double v) { f.factor = v; }},
    {"a", true, [](FaultItem& f, double v) { f.a = static_cast<int>(v); }},
    {"b", true, [](FaultItem& f, double v) { f.b = static_cast<int>(v); }},
};

// One key=value of an item into f (the key one of its kind's).
void set_key(FaultItem& f, const std::string& kv, const std::vector<std::string>& allowed) {
  const std::string& item = f.text;
  const auto eq = kv.find('=');
  if (eq == std::string::npos) {
    throw InputError(fmt::format("COLLBENCH_FAULT item '{}': '{}' is not key=value", item, kv));
  }
  const std::string key = kv.substr(0, eq);
  const std::string value = kv.substr(eq + 1);
  if (std::find(allowed.begin(), allowed.end(), key) == allowed.end()) {
    throw InputError(
        fmt::format("COLLBENCH_FAULT item '{}': {}", item, unknown_name_message("key for " + f.kind, key, allowed)));
  }
  const double v = number(item, key, value);
  for (const auto& setter : kKeySetters) {
    if (setter.key != key) continue;
    if (setter.whole && (v != std::floor(v) || v > 1e9)) {
      throw InputError(
          fmt::format("COLLBENCH_FAULT item '{}': {}='{}' is not a whole number (0 to 1000000000)", item, key, value));
    }
    setter.set(f, v);
  }
}

// What an item of each kind must name.
void check_item(const FaultItem& f) {
  const std::string& item = f.text;
  const bool needs_rank = f.kind == "corrupt" || f.kind == "delay" || f.kind == "hang";
  if (needs_rank && !f.rank) throw InputError(fmt::format("COLLBENCH_FAULT item '{}': needs rank=R", item));
  if (f.kind == "delay" && f.us <= 0) throw InputError(fmt::format("COLLBENCH_FAULT item '{}': needs us=U > 0", item));
  if ((f.kind == "slow" || f.kind == "slow-pair") && f.factor <= 0) {
    throw InputError(fmt::format("COLLBENCH_FAULT item '{}': needs factor=F > 0", item));
  }
  if (f.iter && f.warmup) {
    throw InputError(
        fmt::format("COLLBENCH_FAULT item '{}': iter=I (timed iteration I) and warmup=W (warm-up "
                    "iteration W) exclude each other",
                    item));
  }
  if (f.at_start && (f.case_index || f.iter || f.warmup)) {
    throw InputError(fmt::format(
        "COLLBENCH_FAULT item '{}': start=1 (at the run's start, before any case) excludes case, iter and warmup",
        item));
  }
  if (f.kind == "slow-pair" && (f.a < 0 || f.b < 0)) {
    throw InputError(fmt::format("COLLBENCH_FAULT item '{}': needs a=A,b=B", item));
  }
  if (f.kind == "slow-pair" && f.a == f.b) {
    throw InputError(
        fmt::format("COLLBENCH_FAULT item '{}': a and b are both rank {}; a pair is two ranks", item, f.a));
  }
}

// One item, "KIND[:key=value,...]".
FaultItem parse_item(const std::string& item) {
  const auto colon = item.find(':');
  FaultItem f;
  f.text = item;
  f.kind = item.substr(0, colon);
  if (std::find(kKinds.begin(), kKinds.end(), f.kind) == kKinds.end()) {
    throw InputError("COLLBENCH_FAULT: " + unknown_name_message("fault kind", f.kind, kKinds));
  }
  const auto allowed = keys_for(f.kind);
  if (colon != std::string::npos && colon + 1 < item.size()) {
    for (const auto& kv : split_list(item.substr(colon + 1), "COLLBENCH_FAULT")) set_key(f, kv, allowed);
  }
  check_item(f);
  return f;
}

}  // namespace

FaultPlan FaultPlan::parse(const std::string& text) {
  FaultPlan plan;
  plan.text_ = text;
  std::size_t start = 0;
  while (start < text.size()) {
    std::size_t end = text.find(';', start);
    if (end == std::string::npos) end = text.size();
    const std::string item = text.substr(start, end - start);
    start = end + 1;
    if (!item.empty()) plan.items_.push_back(parse_item(item));
  }
  return plan;
}

FaultPlan FaultPlan::from_env() {
  const char* text = std::getenv("COLLBENCH_FAULT");
  if (text == nullptr || *text == '\0') return {};
  return parse(text);
}

namespace {

// "COLLBENCH_FAULT item 'hang:rank=4': rank=4 names no rank of this run; accepted: 0 to 3 (4 ranks)"
void check_index(const FaultItem& f, const char* key, int value, std::size_t count, const char* noun) {
  if (value >= 0 && static_cast<std::size_t>(value) < count) return;
  throw InputError(fmt::format("COLLBENCH_FAULT item '{}': {}={} names no {} of this run; accepted: {} ({} {}{})",
                               f.text, key, value, noun, count == 0 ? "none" : fmt::format("0 to {}", count - 1), count,
                               noun, count == 1 ? "" : "s"));
}

}  // namespace

void FaultPlan::check_targets(int num_ranks, std::optional<std::size_t> num_cases) const {
  const auto ranks = static_cast<std::size_t>(std::max(num_ranks, 0));
  for (const auto& f : items_) {
    if (f.rank) check_index(f, "rank", *f.rank, ranks, "rank");
    if (f.kind == "slow-pair") {
      check_index(f, "a", f.a, ranks, "rank");
      check_index(f, "b", f.b, ranks, "rank");
    }
    if (f.case_index && num_cases) check_index(f, "case", *f.case_index, *num_cases, "case");
  }
}

bool FaultPlan::selects(const FaultItem& f, int case_index, std::optional<int> iter) {
  if (f.case_index && *f.case_index != case_index) return false;
  if (f.iter && iter && *f.iter != *iter) return false;
  return true;
}

bool FaultPlan::affects_case(int case_index) const {
  for (const auto& f : items_) {
    if (selects(f, case_index, std::nullopt)) return true;
  }
  return false;
}

bool FaultPlan::corrupt(int rank, int case_index) const {
  for (const auto& f : items_) {
    if (f.kind == "corrupt" && f.rank == rank && selects(f, case_index, std::nullopt)) return true;
  }
  return false;
}

double FaultPlan::delay_us(int rank, int case_index, int iter) const {
  double us = 0.0;
  for (const auto& f : items_) {
    if (f.kind == "delay" && f.rank == rank && selects(f, case_index, iter)) us += f.us;
  }
  return us;
}

double FaultPlan::slow_factor(int case_index) const {
  double factor = 1.0;
  for (const auto& f : items_) {
    if (f.kind == "slow" && selects(f, case_index, std::nullopt)) factor *= f.factor;
  }
  return factor;
}

double FaultPlan::pair_factor(int rank_a, int rank_b, int case_index) const {
  double factor = 1.0;
  for (const auto& f : items_) {
    if (f.kind == "slow-pair" && selects(f, case_index, std::nullopt) &&
        ((f.a == rank_a && f.b == rank_b) || (f.a == rank_b && f.b == rank_a))) {
      factor *= f.factor;
    }
  }
  return factor;
}

bool FaultPlan::hang(int rank, int case_index, int iter) const {
  for (const auto& f : items_) {
    if (f.kind == "hang" && !f.warmup && !f.at_start && f.rank == rank && selects(f, case_index, iter)) return true;
  }
  return false;
}

bool FaultPlan::hang_at_start(int rank) const {
  return std::any_of(items_.begin(), items_.end(),
                     [rank](const FaultItem& f) { return f.kind == "hang" && f.at_start && f.rank == rank; });
}

bool FaultPlan::hang_in_warmup(int rank, int case_index, int warmup_iter) const {
  for (const auto& f : items_) {
    if (f.kind == "hang" && f.warmup == warmup_iter && f.rank == rank && selects(f, case_index, std::nullopt)) {
      return true;
    }
  }
  return false;
}

}  // namespace collbench::run
