// Acceptance profiles: strict parsing (file, line, key, closest key), defaults, validation of
// thresholds and algorithms, expansion into cases (sizes x rounds x repetitions, grouped by
// placement), and the shipped profiles. Pure C++: no MPI.

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <string>

#include "collbench/accept/judge.hpp"
#include "collbench/accept/profile.hpp"
#include "collbench/core/error.hpp"
#include "collbench/core/placement.hpp"

namespace {

using collbench::InputError;
using collbench::Placement;
using namespace collbench::accept;

std::string error_of(const std::string& yaml) {
  try {
    parse_acceptance_profile(yaml, "test.yaml");
  } catch (const InputError& e) {
    return e.what();
  }
  return "(no error)";
}

const char* kMinimal = R"(name: mini
checks:
  - name: ar
    collective: allreduce
    bytes: [1M, 16M]
    threshold: {fraction_of_bound: 0.5}
)";

// A resolver that ignores the flags' host lookup: n ranks in domains of rpd (or sizes).
PlacementResolver resolver(int n) {
  return [n](const std::optional<int>& rpd, const std::optional<std::string>& sizes) {
    if (sizes) return collbench::placement_from_sizes(n, collbench::parse_domain_sizes(*sizes));
    if (rpd) return collbench::placement_from_ranks_per_domain(n, *rpd);
    return collbench::placement_from_sizes(n, {n});
  };
}

TEST(AcceptProfile, ParsesMinimalProfileWithDefaults) {
  const auto p = parse_acceptance_profile(kMinimal, "test.yaml");
  EXPECT_EQ(p.name, "mini");
  ASSERT_EQ(p.checks.size(), 1u);
  const auto& c = p.checks[0];
  EXPECT_EQ(c.name, "ar");
  EXPECT_EQ(c.base.collective, "allreduce");
  ASSERT_EQ(c.sizes.size(), 2u);
  EXPECT_EQ(c.sizes[0], 1u << 20);
  EXPECT_EQ(c.sizes[1], 16u << 20);
  EXPECT_EQ(c.repetitions, 3);
  EXPECT_EQ(c.policy, Policy::median);
  EXPECT_FALSE(c.require_algo);
  ASSERT_TRUE(c.threshold.fraction_of_bound);
  EXPECT_DOUBLE_EQ(*c.threshold.fraction_of_bound, 0.5);
  EXPECT_FALSE(c.threshold.has_absolute());
  EXPECT_DOUBLE_EQ(c.base.stop.max_time_s, 1.0);  // acceptance default per repetition
  EXPECT_EQ(c.line, 3);
}

TEST(AcceptProfile, DefaultsApplyAndChecksOverride) {
  const auto p = parse_acceptance_profile(R"(name: d
system: h100-hgx
progress: yield
requires: {min_ranks: 8, ranks_multiple_of: 8}
defaults:
  backend: mpi
  dtype: bfloat16
  repetitions: 5
  policy: best
  max_time: 250ms
  threshold: {min_busbw_gbps: 10}
checks:
  - name: a
    collective: alltoall
    bytes: 4M
  - name: b
    collective: allreduce
    bytes: 8
    dtype: float32
    repetitions: 7
    policy: median
    threshold: {max_time_us: 30}
    ranks_per_domain: 4
)",
                                          "d.yaml");
  ASSERT_EQ(p.checks.size(), 2u);
  EXPECT_EQ(*p.system, "h100-hgx");
  EXPECT_EQ(*p.progress, "yield");
  EXPECT_EQ(p.requirements.min_ranks, 8);
  EXPECT_EQ(p.requirements.ranks_multiple_of, 8);
  const auto& a = p.checks[0];
  EXPECT_EQ(a.base.dtype, collbench::Dtype::bfloat16);
  EXPECT_EQ(a.repetitions, 5);
  EXPECT_EQ(a.policy, Policy::best);
  EXPECT_DOUBLE_EQ(a.base.stop.max_time_s, 0.25);
  EXPECT_DOUBLE_EQ(*a.threshold.min_busbw_gbps, 10.0);
  const auto& b = p.checks[1];
  EXPECT_EQ(b.base.dtype, collbench::Dtype::float32);
  EXPECT_EQ(b.repetitions, 7);
  EXPECT_EQ(b.policy, Policy::median);
  // A check's threshold replaces the default one (no merging of limits).
  EXPECT_FALSE(b.threshold.min_busbw_gbps);
  EXPECT_DOUBLE_EQ(*b.threshold.max_time_us, 30.0);
  EXPECT_EQ(*b.ranks_per_domain, 4);
  EXPECT_EQ(rank_count_problem(p, 16), "");
  EXPECT_NE(rank_count_problem(p, 4).find("at least 8"), std::string::npos);
  EXPECT_NE(rank_count_problem(p, 12).find("multiple of 8"), std::string::npos);
}

