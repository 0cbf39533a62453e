// MoE case parameters (coll/moe_plan.hpp): defaults from the workload profile, overrides, errors
// naming the key, the value and the accepted ones, checks before a run, sweep entries, waivers and
// names. Pure C++, no MPI.
#include <gtest/gtest.h>

#include <initializer_list>
#include <map>
#include <string>
#include <vector>

#include "collbench/coll/moe_plan.hpp"
#include "collbench/core/error.hpp"
#include "collbench/core/placement.hpp"
#include "collbench/plan/sweep.hpp"

using namespace collbench;
using namespace collbench::coll;

namespace {

// Ranks 0, 1 form domain 0 and ranks 2, 3 domain 1.
Placement two_by_two() {
  return placement_from_sizes(4, {2, 2});
}

void expect_param_error(const std::map<std::string, std::string>& params,
                        std::initializer_list<std::string> fragments) {
  try {
    (void)moe_config(parse_moe_params(params), 4);
    ADD_FAILURE() << "accepted";
  } catch (const InputError& e) {
    EXPECT_EQ(e.code(), ExitCode::bad_input);
    const std::string msg = e.what();
    for (const auto& f : fragments) EXPECT_NE(msg.find(f), std::string::npos) << "'" << f << "' not in: " << msg;
  }
}

TEST(MoeParams, DefaultsComeFromTheProfile) {
  const MoeConfig c = moe_config(parse_moe_params({}), 4);
  EXPECT_EQ(c.profile.name, "deepseek-v3");
  EXPECT_EQ(c.routing.tokens_per_rank, 4096);
  EXPECT_EQ(c.profile.dispatch.bytes_per_row, 7392);
  EXPECT_EQ(c.profile.combine.bytes_per_row, 14336);
  EXPECT_EQ(c.profile.rows, workload::RowConvention::dedup);
  EXPECT_TRUE(c.counts_timed);
}

TEST(MoeParams, OverridesApply) {
  const MoeParams p = parse_moe_params({{"workload", "deepseek-v3-bf16"},
                                        {"tokens", "64"},
                                        {"routing", "{popularity: lognormal, sigma: 0.5, groups_per_token: 0}"},
                                        {"ep_size", "2"},
                                        {"seed", "9"},
                                        {"rows", "copy"},
                                        {"counts_exchange", "untimed"}});
  EXPECT_FALSE(p.counts_timed);
  const MoeConfig c = moe_config(p, 4);
  EXPECT_EQ(c.routing.tokens_per_rank, 64);
  EXPECT_EQ(c.profile.dispatch.bytes_per_row, 14336);
  EXPECT_EQ(c.profile.rows, workload::RowConvention::copy);
  EXPECT_EQ(c.routing.settings.popularity, workload::Popularity::lognormal);
  EXPECT_DOUBLE_EQ(c.routing.settings.sigma, 0.5);
  EXPECT_EQ(c.routing.settings.groups_per_token, 0);
  EXPECT_EQ(c.routing.settings.ep_size, 2);
  EXPECT_EQ(c.routing.settings.seed, 9u);
}

TEST(MoeParams, ErrorsNameTheKeyAndValue) {
  expect_param_error({{"tokens", "-3"}}, {"'tokens'", "'-3'"});
  expect_param_error({{"tokens", "12x"}}, {"'tokens'", "'12x'"});
  expect_param_error({{"ep_size", "0"}}, {"'ep_size'", "'0'"});
  expect_param_error({{"counts_exchange", "sometimes"}}, {"counts_exchange", "sometimes", "timed", "untimed"});
  expect_param_error({{"rows", "triple"}}, {"triple", "copy", "dedup"});
  expect_param_error({{"token", "5"}}, {"token", "tokens"});  // unknown key suggests the close one
  expect_param_error({{"workload", "deepseek-v9"}}, {"deepseek-v9", "deepseek-v3"});
  expect_param_error({{"workload", ""}}, {"'workload'"});
  expect_param_error({{"routing", "[1, 2]"}}, {"routing", "[1, 2]", "popularity"});
  expect_param_error({{"routing", "{popularity: bimodal}"}}, {"routing", "bimodal", "lognormal"});
  expect_param_error({{"routing", "{sigmaa: 0.5}"}}, {"routing", "sigmaa", "sigma"});
  expect_param_error({{"imbalance", "high"}}, {"imbalance", "high"});
  expect_param_error({{"seed", "-1"}}, {"seed", "-1"});
}

TEST(MoeParams, CheckCatchesRoutingStructureBeforeARun) {
  const auto expect_error = [](const std::map<std::string, std::string>& params, const std::string& fragment) {
    try {
      check_moe_params(parse_moe_params(params));
      ADD_FAILURE() << "accepted: " << fragment;
    } catch (const InputError& e) {
      EXPECT_NE(std::string(e.what()).find(fragment), std::string::npos) << e.what();
    }
  };
  expect_error({{"routing", "{groups_per_token: 9}"}}, "groups_per_token 9");
  expect_error({{"ep_size", "3"}}, "3");  // 256 experts do not split over 3 ranks
  expect_error({{"counts_exchange", "maybe"}}, "'maybe'");
  EXPECT_NO_THROW(check_moe_params(parse_moe_params({{"ep_size", "64"}, {"imbalance", "1.25"}, {"tokens", "128"}})));
  EXPECT_NO_THROW(check_moe_params(parse_moe_params({{"routing", "{popularity: zipf, zipf_s: 1.2}"}})));
}

// A sweep's MoE keys reach Case.params as the collective reads them: `routing:` maps as flow
// YAML, lists as alternatives; every key of moe_param_keys() is a sweep key.
TEST(MoeParams, SweepEntriesBecomeParams) {
  const auto sweep = plan::parse_sweep(
      "name: t\n"
      "cases:\n"
      "  - collective: moe-dispatch\n"
      "    workload: deepseek-v3\n"
      "    tokens: [32, 128]\n"
      "    routing: {popularity: lognormal, sigma: 1.0}\n"
      "    rows: copy\n"
      "    counts_exchange: untimed\n",
      "t.yaml");
  ASSERT_EQ(sweep.cases.size(), 2u);
  EXPECT_EQ(sweep.cases[0].params.at("tokens"), "32");
  EXPECT_EQ(sweep.cases[1].params.at("tokens"), "128");
  const auto& params = sweep.cases[0].params;
  EXPECT_EQ(params.at("routing"), "{popularity: lognormal, sigma: 1.0}");
  const MoeConfig c = moe_config(parse_moe_params(params), 4);
  EXPECT_EQ(c.routing.settings.popularity, workload::Popularity::lognormal);
  EXPECT_DOUBLE_EQ(c.routing.settings.sigma, 1.0);
  EXPECT_EQ(c.profile.rows, workload::RowConvention::copy);
  EXPECT_FALSE(parse_moe_params(params).counts_timed);
  const auto& keys = plan::sweep_case_keys();
  for (const auto& k : moe_param_keys()) EXPECT_NE(std::find(keys.begin(), keys.end(), k), keys.end()) << k;
}

// A case entry that names an MoE key for a collective that ignores it is refused at that key's
// line, also when the entry lists an MoE collective beside it; an entry of MoE collectives only
// keeps its keys.
TEST(MoeParams, SweepRefusesMoeKeysOnOtherCollectives) {
  const std::string entry =
      "name: t\n"
      "cases:\n"
      "  - collective: moe-dispatch\n"
      "    workload: deepseek-v3\n"
      "  - collective: [moe-combine, allreduce]\n"
      "    bytes: [8]\n"
      "    workload: nosuch\n";
  try {
    (void)plan::parse_sweep(entry, "t.yaml");
    FAIL() << "accepted 'workload' on allreduce";
  } catch (const InputError& e) {
    EXPECT_STREQ(e.what(),
                 "t.yaml:7: key 'workload': applies only to the MoE collectives (moe-dispatch, moe-combine, "
                 "moe-roundtrip), not allreduce");
  }
  const auto ok = plan::parse_sweep(
      "name: t\ncases:\n  - collective: [moe-dispatch, moe-combine]\n    workload: deepseek-v3\n"
      "  - collective: allreduce\n    bytes: [8]\n",
      "t.yaml");
  ASSERT_EQ(ok.cases.size(), 3u);
  EXPECT_EQ(ok.cases[1].params.at("workload"), "deepseek-v3");
  EXPECT_TRUE(ok.cases[2].params.empty());
}

TEST(MoeParams, KeysAreTheDocumentedOnes) {
  EXPECT_EQ(moe_param_keys(), (std::vector<std::string>{"workload", "tokens", "routing", "ep_size", "imbalance", "seed",
                                                        "rows", "counts_exchange"}));
}

TEST(MoeWaiver, ExplainsWhyACaseCannotRunHere) {
  const Placement p = two_by_two();
  EXPECT_FALSE(moe_waiver(parse_moe_params({{"tokens", "8"}}), MoeAlgo::hierarchical, 4, p));
  EXPECT_FALSE(moe_waiver(parse_moe_params({{"tokens", "8"}, {"ep_size", "2"}}), MoeAlgo::flat, 4, p));
  const auto big = moe_waiver(parse_moe_params({{"ep_size", "8"}}), MoeAlgo::flat, 4, p);
  ASSERT_TRUE(big);
  EXPECT_NE(big->find("ep_size 8 exceeds the 4 ranks"), std::string::npos) << *big;
  const auto odd = moe_waiver(parse_moe_params({{"ep_size", "3"}}), MoeAlgo::flat, 4, p);
  ASSERT_TRUE(odd);
  EXPECT_NE(odd->find("whole EP groups"), std::string::npos) << *odd;
  const auto uneven = moe_waiver(parse_moe_params({}), MoeAlgo::hierarchical, 4, placement_from_sizes(4, {3, 1}));
  ASSERT_TRUE(uneven);
  EXPECT_NE(uneven->find("equal domain sizes"), std::string::npos) << *uneven;
  // A setting that needs more ranks than the communicator has: waived here, fine on 4 ranks.
  const auto hot = parse_moe_params({{"routing", "{popularity: one-hot-rank, hot_rank: 3}"}});
  EXPECT_NO_THROW(check_moe_params(hot));
  EXPECT_FALSE(moe_waiver(hot, MoeAlgo::flat, 4, p));
  const auto small = moe_waiver(hot, MoeAlgo::flat, 2, placement_from_sizes(2, {2}));
  ASSERT_TRUE(small);
  EXPECT_NE(small->find("hot_rank 3"), std::string::npos) << *small;
}

TEST(MoeNames, OpsAndAlgorithms) {
  EXPECT_EQ(moe_op_of("moe-combine"), MoeOp::combine);
  EXPECT_EQ(moe_op_of("moe-roundtrip"), MoeOp::roundtrip);
  EXPECT_EQ(moe_op_of("moe-dispatch"), MoeOp::dispatch);
  EXPECT_EQ(to_string(MoeOp::roundtrip), "moe-roundtrip");
  EXPECT_EQ(moe_algo_of("hierarchical"), MoeAlgo::hierarchical);
  EXPECT_EQ(moe_algo_of("auto"), MoeAlgo::flat);
  // A placement for another rank count (domain scope) falls back to one domain.
  EXPECT_EQ(moe_placement(two_by_two(), 2).domain_sizes, (std::vector<int>{2}));
  EXPECT_EQ(moe_placement(two_by_two(), 4).domain_sizes, (std::vector<int>{2, 2}));
}

}  // namespace
