// YAML structure checks on the event stream (issue 37 item 3): alias bombs, cycles and nesting
// too deep are refused before anything walks the tree, in every YAML input (sweeps, system,
// workload and acceptance profiles, layouts, gate policies), and fast. Exact messages.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <chrono>
#include <functional>
#include <string>

#include "collbench/accept/profile.hpp"
#include "collbench/core/error.hpp"
#include "collbench/gate/gate.hpp"
#include "collbench/model/system_profile.hpp"
#include "collbench/plan/sweep.hpp"
#include "collbench/step/layout.hpp"
#include "collbench/workload/profile.hpp"
#include "collbench/yamlio/structure.hpp"

using namespace collbench;

namespace {

std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const InputError& e) {
    return e.what();
  }
  return "no error";
}

// Ten anchors, each a list of nine aliases of the one before: 9^9 leaves once expanded, in
// about 400 bytes. Line 1 is `KEY: x`, then a: &a [...] on line 2, ..., j on line 11.
std::string alias_bomb(const std::string& first_line) {
  std::string text = first_line + "\n" + "a: &a [x, x, x, x, x, x, x, x, x]\n";
  for (char c = 'b'; c <= 'j'; ++c) {
    const std::string prev(1, static_cast<char>(c - 1));
    text += fmt::format("{0}: &{0} [*{1}, *{1}, *{1}, *{1}, *{1}, *{1}, *{1}, *{1}, *{1}]\n", std::string(1, c), prev);
  }
  return text;
}

// Expanded nodes: a = 1 + 9 = 10; each next anchor 1 + 9 x the one before: 91, 820, 7381,
// 66430, 597871 (f). With the root, `name: bomb`, the keys a..g and g's list, 672,614 nodes are
// counted when g's first alias (line 8) adds 597,871 more and passes 1,000,000.
constexpr const char* kBombMessage =
    ":8: aliases expand to more than 1000000 nodes (an alias bomb?); write the values out instead";

}  // namespace

TEST(YamlStructure, AnAliasBombIsRefusedAtTheAliasThatPassesTheCapInMilliseconds) {
  const std::string bomb = alias_bomb("name: bomb");
  EXPECT_LT(bomb.size(), 450U);
  const auto start = std::chrono::steady_clock::now();
  EXPECT_EQ(error_of([&] { yamlio::check_structure(bomb, "b.yaml"); }), std::string("b.yaml") + kBombMessage);
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(1));
}

TEST(YamlStructure, AliasesThatStayUnderTheCapAreAccepted) {
  // Up to f: 672,612 nodes, under the cap, so a file may use aliases freely.
  std::string text = alias_bomb("name: ok");
  text = text.substr(0, text.find("g:"));
  EXPECT_EQ(error_of([&] { yamlio::check_structure(text, "ok.yaml"); }), "no error");
  EXPECT_EQ(error_of([] { yamlio::check_structure("d: &d {x: 1, y: 2}\ne: *d\nf: *d\n", "ok.yaml"); }), "no error");
}

TEST(YamlStructure, ACycleAndNestingTooDeepAreRefused) {
  EXPECT_EQ(error_of([] { yamlio::check_structure("a: &a [1, *a]\n", "c.yaml"); }),
            "c.yaml:1: an alias inside the node it names (a cycle); write the values out instead");
  EXPECT_EQ(error_of([] { yamlio::check_structure(std::string(64, '[') + std::string(64, ']'), "d.yaml"); }),
            "no error");
  EXPECT_EQ(error_of([] { yamlio::check_structure(std::string(65, '[') + std::string(65, ']'), "d.yaml"); }),
            "d.yaml:1: nested deeper than 64 levels");
}

TEST(YamlStructure, NestingTooDeepIsNamedNotABadFile) {
  // yaml-cpp's own limit (about 500 levels) says only "bad file" (issue 37 item 7).
  const std::string deep = "name: d\ncases: " + std::string(1000, '[') + std::string(1000, ']') + "\n";
  EXPECT_EQ(error_of([&] { (void)plan::parse_sweep(deep, "d.yaml"); }), "d.yaml:2: nested deeper than 64 levels");
  // Every YAML input checks the structure before yaml-cpp parses (the layout once parsed first).
  const std::string tail = ":2: nested deeper than 64 levels";
  EXPECT_EQ(error_of([&] { (void)step::parse_layout(deep, "l.yaml"); }), "l.yaml" + tail);
  EXPECT_EQ(error_of([&] { (void)model::parse_system_profile(deep, "p.yaml"); }), "p.yaml" + tail);
  EXPECT_EQ(error_of([&] { (void)workload::parse_workload_profile(deep, "w.yaml"); }), "w.yaml" + tail);
  EXPECT_EQ(error_of([&] { (void)accept::parse_acceptance_profile(deep, "a.yaml"); }), "a.yaml" + tail);
  EXPECT_EQ(error_of([&] { (void)gate::parse_gate_policy(deep, "g.yaml"); }), "g.yaml" + tail);
}

TEST(YamlStructure, KeysAreCheckedOnceWhereTheyAreWrittenAndAnAliasKeyByItsText) {
  // An anchored mapping used twice is not a key given twice; its own duplicate is named once.
  EXPECT_EQ(error_of([] { yamlio::check_structure("d: &d {x: 1, x: 2}\ne: *d\n", "k.yaml"); }),
            "k.yaml:1: key 'd.x': given twice (first on line 1); keep one");
  EXPECT_EQ(error_of([] { yamlio::check_structure("k: &k k\n*k : 2\n", "k.yaml"); }),
            "k.yaml:2: key 'k': given twice (first on line 1); keep one");
}

TEST(YamlStructure, EveryYamlInputRefusesTheBombNamingItsFile) {
  const std::string bomb = alias_bomb("name: bomb");
  const std::string tail = kBombMessage;
  const auto start = std::chrono::steady_clock::now();
  EXPECT_EQ(error_of([&] { (void)plan::parse_sweep(bomb, "s.yaml"); }), "s.yaml" + tail);
  EXPECT_EQ(error_of([&] { (void)model::parse_system_profile(bomb, "p.yaml"); }), "p.yaml" + tail);
  EXPECT_EQ(error_of([&] { (void)workload::parse_workload_profile(bomb, "w.yaml"); }), "w.yaml" + tail);
  EXPECT_EQ(error_of([&] { (void)accept::parse_acceptance_profile(bomb, "a.yaml"); }), "a.yaml" + tail);
  EXPECT_EQ(error_of([&] { (void)step::parse_layout(bomb, "l.yaml"); }), "l.yaml" + tail);
  EXPECT_EQ(error_of([&] { (void)gate::parse_gate_policy(alias_bomb("# policy"), "g.yaml"); }), "g.yaml" + tail);
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(3));
}