TEST(AcceptProfile, UnknownKeyNamesFileLineKeyAndClosest) {
  const std::string e = error_of(R"(name: x
checks:
  - name: ar
    collective: allreduce
    bytes: 1M
    treshold: {fraction_of_bound: 0.5}
)");
  EXPECT_NE(e.find("test.yaml:6"), std::string::npos) << e;
  EXPECT_NE(e.find("treshold"), std::string::npos) << e;
  EXPECT_NE(e.find("did you mean 'threshold'"), std::string::npos) << e;

  const std::string top = error_of("name: x\ncheck: []\n");
  EXPECT_NE(top.find("test.yaml:2"), std::string::npos) << top;
  EXPECT_NE(top.find("did you mean 'checks'"), std::string::npos) << top;

  const std::string thr = error_of(R"(name: x
checks:
  - name: ar
    collective: allreduce
    bytes: 1M
    threshold:
      fraction_of_bund: 0.5
)");
  EXPECT_NE(thr.find("test.yaml:7"), std::string::npos) << thr;
  EXPECT_NE(thr.find("did you mean 'fraction_of_bound'"), std::string::npos) << thr;

  const std::string def = error_of("name: x\ndefaults: {repetitons: 3}\nchecks: []\n");
  EXPECT_NE(def.find("did you mean 'repetitions'"), std::string::npos) << def;
}

TEST(AcceptProfile, RejectsBadValues) {
  const auto check = [](const std::string& body) {
    return error_of("name: x\nchecks:\n  - name: c\n    collective: allreduce\n" + body);
  };
  EXPECT_NE(check("    bytes: 1M\n").find("no threshold"), std::string::npos);
  EXPECT_NE(check("    threshold: {min_busbw_gbps: 1}\n").find("missing required key 'bytes'"), std::string::npos);
  EXPECT_NE(check("    bytes: 1M\n    threshold: {fraction_of_bound: 1.5}\n").find("must be in (0, 1]"),
            std::string::npos);
  EXPECT_NE(check("    bytes: 1M\n    threshold: {min_busbw_gbps: 0}\n").find("must be in (0,"), std::string::npos);
  EXPECT_NE(check("    bytes: 1M\n    threshold: {}\n").find("names no limit"), std::string::npos);
  EXPECT_NE(check("    bytes: 1M\n    threshold: 5\n").find("expected a mapping"), std::string::npos);
  EXPECT_NE(check("    bytes: 1M\n    threshold: {min_busbw_gbps: 1}\n    policy: mean\n").find("did you mean"),
            std::string::npos);
  EXPECT_NE(check("    bytes: 1M\n    threshold: {min_busbw_gbps: 1}\n    repetitions: 0\n").find("must be in [1"),
            std::string::npos);
  EXPECT_NE(check("    bytes: 1Q\n    threshold: {min_busbw_gbps: 1}\n").find("test.yaml:5"), std::string::npos);
  EXPECT_NE(check("    bytes: 1M\n    threshold: {min_busbw_gbps: 1}\n    require_algo: true\n").find("not auto"),
            std::string::npos);
  EXPECT_NE(check("    bytes: 1M\n    threshold: {min_busbw_gbps: 1}\n    algo: nvlz\n").find("did you mean 'nvls'"),
            std::string::npos);
  EXPECT_NE(check("    bytes: 1M\n    threshold: {min_busbw_gbps: 1}\n    ranks_per_domain: 2\n    domain_sizes: 2,2\n")
                .find("exclude each other"),
            std::string::npos);
  EXPECT_NE(error_of("name: x\nchecks:\n  - name: c\n    collective: allreduse\n    bytes: 1M\n"
                     "    threshold: {min_busbw_gbps: 1}\n")
                .find("did you mean 'allreduce'"),
            std::string::npos);
  EXPECT_NE(error_of("name: x\nchecks:\n  - name: a b\n    collective: allreduce\n    bytes: 1M\n"
                     "    threshold: {min_busbw_gbps: 1}\n")
                .find("letters, digits"),
            std::string::npos);
  const std::string dup = error_of(
      "name: x\ndefaults: {threshold: {min_busbw_gbps: 1}}\nchecks:\n"
      "  - {name: a, collective: allreduce, bytes: 1M}\n  - {name: a, collective: alltoall, bytes: 1M}\n");
  EXPECT_NE(dup.find("duplicate check name 'a'"), std::string::npos) << dup;
  EXPECT_NE(error_of("name: x\nprogress: yeild\nchecks: []\n").find("did you mean 'yield'"), std::string::npos);
  EXPECT_NE(error_of("name: [x\n").find("invalid YAML"), std::string::npos);
  EXPECT_NE(error_of("name: x\nchecks: []\n").find("non-empty list"), std::string::npos);
  // sendrecv parameters are the collective's own and checked up front.
  EXPECT_NE(error_of("name: x\nchecks:\n  - name: p\n    collective: sendrecv\n    pairing: roundrobin\n"
                     "    bytes: 1M\n    threshold: {min_busbw_gbps: 1}\n")
                .find("did you mean 'round-robin'"),
            std::string::npos);
  EXPECT_NE(error_of("name: x\nchecks:\n  - name: p\n    collective: sendrecv\n    pairing: rail\n    scope: domain\n"
                     "    bytes: 1M\n    threshold: {min_busbw_gbps: 1}\n")
                .find("scope: global"),
            std::string::npos);
}

