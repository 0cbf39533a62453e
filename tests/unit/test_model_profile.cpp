// System profiles: every shipped profile loads with the figures of docs/hardware-context.md section 2, names
// resolve through the search path and the user config folder, and each class of bad profile is
// rejected with a message naming the file, the line and the key.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <optional>
#include <string>

#include "collbench/core/error.hpp"
#include "collbench/model/system_profile.hpp"

using namespace collbench;
using namespace collbench::model;
namespace fs = std::filesystem;

namespace {

const std::string kSystemsDir = std::string(COLLBENCH_SOURCE_DIR) + "/profiles/systems";

// A fresh directory under the system temp dir, removed when the test ends.
class TempDir {
 public:
  TempDir() {
    static int counter = 0;
    path_ = fs::temp_directory_path() /
            ("collbench-model-test-" + std::to_string(::getpid()) + "-" + std::to_string(counter++));
    fs::create_directories(path_);
  }
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(path_, ec);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;

  std::string write(const std::string& relative, const std::string& text) const {
    const fs::path p = path_ / relative;
    fs::create_directories(p.parent_path());
    std::ofstream(p, std::ios::binary) << text;
    return p.string();
  }
  [[nodiscard]] std::string str() const { return path_.string(); }

 private:
  fs::path path_;
};

// Sets an environment variable for the scope of a test, restoring the previous value.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, const std::optional<std::string>& value) : name_(name) {
    if (const char* old = std::getenv(name)) old_ = old;
    if (value) {
      ::setenv(name, value->c_str(), 1);
    } else {
      ::unsetenv(name);
    }
  }
  ~ScopedEnv() {
    if (old_) {
      ::setenv(name_, old_->c_str(), 1);
    } else {
      ::unsetenv(name_);
    }
  }
  ScopedEnv(const ScopedEnv&) = delete;
  ScopedEnv& operator=(const ScopedEnv&) = delete;

 private:
  const char* name_;
  std::optional<std::string> old_;
};

// A valid profile; the bad-profile tests change one thing each.
const std::string kValid = R"(name: test-system
kind: gpu
scale_up:
  domain_size: 8
  bandwidth: 900GB/s bidirectional
  hop_latency: 0.6us
scale_out:
  nics_per_gpu: 1
  nic_bandwidth: 400Gb/s
  hop_latency: 2.7us
  fabric: rail-optimized
in_switch:
  supported: true
  dtypes: [float32, bfloat16]
  latency: 25us
  tree_hop_latency: 20.9us
efficiency:
  scale_up: 0.8
  scale_out: 0.95
sources:
  - a unit test
)";

std::string replaced(std::string text, const std::string& from, const std::string& to) {
  const auto at = text.find(from);
  EXPECT_NE(at, std::string::npos) << from;
  if (at != std::string::npos) text.replace(at, from.size(), to);
  return text;
}

// The 1-based line of the first occurrence of `needle`.
int line_of(const std::string& text, const std::string& needle) {
  const auto at = text.find(needle);
  EXPECT_NE(at, std::string::npos) << needle;
  return 1 + static_cast<int>(std::count(text.begin(), text.begin() + static_cast<std::ptrdiff_t>(at), '\n'));
}

// Loads `text` from a file and returns the InputError message (empty if it loaded).
std::string load_error(const std::string& text) {
  TempDir dir;
  const std::string path = dir.write("bad.yaml", text);
  try {
    load_system_profile(path);
  } catch (const InputError& e) {
    EXPECT_EQ(e.code(), ExitCode::bad_input);
    const std::string msg = e.what();
    EXPECT_NE(msg.find(path), std::string::npos) << "message does not name the file: " << msg;
    return msg;
  }
  ADD_FAILURE() << "profile loaded but should have been rejected:\n" << text;
  return {};
}

void expect_contains(const std::string& msg, const std::string& part) {
  EXPECT_NE(msg.find(part), std::string::npos) << "'" << part << "' not in: " << msg;
}

}  // namespace

