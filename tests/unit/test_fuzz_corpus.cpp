// Replays the fuzz corpora through the parsers in the normal build: every file under
// tests/fuzz/corpus/<target>/ (seeds and the inputs that once crashed a parser) and the
// repository's own files that seed the fuzzers must be accepted or refused with an InputError,
// nothing else. A deterministic stand-in for scripts/fuzz in CI (docs/testing.md). Pure C++.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "../fuzz/fuzz_targets.hpp"

namespace fs = std::filesystem;

namespace {

std::string slurp(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

std::vector<fs::path> files_under(const fs::path& dir) {
  std::vector<fs::path> out;
  if (!fs::is_directory(dir)) return out;
  for (const auto& e : fs::recursive_directory_iterator(dir)) {
    if (e.is_regular_file()) out.push_back(e.path());
  }
  std::sort(out.begin(), out.end());
  return out;
}

// The repository folders scripts/fuzz adds as seeds, per target.
const std::map<std::string, std::string> kRepoSeeds{{"sweep", "profiles/sweeps"},
                                                    {"system_profile", "profiles/systems"},
                                                    {"workload_profile", "profiles/workloads"},
                                                    {"results", "results/baselines"},
                                                    {"nccl_tests", "tests/data/nccl-tests"},
                                                    {"acceptance", "profiles/acceptance"}};

class FuzzCorpus : public ::testing::TestWithParam<collbench::fuzz::Target> {};

TEST_P(FuzzCorpus, EveryInputIsAcceptedOrRefusedWithAnInputError) {
  const auto target = GetParam();
  const fs::path src = COLLBENCH_SOURCE_DIR;
  auto inputs = files_under(src / "tests/fuzz/corpus" / target.name);
  ASSERT_FALSE(inputs.empty()) << "no corpus for " << target.name;
  if (const auto it = kRepoSeeds.find(target.name); it != kRepoSeeds.end()) {
    for (auto& p : files_under(src / it->second)) inputs.push_back(p);
  }
  for (const auto& p : inputs) {
    SCOPED_TRACE(p.string());
    const std::string data = slurp(p);
    EXPECT_NO_THROW(target.run(data));
    // Every prefix of a small input too: cut files are the commonest bad input there is.
    if (data.size() <= 2048) {
      for (std::size_t n = 0; n < data.size(); n += 7) EXPECT_NO_THROW(target.run(std::string_view(data).substr(0, n)));
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Targets, FuzzCorpus, ::testing::ValuesIn(collbench::fuzz::kTargets),
                         [](const auto& param_info) { return std::string(param_info.param.name); });

}  // namespace