TEST(AcceptProfile, PlanExpandsSizesRoundsAndRepetitionsByPlacement) {
  const auto p = parse_acceptance_profile(R"(name: plan
defaults: {threshold: {min_busbw_gbps: 1}}
checks:
  - name: ar
    collective: allreduce
    bytes: [1M, 4M]
    repetitions: 2
  - name: pairs
    collective: sendrecv
    pairing: round-robin
    bytes: 1M
    repetitions: 3
  - name: per-domain
    collective: allreduce
    scope: domain
    ranks_per_domain: 2
    bytes: 8
    repetitions: 1
)",
                                          "plan.yaml");
  ASSERT_TRUE(p.checks[1].all_rounds);
  const auto groups = plan_acceptance(p, resolver(4));
  ASSERT_EQ(groups.size(), 2u);
  EXPECT_EQ(groups[0].label, "default");
  EXPECT_EQ(groups[1].label, "ranks-per-domain-2");
  EXPECT_EQ(groups[1].placement.domain_sizes, (std::vector<int>{2, 2}));
  // default group: ar 2 sizes x 2 reps + pairs 3 rounds (4 ranks) x 3 reps = 4 + 9
  ASSERT_EQ(groups[0].cases.size(), 13u);
  // Repetition-major: the first repetition of every check comes first.
  EXPECT_EQ(groups[0].cases[0].repetition, 0);
  EXPECT_EQ(groups[0].cases[0].spec.bytes, 1u << 20);
  EXPECT_EQ(groups[0].cases[1].spec.bytes, 4u << 20);
  EXPECT_EQ(groups[0].cases[2].spec.collective, "sendrecv");
  EXPECT_EQ(groups[0].cases[2].round, 0);
  EXPECT_EQ(groups[0].cases[2].spec.params.at("round"), "0");
  EXPECT_EQ(groups[0].cases[4].spec.params.at("round"), "2");
  EXPECT_EQ(groups[0].cases[5].repetition, 1);
  EXPECT_EQ(groups[0].cases.back().repetition, 2);
  EXPECT_EQ(groups[0].cases.back().spec.collective, "sendrecv");
  ASSERT_EQ(groups[1].cases.size(), 1u);
  EXPECT_EQ(groups[1].cases[0].spec.scope, collbench::Scope::domain);
}

