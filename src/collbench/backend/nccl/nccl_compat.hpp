// What runs where the machine is older than the build, in plain C++ so that the CPU unit tests
// (tests/unit/test_nccl_compat.cpp) check it in every build (docs/nccl-backend.md, "Older NCCL";
// docs/install.md, "CUDA 12"):
//   - an NVIDIA driver too old for the CUDA runtime collbench carries: the message names the
//     driver found and the runtime and driver needed;
//   - an NCCL older than the headers collbench was built against (NCCL is opened with dlopen,
//     nccl_api.hpp): the features it lacks, and the waiver each case that needs one gets, so the
//     rest of a sweep runs.
#pragma once

#include <fmt/format.h>

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "collbench/backend/nccl/nccl_host.hpp"
#include "collbench/backend/nccl/nvls_host.hpp"

namespace collbench::backend::nccl {

// ---- the driver ---------------------------------------------------------------------------------

// The oldest Linux driver that runs a CUDA runtime of this major version (NVIDIA's CUDA
// compatibility guide, minor-version compatibility: 12.x from 525.60.13, 13.x from 580.65.06).
struct DriverFloor {
  int cuda_major;
  std::string_view driver;  // the first driver of that major's branch
  std::string_view branch;  // "R525"
};

inline const std::vector<DriverFloor>& driver_floors() {
  static const std::vector<DriverFloor> kFloors{{12, "525.60.13", "R525"}, {13, "580.65.06", "R580"}};
  return kFloors;
}

// The driver's own version from /proc/driver/nvidia/version: the first dotted number after
// "Kernel Module" on the NVRM line ("NVRM version: NVIDIA UNIX x86_64 Kernel Module  535.104.05
// Sat Aug 19 ...", or "... Open Kernel Module for x86_64  580.65.06  Release Build ..."); "" when
// there is none.
inline std::string parse_nvrm_version(std::string_view text) {
  const auto at = text.find("Kernel Module");
  if (at == std::string_view::npos) return {};
  std::string_view rest = text.substr(at, text.find('\n', at) - at);
  const auto is_digit = [](char c) { return c >= '0' && c <= '9'; };
  for (std::size_t i = 0; i < rest.size(); ++i) {
    if (!is_digit(rest[i]) || (i > 0 && rest[i - 1] != ' ' && rest[i - 1] != '\t')) continue;
    std::size_t n = i;
    while (n < rest.size() && (is_digit(rest[n]) || rest[n] == '.')) ++n;
    const std::string_view token = rest.substr(i, n - i);
    if (token.find('.') != std::string_view::npos) return std::string(token);
    i = n;
  }
  return {};
}

// The message for cudaErrorInsufficientDriver. `driver_cuda`: cudaDriverGetVersion (the newest
// CUDA the driver runs; 0 when no driver could be loaded); `runtime_cuda`: cudaRuntimeGetVersion
// (the runtime collbench carries, linked statically); `driver_release`: parse_nvrm_version of
// /proc/driver/nvidia/version ("" when unreadable).
inline std::string insufficient_driver_text(int driver_cuda, int runtime_cuda, std::string_view driver_release) {
  std::string found;
  if (driver_cuda <= 0) {
    found = driver_release.empty() ? std::string("no NVIDIA driver was found (libcuda.so.1 could not be loaded)")
                                   : fmt::format("the NVIDIA driver {} could not be used", driver_release);
  } else {
    found = fmt::format("the NVIDIA driver {}runs CUDA up to {}",
                        driver_release.empty() ? std::string() : std::string(driver_release) + " ",
                        format_cuda_version(driver_cuda));
  }
  const int major = runtime_cuda / 1000;
  std::string needed = fmt::format("a driver for CUDA {}.x", major);
  for (const auto& f : driver_floors()) {
    if (f.cuda_major == major) needed = fmt::format("driver {} or newer ({} branch)", f.driver, f.branch);
  }
  std::string remedy = "update the driver";
  if (major >= 13) remedy += ", or use a CUDA 12 build of collbench (cmake --preset cuda12, docs/install.md)";
  return fmt::format("{}; this collbench carries the CUDA {} runtime, which needs {}: {}", found,
                     format_cuda_version(runtime_cuda), needed, remedy);
}

// ---- NCCL older than the headers ------------------------------------------------------------------

// One NCCL feature collbench uses that is newer than the oldest NCCL it runs with (2.21).
struct NcclFeature {
  std::string_view name;
  int since;                 // nccl_version_code of the first release with it
  std::string_view symbols;  // the entry points or settings it comes with
  std::string_view without;  // what collbench does on an older NCCL
};

inline const std::vector<NcclFeature>& nccl_features() {
  static const std::vector<NcclFeature> kFeatures{
      {"the PAT algorithm", nccl_version_code(2, 23, 0), "NCCL_ALGO=pat", "--algo pat cases are waived"},
      {"fp8 types", kNcclFp8Version, "ncclFloat8e4m3, ncclFloat8e5m2", "float8e4m3 and float8e5m2 cases are waived"},
      {"per-collective NCCL_ALGO", kNcclPerFunctionAlgoVersion, "NCCL_ALGO=allreduce:tree",
       "a forced --algo is set for every collective (NCCL_ALGO=tree)"},
      {"symmetric windows", kNcclWindowVersion, "ncclCommWindowRegister, ncclCommWindowDeregister",
       "--buffers symmetric, --algo symmetric and --algo cb-multimem cases are waived"},
      {"ncclAlltoAll", kNcclAlltoAllVersion, "ncclAlltoAll", "all-to-all runs as grouped ncclSend/ncclRecv"},
      {"the device API", kNcclDeviceApiVersion, "ncclDevCommCreate, ncclTeamLsa",
       "--algo cb-multimem cases are waived"},
  };
  return kFeatures;
}

// The features an NCCL of `runtime_version` lacks, in nccl_features() order.
inline std::vector<NcclFeature> nccl_features_missing(int runtime_version) {
  std::vector<NcclFeature> out;
  for (const auto& f : nccl_features()) {
    if (runtime_version < f.since) out.push_back(f);
  }
  return out;
}

// "<feature> needs NCCL >= X.Y (<symbols>); the loaded libnccl is A.B.C", or nullopt when the
// loaded NCCL has `feature` (a name of nccl_features()).
inline std::optional<std::string> nccl_feature_waiver(std::string_view feature, int runtime_version) {
  for (const auto& f : nccl_features()) {
    if (f.name != feature || runtime_version >= f.since) continue;
    const int major = f.since / 10000;
    const int minor = f.since / 100 % 100;
    return fmt::format("{} needs NCCL >= {}.{} ({}); the loaded libnccl is {}", f.name, major, minor, f.symbols,
                       format_nccl_version(runtime_version));
  }
  return std::nullopt;
}

// Why every case of a backend with this --algo and buffer kind is waived on the loaded NCCL, or
// nullopt. Per-case gaps (fp8 types, the in-switch rules) are judged per case elsewhere.
inline std::optional<std::string> nccl_version_waiver(std::string_view algo, BufferKind buffers, int runtime_version) {
  if (buffers == BufferKind::symmetric) {
    if (auto why = nccl_feature_waiver("symmetric windows", runtime_version)) return why;
  }
  if (algo == "cb-multimem") return nccl_feature_waiver("the device API", runtime_version);
  if (algo == "pat") return nccl_feature_waiver("the PAT algorithm", runtime_version);
  return std::nullopt;
}

}  // namespace collbench::backend::nccl