// ---- shipped profiles ---------------------------------------------------------------------------

TEST(SystemProfile, EveryShippedProfileLoads) {
  int count = 0;
  for (const auto& entry : fs::directory_iterator(kSystemsDir)) {
    if (entry.path().extension() != ".yaml") continue;
    const SystemProfile p = load_system_profile(entry.path().string());
    EXPECT_EQ(p.name, entry.path().stem().string());
    EXPECT_EQ(p.kind, "gpu");
    EXPECT_GT(p.scale_up.domain_size, 0);
    EXPECT_FALSE(p.sources.empty());
    EXPECT_EQ(p.digest.size(), 16u);
    EXPECT_EQ(p.path, entry.path().string());
    ++count;
  }
  EXPECT_EQ(count, 7);  // gb300/gb200-nvl72, h100/h200/h800/b200-hgx, b200-hgx-sharp
}

TEST(SystemProfile, Gb300Figures) {
  const SystemProfile p = load_system_profile(kSystemsDir + "/gb300-nvl72.yaml");
  EXPECT_EQ(p.scale_up.domain_size, 72);
  EXPECT_DOUBLE_EQ(p.scale_up.bytes_per_s, 900e9);       // 1.8 TB/s bidirectional
  EXPECT_DOUBLE_EQ(p.scale_out.nic_bytes_per_s, 100e9);  // 800 Gb/s
  EXPECT_DOUBLE_EQ(p.scale_out.per_gpu_bytes_per_s(), 100e9);
  EXPECT_DOUBLE_EQ(p.scale_up.hop_latency_s, 0.6e-6);
  EXPECT_TRUE(p.in_switch.reduces(Dtype::bfloat16));
  EXPECT_FALSE(p.in_switch.reduces(Dtype::float8e4m3));
  ASSERT_TRUE(p.in_switch.reduction_cap.has_value());
  // 770 GB/s busbw at 72 GPUs = 770 x 72/142 = 390.42 GB/s algbw per GPU.
  EXPECT_NEAR(p.in_switch.reduction_cap->algbw_bytes_per_s(), 770e9 * 72 / 142, 1.0);
  EXPECT_DOUBLE_EQ(p.efficiency.scale_out, 0.96);
}

TEST(SystemProfile, HgxAndGb200Figures) {
  const SystemProfile h100 = load_system_profile(kSystemsDir + "/h100-hgx.yaml");
  EXPECT_EQ(h100.scale_up.domain_size, 8);
  EXPECT_DOUBLE_EQ(h100.scale_up.bytes_per_s, 450e9);
  EXPECT_DOUBLE_EQ(h100.scale_out.nic_bytes_per_s, 50e9);
  EXPECT_FALSE(h100.in_switch.reduction_cap.has_value());
  const SystemProfile gb200 = load_system_profile(kSystemsDir + "/gb200-nvl72.yaml");
  EXPECT_DOUBLE_EQ(gb200.scale_out.nic_bytes_per_s, 50e9);  // ConnectX-7 400 Gb/s
}

// The step model's compute figures are the cited measurements over the cited peaks (docs/step.md):
// cuDNN SDPA, DeepSeek-V3 shape, s 4096, causal, BF16 (NVIDIA/cudnn-frontend benchmark results,
// 2026-07-24, cuDNN 9.26): GB300 1,693 / 1,157 TFLOP/s forward / backward, GB200 1,456 / 1,096; the MXFP8 grouped
// GEMM measured on GB200, 2,672 TFLOP/s; peaks 2,500 BF16 and 5,000 FP8 (product pages).
TEST(SystemProfile, ComputeFiguresAreTheCitedMeasurements) {
  struct Cited {
    const char* file;
    double fwd, bwd;
  };
  for (const Cited& c : {Cited{"gb300-nvl72.yaml", 1693, 1157}, Cited{"gb200-nvl72.yaml", 1456, 1096}}) {
    const SystemProfile p = load_system_profile(kSystemsDir + "/" + c.file);
    ASSERT_TRUE(p.compute.has_value()) << c.file;
    EXPECT_DOUBLE_EQ(p.compute->peak_bf16_flops, 2500e12) << c.file;
    EXPECT_DOUBLE_EQ(p.compute->peak_fp8_flops, 5000e12) << c.file;
    EXPECT_NEAR(p.compute->gemm_efficiency, 2672.0 / 5000, 5e-4) << c.file;
    EXPECT_DOUBLE_EQ(p.compute->attention_efficiency, c.fwd / 2500) << c.file;
    EXPECT_DOUBLE_EQ(p.compute->attention_backward_efficiency, c.bwd / 2500) << c.file;
  }
}

