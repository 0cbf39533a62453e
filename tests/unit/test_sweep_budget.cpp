// The sweep file's `budget` key (the stopping budget, --budget on the command line): in defaults
// and per entry (an entry's value wins), a list of budgets expands like any other key, bad values
// name the file, line, key and value; and every case key of the file sets the case, not the
// collective's parameters.
#include <gtest/gtest.h>

#include "collbench/core/error.hpp"
#include "collbench/plan/sweep.hpp"

using namespace collbench;
using namespace collbench::plan;

namespace {

std::string error_of(const std::string& yaml) {
  try {
    parse_sweep(yaml, "bad.yaml");
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST(SweepBudget, DefaultsAndEntriesSetTheBudget) {
  const auto s = parse_sweep(
      "name: b\n"
      "defaults: {budget: 50ms}\n"
      "cases:\n"
      "  - {collective: allreduce, bytes: 8}\n"
      "  - {collective: allreduce, bytes: 8, budget: 0}\n"
      "  - {collective: allreduce, bytes: 8, budget: [1s, 2.5ms]}\n",
      "b.yaml");
  ASSERT_EQ(s.cases.size(), 4u);
  EXPECT_DOUBLE_EQ(s.cases[0].stop.budget_s, 0.05);
  EXPECT_DOUBLE_EQ(s.cases[1].stop.budget_s, 0.0);  // 0: off
  EXPECT_DOUBLE_EQ(s.cases[2].stop.budget_s, 1.0);
  EXPECT_DOUBLE_EQ(s.cases[3].stop.budget_s, 0.0025);
  for (const auto& c : s.cases) EXPECT_TRUE(c.params.empty());
}

TEST(SweepBudget, WithoutTheKeyTheDefaultBudgetStays) {
  const auto s = parse_sweep("name: b\ncases:\n  - {collective: allreduce, bytes: 8}\n", "b.yaml");
  EXPECT_DOUBLE_EQ(s.cases.at(0).stop.budget_s, Case{}.stop.budget_s);
  EXPECT_DOUBLE_EQ(s.cases.at(0).stop.budget_s, 0.01);
}

TEST(SweepBudget, BadValuesNameFileLineKeyAndAcceptedUnits) {
  EXPECT_EQ(error_of("name: x\ncases:\n  - collective: allreduce\n    bytes: 8\n    budget: 10parsecs\n"),
            "bad.yaml:5: key 'budget': invalid duration '10parsecs': unknown unit 'parsecs'; accepted: 2s, 500ms, "
            "100us, 250ns, 1.5m, 1h (a bare number is seconds)");
  EXPECT_EQ(error_of("name: x\ndefaults: {budget: -1s}\ncases:\n  - {collective: allreduce, bytes: 8}\n"),
            "bad.yaml:2: key 'defaults.budget': invalid duration '-1s': must not be negative");
  const auto m = error_of("name: x\ncases:\n  - {collective: allreduce, bytes: 8, budjet: 1s}\n");
  EXPECT_NE(m.find("bad.yaml:3: key 'budjet'"), std::string::npos) << m;
  EXPECT_NE(m.find("did you mean 'budget'"), std::string::npos) << m;
}

TEST(SweepBudget, EveryStopKeySetsTheCase) {
  const auto s = parse_sweep(
      "name: k\ncases:\n  - {collective: broadcast, bytes: 1K, root: 1, graph: 0, warmup: 3, min_iters: 7, "
      "max_iters: 9, batch: 4, max_noise: 0.05, min_time: 1ms, max_time: 2s, budget: 20ms, in_place: true, "
      "check: false}\n",
      "k.yaml");
  const Case& c = s.cases.at(0);
  EXPECT_TRUE(c.params.empty());
  EXPECT_EQ(c.root, 1);
  EXPECT_EQ(c.stop.warmup, 3);
  EXPECT_EQ(c.stop.min_iters, 7);
  EXPECT_EQ(c.stop.max_iters, 9);
  EXPECT_EQ(c.stop.batch, 4);
  EXPECT_DOUBLE_EQ(c.stop.max_noise, 0.05);
  EXPECT_DOUBLE_EQ(c.stop.min_time_s, 0.001);
  EXPECT_DOUBLE_EQ(c.stop.max_time_s, 2.0);
  EXPECT_DOUBLE_EQ(c.stop.budget_s, 0.02);
  EXPECT_TRUE(c.in_place);
  EXPECT_FALSE(c.check);
}
