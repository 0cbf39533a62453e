// Workload profiles: every shipped profile loads with the docs/hardware-context.md section 6 numbers, and bad
// profiles are rejected with messages naming file, line and key.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include "collbench/core/error.hpp"
#include "collbench/workload/profile.hpp"
#include "collbench/workload/routing.hpp"

using namespace collbench;
using namespace collbench::workload;

namespace {

const std::string kProfiles = std::string(COLLBENCH_SOURCE_DIR) + "/profiles/workloads/";

// A valid profile to mutate in rejection tests (line numbers below refer to this text).
const std::string kValid =
    "name: small\n"               // 1
    "model:\n"                    // 2
    "  hidden_size: 1024\n"       // 3
    "  num_routed_experts: 16\n"  // 4
    "  top_k: 2\n"                // 5
    "  num_expert_groups: 4\n"    // 6
    "dispatch:\n"                 // 7
    "  dtype: float8e4m3\n"       // 8
    "  scale_block: 128\n"        // 9
    "  bytes_per_row: 1056\n"     // 10
    "combine:\n"                  // 11
    "  dtype: bfloat16\n"         // 12
    "tokens_per_rank: 256\n"      // 13
    "routing:\n"                  // 14
    "  popularity: lognormal\n"   // 15
    "  sigma: 0.5\n"              // 16
    "  groups_per_token: 2\n";    // 17

std::string replace(std::string text, const std::string& from, const std::string& to) {
  const auto at = text.find(from);
  EXPECT_NE(at, std::string::npos) << from;
  if (at != std::string::npos) text.replace(at, from.size(), to);
  return text;
}

// Parses `text` expecting an InputError whose message contains every fragment.
void expect_rejected(const std::string& text, std::initializer_list<std::string> fragments) {
  try {
    parse_workload_profile(text, "bad.yaml");
    ADD_FAILURE() << "accepted:\n" << text;
  } catch (const InputError& e) {
    const std::string msg = e.what();
    EXPECT_EQ(e.code(), ExitCode::bad_input);
    for (const auto& f : fragments) EXPECT_NE(msg.find(f), std::string::npos) << "'" << f << "' not in: " << msg;
  }
}

}  // namespace

TEST(WorkloadProfile, DeepSeekV3MatchesContext) {
  const WorkloadProfile p = load_workload_profile("deepseek-v3");
  EXPECT_EQ(p.name, "deepseek-v3");
  EXPECT_EQ(p.hidden_size, 7168);
  EXPECT_EQ(p.num_routed_experts, 256);
  EXPECT_EQ(p.num_shared_experts, 1);
  EXPECT_EQ(p.top_k, 8);
  EXPECT_EQ(p.num_expert_groups, 8);
  EXPECT_EQ(p.routing.groups_per_token, 4);
  EXPECT_EQ(p.dispatch.dtype, Dtype::float8e4m3);
  EXPECT_EQ(p.dispatch.bytes_per_row, 7392);  // 7168 + 56 x 4
  EXPECT_EQ(p.combine.dtype, Dtype::bfloat16);
  EXPECT_EQ(p.combine.bytes_per_row, 14336);
  EXPECT_EQ(p.rows, RowConvention::dedup);
  EXPECT_EQ(p.tokens_per_rank, 4096);
  EXPECT_EQ(p.routing.popularity, Popularity::uniform);
  EXPECT_NE(p.source.find("deepseek-v3.yaml"), std::string::npos);
}

TEST(WorkloadProfile, VariantsDifferOnlyWhereTheySay) {
  const WorkloadProfile base = load_workload_profile("deepseek-v3");
  const WorkloadProfile bf16 = load_workload_profile("deepseek-v3-bf16");
  const WorkloadProfile latency = load_workload_profile(kProfiles + "deepseek-v3-latency.yaml");
  EXPECT_EQ(bf16.dispatch.dtype, Dtype::bfloat16);
  EXPECT_EQ(bf16.dispatch.bytes_per_row, 14336);
  EXPECT_EQ(bf16.tokens_per_rank, base.tokens_per_rank);
  EXPECT_EQ(latency.tokens_per_rank, 128);
  EXPECT_EQ(latency.dispatch.bytes_per_row, 7392);
  for (const auto* p : {&bf16, &latency}) {
    EXPECT_EQ(p->hidden_size, base.hidden_size);
    EXPECT_EQ(p->num_routed_experts, base.num_routed_experts);
    EXPECT_EQ(p->top_k, base.top_k);
    EXPECT_EQ(p->routing.groups_per_token, base.routing.groups_per_token);
  }
}