TEST(SystemProfileErrors, AttentionBackwardEfficiencyIsAFraction) {
  const std::string base = "attention_efficiency: 0.25}";
  const std::string with = "attention_efficiency: 0.25, attention_backward_efficiency: 1.5}";
  const std::string text = std::string(kValid) +
                           "compute: {peak_dense_bf16_tflops: 1, peak_dense_fp8_tflops: 2, gemm_efficiency: 0.5, " +
                           base + "\n";
  EXPECT_DOUBLE_EQ(parse_system_profile(text, "x").compute->attention_backward_efficiency, 0.0);  // absent: forward's
  const std::string msg = load_error(replaced(text, base, with));
  expect_contains(msg, "key 'compute.attention_backward_efficiency': must be in [");
}

TEST(SystemProfile, DigestIsFnv1aOfTheBytes) {
  EXPECT_EQ(fnv1a64_hex(""), "cbf29ce484222325");  // FNV-1a 64 offset basis
  EXPECT_EQ(fnv1a64_hex("a"), "af63dc4c8601ec8c");
  EXPECT_NE(parse_system_profile(kValid, "x").digest, parse_system_profile(kValid + "\n", "x").digest);
}

TEST(SystemProfile, ListsAndResolvesNames) {
  const auto names = list_system_profiles();
  for (const char* name :
       {"gb300-nvl72", "gb200-nvl72", "h100-hgx", "h200-hgx", "h800-hgx", "b200-hgx", "b200-hgx-sharp"}) {
    EXPECT_NE(std::find(names.begin(), names.end(), name), names.end()) << name;
  }
  EXPECT_EQ(load_system_profile("h200-hgx").name, "h200-hgx");
}

TEST(SystemProfile, ProfileDirFromEnvironmentComesFirst) {
  TempDir dir;
  dir.write("systems/h100-hgx.yaml", replaced(kValid, "name: test-system", "name: h100-hgx-override"));
  const ScopedEnv env("COLLBENCH_PROFILE_DIR", dir.str());
  EXPECT_EQ(load_system_profile("h100-hgx").name, "h100-hgx-override");
}

TEST(SystemProfile, UnknownNameSuggestsTheClosest) {
  try {
    load_system_profile("gb300-nvl27");
    FAIL();
  } catch (const InputError& e) {
    const std::string msg = e.what();
    expect_contains(msg, "unknown system profile 'gb300-nvl27'");
    expect_contains(msg, "did you mean 'gb300-nvl72'");
    expect_contains(msg, "h100-hgx");
  }
}