TEST(AcceptProfile, RoundsSampleThePairwiseRoundsEvenly) {
  const auto p = parse_acceptance_profile(R"(name: sample
checks:
  - {name: pairs, collective: sendrecv, pairing: round-robin, bytes: 1M, repetitions: 1, rounds: 3,
     threshold: {min_busbw_gbps: 1}}
)",
                                          "sample.yaml");
  EXPECT_EQ(p.checks[0].sampled_rounds, 3);
  // 8 ranks: 7 rounds; 3 of them spread evenly: i x 7 / 3 = 0, 2, 4.
  const auto groups = plan_acceptance(p, resolver(8));
  ASSERT_EQ(groups[0].cases.size(), 3u);
  EXPECT_EQ(groups[0].cases[0].spec.params.at("round"), "0");
  EXPECT_EQ(groups[0].cases[1].spec.params.at("round"), "2");
  EXPECT_EQ(groups[0].cases[2].spec.params.at("round"), "4");
  // More than there are: every round, once each.
  const auto all = plan_acceptance(
      parse_acceptance_profile("name: s\nchecks:\n  - {name: p, collective: sendrecv, pairing: round-robin, bytes: 8, "
                               "repetitions: 1, rounds: 50, threshold: {min_busbw_gbps: 1}}\n",
                               "s.yaml"),
      resolver(4));
  EXPECT_EQ(all[0].cases.size(), 3u);
  // Only a pairwise check has rounds to sample.
  EXPECT_NE(error_of("name: x\nchecks:\n  - {name: a, collective: allreduce, bytes: 1M, rounds: 4, "
                     "threshold: {min_busbw_gbps: 1}}\n")
                .find("rounds: K samples the rounds of a pairwise check"),
            std::string::npos);
  EXPECT_NE(error_of("name: x\nchecks:\n  - {name: p, collective: sendrecv, pairing: round-robin, bytes: 1M, "
                     "rounds: 0, threshold: {min_busbw_gbps: 1}}\n")
                .find("rounds"),
            std::string::npos);
}

TEST(AcceptProfile, ShippedProfilesParseAndPlan) {
  const std::string dir = std::string(COLLBENCH_SOURCE_DIR) + "/profiles/acceptance";
  std::vector<std::string> names;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) names.push_back(entry.path().stem().string());
  std::sort(names.begin(), names.end());
  EXPECT_EQ(names, (std::vector<std::string>{"cpu-local", "gb200-nvl72", "gb300-nvl72", "gb300-nvl72-sim", "h100-hgx",
                                             "testbed"}));
  for (const auto& name : names) {
    SCOPED_TRACE(name);
    const auto p = load_acceptance_profile(dir + "/" + name + ".yaml");
    EXPECT_EQ(p.name, name);
    EXPECT_FALSE(p.checks.empty());
    const int n = name == "cpu-local" ? 2 : 144;
    EXPECT_EQ(rank_count_problem(p, n), "");
    const int domain = name == "h100-hgx" ? 8 : 72;
    const auto groups = plan_acceptance(p, [&](const auto& rpd, const auto& sizes) {
      if (sizes) return collbench::placement_from_sizes(n, collbench::parse_domain_sizes(*sizes));
      return collbench::placement_from_ranks_per_domain(n, rpd.value_or(name == "cpu-local" ? n : domain));
    });
    std::size_t cases = 0;
    for (const auto& g : groups) cases += g.cases.size();
    EXPECT_GT(cases, p.checks.size());
  }
  // By name, through the profile search path.
  EXPECT_EQ(load_acceptance_profile("cpu-local").name, "cpu-local");
  EXPECT_THROW(load_acceptance_profile("gb300-nvl27"), InputError);
  try {
    load_acceptance_profile("gb300-nvl27");
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("did you mean 'gb300-nvl72'"), std::string::npos) << e.what();
  }
}

TEST(AcceptProfile, GpuProfilesRequireNvlsWhereTheIssueAsks) {
  const auto p = load_acceptance_profile("gb300-nvl72");
  bool nvls = false, rail = false, pairwise = false, hierarchical = false;
  for (const auto& c : p.checks) {
    if (c.base.algo == "nvls") {
      nvls = true;
      EXPECT_TRUE(c.require_algo);
      EXPECT_EQ(c.base.scope, collbench::Scope::domain);
      EXPECT_EQ(c.base.backend, "nccl");
    }
    if (c.base.algo == "hierarchical") hierarchical = c.require_algo;
    if (c.all_rounds && c.base.params.at("pairing") == "rail") rail = true;
    if (c.all_rounds && c.base.params.at("pairing") == "round-robin") pairwise = true;
  }
  EXPECT_TRUE(nvls);
  EXPECT_TRUE(rail);
  EXPECT_TRUE(pairwise);
  EXPECT_TRUE(hierarchical);
  EXPECT_EQ(*p.system, "gb300-nvl72");
}

}  // namespace