TEST(WorkloadProfile, EveryShippedProfileLoadsAndBuildsAGenerator) {
  const auto names = list_workload_profiles();
  for (const char* expected : {"deepseek-v3", "deepseek-v3-bf16", "deepseek-v3-latency", "template"}) {
    EXPECT_NE(std::find(names.begin(), names.end(), expected), names.end()) << expected;
  }
  for (const auto& entry : std::filesystem::directory_iterator(kProfiles)) {
    if (entry.path().extension() != ".yaml") continue;
    SCOPED_TRACE(entry.path().string());
    const WorkloadProfile p = load_workload_profile(entry.path().string());
    EXPECT_EQ(p.name, entry.path().stem().string());
    EXPECT_EQ(p.dispatch.bytes_per_row, row_bytes(p.hidden_size, p.dispatch));
    // The profile's defaults make a valid generator on 8 ranks.
    EXPECT_NO_THROW(RoutingGenerator(routing_config(p, 8)));
  }
}

TEST(WorkloadProfile, RowBytes) {
  RowFormat fp8{Dtype::float8e4m3, 128, Dtype::float32, 0};
  EXPECT_EQ(row_bytes(7168, fp8), 7392);
  EXPECT_EQ(row_bytes(7000, fp8), 7000 + 55 * 4);  // ceil(7000 / 128) = 55 scales
  RowFormat bf16{Dtype::bfloat16, 0, Dtype::float32, 0};
  EXPECT_EQ(row_bytes(7168, bf16), 14336);
}

TEST(WorkloadProfile, ValidTextParses) {
  const WorkloadProfile p = parse_workload_profile(kValid, "small.yaml");
  EXPECT_EQ(p.dispatch.bytes_per_row, 1056);  // 1024 + 8 x 4
  EXPECT_EQ(p.combine.bytes_per_row, 2048);
  EXPECT_EQ(p.routing.popularity, Popularity::lognormal);
  EXPECT_DOUBLE_EQ(p.routing.sigma, 0.5);
  EXPECT_EQ(p.rows, RowConvention::dedup);  // default
}

TEST(WorkloadProfile, UnknownKeySuggestsClosest) {
  expect_rejected(replace(kValid, "  hidden_size: 1024", "  hiden_size: 1024"),
                  {"bad.yaml:3", "model.hiden_size", "did you mean 'hidden_size'"});
  expect_rejected(replace(kValid, "tokens_per_rank: 256", "tokens_per_rnak: 256"),
                  {"bad.yaml:13", "tokens_per_rnak", "did you mean 'tokens_per_rank'"});
  expect_rejected(replace(kValid, "  sigma: 0.5", "  sigmaa: 0.5"), {"bad.yaml:16", "routing.sigmaa", "'sigma'"});
}

TEST(WorkloadProfile, WrongTypes) {
  expect_rejected(replace(kValid, "top_k: 2", "top_k: two"), {"bad.yaml:5", "model.top_k", "integer", "two"});
  expect_rejected(replace(kValid, "top_k: 2", "top_k: [2, 3]"), {"bad.yaml:5", "model.top_k", "single value"});
  expect_rejected(replace(kValid, "  dtype: bfloat16", "  dtype: bf17"), {"bad.yaml:12", "combine.dtype", "bf17"});
  expect_rejected(replace(kValid, "sigma: 0.5", "sigma: high"), {"bad.yaml:16", "routing.sigma", "number"});
  expect_rejected(replace(kValid, "sigma: 0.5", "sigma: -1"), {"bad.yaml:16", "routing.sigma", "out of range"});
  expect_rejected(replace(kValid, "popularity: lognormal", "popularity: lognormal2"),
                  {"bad.yaml:15", "routing.popularity", "did you mean 'lognormal'"});
  expect_rejected(
      replace(kValid, "dispatch:\n  dtype: float8e4m3\n  scale_block: 128\n  bytes_per_row: 1056\n", "dispatch: fp8\n"),
      {"bad.yaml:7", "dispatch", "mapping"});
}

TEST(WorkloadProfile, MissingKeys) {
  expect_rejected(replace(kValid, "  hidden_size: 1024\n", ""), {"bad.yaml:3", "missing key 'model.hidden_size'"});
  expect_rejected(replace(kValid, "tokens_per_rank: 256\n", ""), {"bad.yaml", "missing key 'tokens_per_rank'"});
  expect_rejected(replace(kValid, "name: small\n", ""), {"missing key 'name'"});
  expect_rejected(replace(kValid, "  top_k: 2", "  top_k:"), {"bad.yaml:5", "model.top_k", "missing value"});
}

TEST(WorkloadProfile, BadUnitsAndInconsistentSizes) {
  expect_rejected(replace(kValid, "bytes_per_row: 1056", "bytes_per_row: 1056QB"),
                  {"bad.yaml:10", "dispatch.bytes_per_row", "QB"});
  expect_rejected(replace(kValid, "bytes_per_row: 1056", "bytes_per_row: 1024"),
                  {"bad.yaml:10", "dispatch.bytes_per_row", "1056 B"});
  EXPECT_EQ(parse_workload_profile(replace(kValid, "bytes_per_row: 1056", "bytes_per_row: 1056B"), "x")
                .dispatch.bytes_per_row,
            1056);
}