TEST(SystemProfile, CpuLocalLivesInTheUserConfigFolder) {
  TempDir dir;
  const ScopedEnv xdg("XDG_CONFIG_HOME", dir.str());
  EXPECT_EQ(cpu_local_profile_path(), dir.str() + "/collbench/cpu-local.yaml");
  try {
    load_system_profile("cpu-local");
    FAIL();
  } catch (const InputError& e) {
    expect_contains(e.what(), "not calibrated");
    expect_contains(e.what(), "collbench calibrate");
  }
  const auto before = list_system_profiles();
  EXPECT_EQ(std::find(before.begin(), before.end(), "cpu-local"), before.end());
  dir.write("collbench/cpu-local.yaml", R"(name: cpu-local
kind: cpu
scale_up: {bandwidth: 12GB/s per-direction, hop_latency: 0.5us}
scale_out: {nics_per_gpu: 1, nic_bandwidth: 12GB/s per-direction, hop_latency: 0.5us, fabric: shared-memory}
efficiency: {scale_up: 1, scale_out: 1}
calibrated: {date: 2025-01-01T00:00:00Z, host: h, ranks: 2, repetitions: 3, margin: 0.05}
sources: [collbench calibrate]
)");
  const SystemProfile p = load_system_profile("cpu-local");
  EXPECT_TRUE(p.is_cpu());
  EXPECT_EQ(p.scale_up.domain_size, 0);  // simulated on CPU
  ASSERT_TRUE(p.calibrated.has_value());
  EXPECT_DOUBLE_EQ(p.calibrated->margin, 0.05);
  const auto after = list_system_profiles();
  EXPECT_NE(std::find(after.begin(), after.end(), "cpu-local"), after.end());
}

TEST(SystemProfile, HomeConfigIsTheDefault) {
  const ScopedEnv xdg("XDG_CONFIG_HOME", std::nullopt);
  const ScopedEnv home("HOME", std::string("/home/someone"));
  EXPECT_EQ(cpu_local_profile_path(), "/home/someone/.config/collbench/cpu-local.yaml");
}

TEST(SystemProfile, MissingFileIsAnInputError) {
  EXPECT_THROW(load_system_profile("/nonexistent/dir/x.yaml"), InputError);
}

// ---- bad profiles: one class each ----------------------------------------------------------------

TEST(SystemProfileErrors, UnknownKeySuggestsTheClosest) {
  const std::string text = replaced(kValid, "  bandwidth: 900GB/s", "  bandwdith: 900GB/s");
  const std::string msg = load_error(text);
  expect_contains(msg, ":" + std::to_string(line_of(text, "bandwdith")) + ":");
  expect_contains(msg, "key 'scale_up.bandwdith': unknown key");
  expect_contains(msg, "did you mean 'bandwidth'");
}

TEST(SystemProfileErrors, UnknownTopLevelKey) {
  const std::string msg = load_error(kValid + "efficency: 3\n");
  expect_contains(msg, "key 'efficency': unknown key");
  expect_contains(msg, "did you mean 'efficiency'");
}

TEST(SystemProfileErrors, WrongType) {
  const std::string text = replaced(kValid, "domain_size: 8", "domain_size: eight");
  const std::string msg = load_error(text);
  expect_contains(msg, ":" + std::to_string(line_of(text, "domain_size")) + ":");
  expect_contains(msg, "key 'scale_up.domain_size': expected an integer, got 'eight'");
}

TEST(SystemProfileErrors, MapWhereScalarExpected) {
  const std::string msg = load_error(replaced(kValid, "hop_latency: 2.7us", "hop_latency: {value: 2.7us}"));
  expect_contains(msg, "key 'scale_out.hop_latency': expected a duration");
  expect_contains(msg, "got a mapping");
}

TEST(SystemProfileErrors, MissingRequiredKey) {
  const std::string msg = load_error(replaced(kValid, "  hop_latency: 0.6us\n", ""));
  expect_contains(msg, "key 'scale_up.hop_latency': missing required key in 'scale_up'");
  const std::string top = load_error(replaced(kValid, "kind: gpu\n", ""));
  expect_contains(top, "key 'kind': missing required key");
}

TEST(SystemProfileErrors, UnitTypo) {
  const std::string text = replaced(kValid, "nic_bandwidth: 400Gb/s", "nic_bandwidth: 400Gb/z");
  const std::string msg = load_error(text);
  expect_contains(msg, ":" + std::to_string(line_of(text, "nic_bandwidth")) + ":");
  expect_contains(msg, "key 'scale_out.nic_bandwidth'");
  expect_contains(msg, "unknown unit 'Gb/z'");
  const std::string duration = load_error(replaced(kValid, "latency: 25us", "latency: 25usec"));
  expect_contains(duration, "key 'in_switch.latency'");
  expect_contains(duration, "unknown unit 'usec'");
}

