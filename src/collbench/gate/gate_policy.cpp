// The gate policy file (ci/perf-gate.yaml): strict parsing with messages that name file, key and
// the accepted values.
#include <fmt/format.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cmath>

#include "collbench/core/collective_facts.hpp"
#include "collbench/core/error.hpp"
#include "collbench/gate/gate.hpp"
#include "collbench/yamlio/reader.hpp"

namespace collbench::gate {

// ---- policy --------------------------------------------------------------------------------

namespace {

// Every collective of the fact table (core/collective_facts.hpp), plus "default" for every
// collective not listed.
const std::vector<std::string>& floor_keys() {
  static const std::vector<std::string> keys = [] {
    std::vector<std::string> out{"default"};
    for (const auto& f : all_collective_facts()) out.emplace_back(f.name);
    return out;
  }();
  return keys;
}

std::string where(const std::string& source, const YAML::Node& node, std::string_view key) {
  const auto mark = node.Mark();
  if (mark.line >= 0) return fmt::format("{}:{}: key '{}'", source, mark.line + 1, key);
  return fmt::format("{}: key '{}'", source, key);
}

std::string scalar_text(const YAML::Node& value, const std::string& at) {
  if (!value.IsScalar()) throw InputError(at + ": expected a single value");
  return value.as<std::string>();
}

// An accepted interval of a policy value, printed in messages as e.g. (0, 1].
struct Bounds {
  double low, high;
  bool low_inclusive, high_inclusive;
};
constexpr Bounds kOpenUnit{0.0, 1.0, false, false};    // alpha, confidence
constexpr Bounds kEfficiency{0.0, 1.0, false, true};   // floors
constexpr Bounds kMinEffect{0.0, 10.0, true, true};    // a fraction: 10 = 11x slower
constexpr Bounds kMultiplier{0.0, 100.0, true, true};  // noise multiplier

double parse_number(const YAML::Node& value, const std::string& at, const Bounds& b) {
  const std::string text = scalar_text(value, at);
  double x = 0.0;
  try {
    std::size_t pos = 0;
    x = std::stod(text, &pos);
    if (pos != text.size()) throw std::invalid_argument("trailing text");
  } catch (const std::exception&) {
    throw InputError(fmt::format("{}: '{}' is not a number", at, text));
  }
  const bool ok =
      std::isfinite(x) && (b.low_inclusive ? x >= b.low : x > b.low) && (b.high_inclusive ? x <= b.high : x < b.high);
  if (!ok) {
    throw InputError(fmt::format("{}: {} is out of range; accepted: {}{}, {}{}", at, text, b.low_inclusive ? "[" : "(",
                                 b.low, b.high, b.high_inclusive ? "]" : ")"));
  }
  return x;
}

int parse_integer(const YAML::Node& value, const std::string& at, int low, int high) {
  const std::string text = scalar_text(value, at);
  long x = 0;
  try {
    std::size_t pos = 0;
    x = std::stol(text, &pos);
    if (pos != text.size()) throw std::invalid_argument("trailing text");
  } catch (const std::exception&) {
    throw InputError(fmt::format("{}: '{}' is not a whole number", at, text));
  }
  if (x < low || x > high) throw InputError(fmt::format("{}: {} is out of range; accepted: {}..{}", at, x, low, high));
  return static_cast<int>(x);
}

bool parse_boolean(const YAML::Node& value, const std::string& at) {
  const std::string v = scalar_text(value, at);
  if (v == "true" || v == "yes" || v == "on") return true;
  if (v == "false" || v == "no" || v == "off") return false;
  throw InputError(fmt::format("{}: '{}' is not a boolean; accepted: true, false", at, v));
}

}  // namespace

const std::vector<std::string>& gate_policy_keys() {
  static const std::vector<std::string> keys{"description", "repetitions", "min_samples_per_repetition", "alpha",
                                             "confidence",  "min_effect",  "noise_multiplier",           "fail_on_warn",
                                             "floors"};
  return keys;
}

std::optional<double> GatePolicy::floor_for(const std::string& collective) const {
  if (const auto it = floors.find(collective); it != floors.end()) return it->second;
  if (const auto it = floors.find("default"); it != floors.end()) return it->second;
  return std::nullopt;
}

GatePolicy parse_gate_policy(std::string_view yaml_text, const std::string& source) {
  YAML::Node root;
  yamlio::check_structure(yaml_text, source);  // first: it refuses what would make YAML::Load or a walk blow up
  try {
    root = YAML::Load(std::string(yaml_text));
  } catch (const YAML::Exception& e) {
    throw InputError(fmt::format("{}:{}: invalid YAML: {}", source, e.mark.line + 1, e.msg));
  }
  GatePolicy p;
  p.source = source;
  if (root.IsNull()) return p;  // an empty file: every default
  if (!root.IsMap()) {
    throw InputError(source + ": a gate policy must be a mapping with keys: " + join(gate_policy_keys()));
  }
  const auto& keys = gate_policy_keys();
  for (const auto& kv : root) {
    if (!kv.first.IsScalar()) throw InputError(where(source, kv.first, "?") + ": keys must be plain names");
    const auto key = kv.first.Scalar();
    const std::string at = where(source, kv.first, key);
    const YAML::Node& v = kv.second;
    if (std::find(keys.begin(), keys.end(), key) == keys.end()) {
      throw InputError(at + ": " + unknown_name_message("policy key", key, keys));
    }
    if (key == "description") {
      scalar_text(v, at);
    } else if (key == "repetitions") {
      p.repetitions = parse_integer(v, at, 2, 10000);
    } else if (key == "min_samples_per_repetition") {
      p.min_samples_per_repetition = parse_integer(v, at, 1, 1000000);
    } else if (key == "alpha") {
      p.alpha = parse_number(v, at, kOpenUnit);
    } else if (key == "confidence") {
      p.confidence = parse_number(v, at, kOpenUnit);
    } else if (key == "min_effect") {
      p.min_effect = parse_number(v, at, kMinEffect);
    } else if (key == "noise_multiplier") {
      p.noise_multiplier = parse_number(v, at, kMultiplier);
    } else if (key == "fail_on_warn") {
      p.fail_on_warn = parse_boolean(v, at);
    } else if (key == "floors") {
      if (v.IsNull()) continue;
      if (!v.IsMap()) throw InputError(at + ": expected a mapping of collective: minimum efficiency");
      for (const auto& f : v) {
        if (!f.first.IsScalar()) throw InputError(where(source, f.first, "floors.?") + ": keys must be plain names");
        const auto name = f.first.Scalar();
        const std::string fat = where(source, f.first, "floors." + name);
        if (std::find(floor_keys().begin(), floor_keys().end(), name) == floor_keys().end()) {
          throw InputError(fat + ": " + unknown_name_message("floors key", name, floor_keys()));
        }
        // "alltoall: null": exempt from the default floor.
        p.floors[name] =
            f.second.IsNull() ? std::nullopt : std::optional<double>(parse_number(f.second, fat, kEfficiency));
      }
    }
  }
  return p;
}

}  // namespace collbench::gate