TEST(WorkloadProfile, CrossChecks) {
  expect_rejected(replace(kValid, "top_k: 2", "top_k: 17"), {"bad.yaml:5", "top_k 17 exceeds"});
  expect_rejected(replace(kValid, "num_expert_groups: 4", "num_expert_groups: 3"), {"bad.yaml:6", "equal groups"});
  expect_rejected(replace(kValid, "groups_per_token: 2", "groups_per_token: 5"),
                  {"bad.yaml:17", "routing.groups_per_token", "exceeds"});
  // One group of 16 / 4 = 4 experts cannot hold top-6.
  expect_rejected(replace(replace(kValid, "top_k: 2", "top_k: 6"), "groups_per_token: 2", "groups_per_token: 1"),
                  {"bad.yaml:17", "fewer than top_k"});
  expect_rejected(replace(kValid, "  sigma: 0.5\n", "  sigma: 0.5\n  imbalance: 1.2\n"), {"bad.yaml:17", "not both"});
  expect_rejected(replace(kValid, "  sigma: 0.5\n", "  zipf_s: 1.1\n"), {"routing.zipf_s", "popularity 'zipf'"});
  expect_rejected(replace(kValid, "  sigma: 0.5\n", "  min_tokens: 10\n"), {"routing.tokens", "uniform"});
  expect_rejected("- just\n- a list\n", {"bad.yaml", "mapping"});
  expect_rejected("name: [unclosed\n", {"bad.yaml:", "invalid YAML"});
}

TEST(WorkloadProfile, RoutingSettingsApplyAndImplyLognormal) {
  RoutingSettings s;
  apply_routing_setting(s, "imbalance", "1.25", "flag --imbalance");
  EXPECT_EQ(s.popularity, Popularity::lognormal);
  ASSERT_TRUE(s.imbalance.has_value());
  EXPECT_DOUBLE_EQ(*s.imbalance, 1.25);
  apply_routing_setting(s, "sigma", "0.3", "flag --sigma");
  EXPECT_FALSE(s.imbalance.has_value());  // an explicit sigma replaces the target
  apply_routing_setting(s, "seed", "0x2A", "x");
  EXPECT_EQ(s.seed, 42u);
  apply_routing_setting(s, "tokens", "linear", "x");
  EXPECT_EQ(s.tokens, TokenDistribution::linear);
  try {
    apply_routing_setting(s, "imbalanse", "1.2", "sweep.yaml:7: key 'routing.imbalanse'");
    FAIL();
  } catch (const InputError& e) {
    const std::string msg = e.what();
    EXPECT_NE(msg.find("sweep.yaml:7"), std::string::npos);
    EXPECT_NE(msg.find("did you mean 'imbalance'"), std::string::npos);
  }
  EXPECT_THROW(apply_routing_setting(s, "imbalance", "0.9", "x"), InputError);
  EXPECT_THROW(apply_routing_setting(s, "ep_size", "-4", "x"), InputError);
}

TEST(WorkloadProfile, NamesResolveThroughProfileDirAndMustMatchFile) {
  const auto dir = std::filesystem::temp_directory_path() / ("collbench-wl-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir / "workloads");
  {
    std::ofstream(dir / "workloads" / "small.yaml") << kValid;
    std::ofstream(dir / "workloads" / "renamed.yaml") << kValid;  // name: small in renamed.yaml
  }
  ASSERT_EQ(::setenv("COLLBENCH_PROFILE_DIR", dir.c_str(), 1), 0);
  EXPECT_EQ(load_workload_profile("small").hidden_size, 1024);
  const auto names = list_workload_profiles();
  EXPECT_NE(std::find(names.begin(), names.end(), "small"), names.end());
  EXPECT_NE(std::find(names.begin(), names.end(), "deepseek-v3"), names.end());  // source tree still searched
  try {
    load_workload_profile("renamed");
    ADD_FAILURE();
  } catch (const InputError& e) {
    const std::string msg = e.what();
    EXPECT_NE(msg.find("renamed.yaml:1"), std::string::npos) << msg;
    EXPECT_NE(msg.find("'name'"), std::string::npos) << msg;
  }
  try {
    load_workload_profile("deepseek-v4");
    ADD_FAILURE();
  } catch (const InputError& e) {
    const std::string msg = e.what();
    EXPECT_NE(msg.find("did you mean 'deepseek-v3'"), std::string::npos) << msg;
  }
  ::unsetenv("COLLBENCH_PROFILE_DIR");
  std::filesystem::remove_all(dir);
  EXPECT_THROW(load_workload_profile("/nonexistent/dir/x.yaml"), InputError);
}