TEST(SystemProfileErrors, ScaleUpBandwidthMustNameItsDirection) {
  const std::string msg = load_error(replaced(kValid, "900GB/s bidirectional", "900GB/s"));
  expect_contains(msg, "key 'scale_up.bandwidth'");
  expect_contains(msg, "names no direction");
}

TEST(SystemProfileErrors, ValueOutOfRange) {
  const std::string msg = load_error(replaced(kValid, "scale_up: 0.8", "scale_up: 1.2"));
  expect_contains(msg, "key 'efficiency.scale_up': must be in [");
  const std::string zero = load_error(replaced(kValid, "nics_per_gpu: 1", "nics_per_gpu: 0"));
  expect_contains(zero, "key 'scale_out.nics_per_gpu': must be at least 1");
}

TEST(SystemProfileErrors, UnknownNamesInLists) {
  const std::string msg = load_error(replaced(kValid, "[float32, bfloat16]", "[float32, bfloat15]"));
  expect_contains(msg, "key 'in_switch.dtypes[1]'");
  expect_contains(msg, "unknown dtype 'bfloat15'");
  expect_contains(msg, "did you mean 'bfloat16'");
  const std::string fabric = load_error(replaced(kValid, "fabric: rail-optimized", "fabric: rail-optimised"));
  expect_contains(fabric, "key 'scale_out.fabric'");
  expect_contains(fabric, "did you mean 'rail-optimized'");
  const std::string kind = load_error(replaced(kValid, "kind: gpu", "kind: gpus"));
  expect_contains(kind, "key 'kind'");
  expect_contains(kind, "did you mean 'gpu'");
}

TEST(SystemProfileErrors, NotYaml) {
  const std::string text = replaced(kValid, "  latency: 25us", "  latency: [25us");
  const std::string msg = load_error(text);
  expect_contains(msg, "not valid YAML");
}

TEST(SystemProfileErrors, DuplicateEmptyAndShapeless) {
  expect_contains(load_error(kValid + "name: again\n"), "key 'name': given twice (first on line 1); keep one");
  expect_contains(load_error(""), "empty system profile");
  expect_contains(load_error("- a\n- b\n"), "expected a mapping of keys");
  expect_contains(load_error(replaced(kValid, "  - a unit test\n", "  []\n")), "key 'sources'");
  expect_contains(load_error(replaced(kValid, "hop_latency: 0.6us", "hop_latency:")),
                  "key 'scale_up.hop_latency': has no value");
  expect_contains(load_error(replaced(kValid, "supported: true", "supported: yes")),
                  "key 'in_switch.supported': expected true or false");
}

TEST(SystemProfileErrors, GpuProfilesNeedADomainSize) {
  const std::string msg = load_error(replaced(kValid, "  domain_size: 8\n", ""));
  expect_contains(msg, "key 'scale_up.domain_size': missing required key");
}

TEST(SystemProfile, Gb200SwitchCapFromTheFullRackMeasurement) {
  // CoreWeave's full-rack all_reduce_perf (72 GPUs, 8 GiB, out-of-place): busbw 834.57 GB/s,
  // rounded to 835 GB/s; per-GPU algbw 835 x 72/142 = 423.38 GB/s (the log printed 423.16).
  const auto p = load_system_profile("gb200-nvl72");
  ASSERT_TRUE(p.in_switch.reduction_cap.has_value());
  EXPECT_DOUBLE_EQ(p.in_switch.reduction_cap->busbw_bytes_per_s, 835e9);
  EXPECT_EQ(p.in_switch.reduction_cap->num_ranks, 72);
  EXPECT_NEAR(p.in_switch.reduction_cap->algbw_bytes_per_s() / 1e9, 423.38, 0.01);
}
