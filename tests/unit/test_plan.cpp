// Plan expansion: size series and sweep files (cross product in file order, validation).
#include <gtest/gtest.h>

#include "collbench/core/error.hpp"
#include "collbench/plan/sweep.hpp"

using namespace collbench;
using namespace collbench::plan;

TEST(SizeSeries, GeometricLikeNcclTests) {
  EXPECT_EQ(size_series(8, 128, 2, 0), (std::vector<std::uint64_t>{8, 16, 32, 64, 128}));
  EXPECT_EQ(size_series(1024, 16 << 20, 4, 0).size(), 8u);  // 1K,4K,...,16M
  EXPECT_EQ(size_series(8, 100, 2, 0).back(), 64u);         // never past max
  EXPECT_EQ(size_series(5, 5, 1, 0), (std::vector<std::uint64_t>{5}));
}

TEST(SizeSeries, Arithmetic) {
  EXPECT_EQ(size_series(0, 30, 2, 10), (std::vector<std::uint64_t>{0, 10, 20, 30}));
}

TEST(SizeSeries, Rejections) {
  try {
    size_series(128, 8, 2, 0);
    FAIL();
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("-b"), std::string::npos);
    EXPECT_NE(std::string(e.what()).find("-e"), std::string::npos);
  }
  EXPECT_THROW(size_series(8, 128, 1.0, 0), InputError);
  EXPECT_THROW(size_series(0, 128, 2.0, 0), InputError);
}

TEST(Sweep, ExpandsCrossProductInFileOrder) {
  const auto s = parse_sweep(R"(
name: t
system: cpu-local
defaults: {backend: mpi, dtype: float32, timing: isolated, max_noise: 0.02, max_time: 500ms}
cases:
  - collective: allreduce
    algo: [auto, flat]
    bytes: {min: 1K, max: 16K, factor: 4}
    scope: [domain, global]
  - collective: alltoall
    bytes: [8, 4K]
    dtype: bfloat16
)",
                             "t.yaml");
  EXPECT_EQ(s.name, "t");
  EXPECT_EQ(s.system.value(), "cpu-local");
  ASSERT_EQ(s.cases.size(), 2u * 3u * 2u + 2u);
  // first key slowest: algo, then bytes, then scope
  EXPECT_EQ(s.cases[0].algo, "auto");
  EXPECT_EQ(s.cases[0].bytes, 1024u);
  EXPECT_EQ(s.cases[0].scope, Scope::domain);
  EXPECT_EQ(s.cases[1].scope, Scope::global);
  EXPECT_EQ(s.cases[2].bytes, 4096u);
  EXPECT_EQ(s.cases[6].algo, "flat");
  EXPECT_DOUBLE_EQ(s.cases[0].stop.max_noise, 0.02);
  EXPECT_DOUBLE_EQ(s.cases[0].stop.max_time_s, 0.5);
  EXPECT_EQ(s.cases[12].collective, "alltoall");
  EXPECT_EQ(s.cases[12].dtype, Dtype::bfloat16);
  EXPECT_EQ(s.cases[13].bytes, 4096u);
}

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

TEST(Sweep, UnknownKeySuggestsClosest) {
  const auto m = error_of("name: x\ncases:\n  - collective: allreduce\n    bytez: 8\n");
  EXPECT_NE(m.find("bad.yaml:4"), std::string::npos) << m;
  EXPECT_NE(m.find("'bytez'"), std::string::npos) << m;
  EXPECT_NE(m.find("did you mean 'bytes'"), std::string::npos) << m;
}

TEST(Sweep, BadValuesNameFileLineAndKey) {
  auto m = error_of("name: x\ncases:\n  - collective: allreduce\n    bytes: 12QB\n");
  EXPECT_NE(m.find("bad.yaml:4: key 'bytes'"), std::string::npos) << m;
  EXPECT_NE(m.find("12QB"), std::string::npos) << m;
  m = error_of("name: x\ncases:\n  - collective: allreduce\n    bytes: 8\n    dtype: [float32, flaot64]\n");
  EXPECT_NE(m.find("flaot64"), std::string::npos) << m;
  EXPECT_NE(m.find("did you mean 'float64'"), std::string::npos) << m;
  m = error_of("name: x\ndefaults: {max_noise: 5}\ncases:\n  - {collective: allreduce, bytes: 8}\n");
  EXPECT_NE(m.find("max_noise"), std::string::npos) << m;
  m = error_of("name: x\ncases: []\n");
  EXPECT_NE(m.find("non-empty list"), std::string::npos) << m;
  m = error_of("cases:\n  - {collective: allreduce, bytes: 8}\n");
  EXPECT_NE(m.find("missing required key 'name'"), std::string::npos) << m;
  m = error_of("name: x\ncases:\n  - {collective: allreduce, bytes: {min: 1K, max: 8}}\n");
  EXPECT_NE(m.find("larger than maximum"), std::string::npos) << m;
  m = error_of("name: [x\n");
  EXPECT_NE(m.find("invalid YAML"), std::string::npos) << m;
  m = error_of("name: x\nsytem: a\ncases:\n  - {collective: allreduce, bytes: 8}\n");
  EXPECT_NE(m.find("did you mean 'system'"), std::string::npos) << m;
}

TEST(Sweep, ShippedSweepsLoad) {
  for (const char* name : {"cpu-smoke.yaml", "cpu-default.yaml"}) {
    const auto s = load_sweep_file(std::string(COLLBENCH_SOURCE_DIR) + "/profiles/sweeps/" + name);
    EXPECT_FALSE(s.cases.empty()) << name;
  }
}
