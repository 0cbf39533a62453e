// Gate policy files (YAML): every key, the shipped ci/perf-gate.yaml, and errors that name the
// file, line and key with the closest valid key.
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>
#include <string>

#include "collbench/core/error.hpp"
#include "collbench/gate/gate.hpp"

using collbench::InputError;
using collbench::gate::GatePolicy;
using collbench::gate::parse_gate_policy;

namespace {

// The message of the InputError that parsing `text` throws ("" when it does not throw).
std::string error_of(const std::string& text) {
  try {
    parse_gate_policy(text, "policy.yaml");
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

}  // namespace

TEST(GatePolicy, EveryKey) {
  const auto p = parse_gate_policy(
      "description: test\n"
      "repetitions: 12\n"
      "min_samples_per_repetition: 8\n"
      "alpha: 0.01\n"
      "confidence: 0.9\n"
      "min_effect: 0.1\n"
      "noise_multiplier: 3\n"
      "fail_on_warn: true\n"
      "floors: {default: 0.2, allreduce: 0.6, alltoall: null}\n",
      "p.yaml");
  EXPECT_EQ(p.repetitions, 12);
  EXPECT_EQ(p.min_samples_per_repetition, 8);
  EXPECT_DOUBLE_EQ(p.alpha, 0.01);
  EXPECT_DOUBLE_EQ(p.confidence, 0.9);
  EXPECT_DOUBLE_EQ(p.min_effect, 0.1);
  EXPECT_DOUBLE_EQ(p.noise_multiplier, 3.0);
  EXPECT_TRUE(p.fail_on_warn);
  EXPECT_EQ(p.source, "p.yaml");
  EXPECT_DOUBLE_EQ(*p.floor_for("allreduce"), 0.6);
  EXPECT_DOUBLE_EQ(*p.floor_for("broadcast"), 0.2);   // default
  EXPECT_FALSE(p.floor_for("alltoall").has_value());  // null: exempt from the default
  EXPECT_FALSE(GatePolicy{}.floor_for("allreduce").has_value());
}

// The floor keys are the fact table's names (core/collective_facts.hpp): ep-dp-concurrent and the
// imported-only reduce included, which the policy's own list used to leave out.
TEST(GatePolicy, FloorKeysAreEveryCollectiveOfTheFactTable) {
  const auto p = parse_gate_policy("floors: {ep-dp-concurrent: 0.5, reduce: 0.4}\n", "p.yaml");
  EXPECT_DOUBLE_EQ(*p.floor_for("ep-dp-concurrent"), 0.5);
  EXPECT_DOUBLE_EQ(*p.floor_for("reduce"), 0.4);
}

TEST(GatePolicy, EmptyTextKeepsDefaults) {
  const auto p = parse_gate_policy("", "empty.yaml");
  EXPECT_EQ(p.repetitions, 10);
  EXPECT_DOUBLE_EQ(p.alpha, 0.05);
  EXPECT_DOUBLE_EQ(p.min_effect, 0.05);
  EXPECT_DOUBLE_EQ(p.noise_multiplier, 2.0);
}

TEST(GatePolicy, UnknownKeyNamesFileLineKeyAndSuggestion) {
  const auto msg = error_of("repetitions: 10\n\nalpah: 0.05\n");
  EXPECT_TRUE(contains(msg, "policy.yaml:3: key 'alpah'")) << msg;
  EXPECT_TRUE(contains(msg, "did you mean 'alpha'")) << msg;
  EXPECT_TRUE(contains(msg, "accepted: description, repetitions")) << msg;
}

TEST(GatePolicy, UnknownFloorCollectiveSuggestsTheClosest) {
  const auto msg = error_of("floors:\n  allredcue: 0.5\n");
  EXPECT_TRUE(contains(msg, "policy.yaml:2: key 'floors.allredcue'")) << msg;
  EXPECT_TRUE(contains(msg, "did you mean 'allreduce'")) << msg;
}

TEST(GatePolicy, ValuesOutOfRangeOrOfTheWrongKind) {
  EXPECT_TRUE(contains(error_of("alpha: 1.5\n"), "policy.yaml:1: key 'alpha': 1.5 is out of range"));
  EXPECT_TRUE(contains(error_of("alpha: lots\n"), "'lots' is not a number"));
  EXPECT_TRUE(contains(error_of("repetitions: 1\n"), "key 'repetitions': 1 is out of range"));
  EXPECT_TRUE(contains(error_of("repetitions: 2.5\n"), "not a whole number"));
  EXPECT_TRUE(contains(error_of("fail_on_warn: maybe\n"), "not a boolean"));
  EXPECT_TRUE(contains(error_of("floors: {allreduce: 1.2}\n"), "key 'floors.allreduce': 1.2 is out of range"));
  EXPECT_TRUE(contains(error_of("floors: [1, 2]\n"), "expected a mapping"));
  EXPECT_TRUE(contains(error_of("- just\n- a list\n"), "must be a mapping"));
  EXPECT_TRUE(contains(error_of("min_effect: [0.1]\n"), "expected a single value"));
}

TEST(GatePolicy, MalformedYamlNamesTheLine) {
  const auto msg = error_of("alpha: 0.05\nfloors: {allreduce: 0.5\n");
  EXPECT_TRUE(contains(msg, "policy.yaml:")) << msg;
  EXPECT_TRUE(contains(msg, "invalid YAML")) << msg;
}

TEST(GatePolicy, TheShippedPolicyParses) {
  const std::string path = std::string(COLLBENCH_SOURCE_DIR) + "/ci/perf-gate.yaml";
  std::ifstream in(path);
  ASSERT_TRUE(in) << path;
  std::stringstream text;
  text << in.rdbuf();
  const auto p = parse_gate_policy(text.str(), path);
  EXPECT_GE(p.repetitions, 10);  // fewer cannot reach significance after BH over many cases
  EXPECT_GT(p.alpha, 0.0);
  EXPECT_FALSE(p.floors.empty());
}
