// A machine older than the build (backend/nccl/nccl_compat.hpp): the driver message of
// cudaErrorInsufficientDriver, the NCCL features an NCCL of 2.21-2.27 lacks, and the waiver each
// backend's cases get there (the rest of the sweep runs); the in-switch waiver of a build without
// cb-multimem. CPU only; runs in every build.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "collbench/backend/nccl/nccl_compat.hpp"
#include "collbench/backend/nccl/nvls_host.hpp"

namespace {

using namespace collbench;
using namespace collbench::backend::nccl;

std::vector<std::string> names(const std::vector<NcclFeature>& features) {
  std::vector<std::string> out;
  for (const auto& f : features) out.emplace_back(f.name);
  return out;
}

TEST(NcclCompat, ParsesTheDriverReleaseFromTheKernelModule) {
  EXPECT_EQ(parse_nvrm_version("NVRM version: NVIDIA UNIX x86_64 Kernel Module  535.104.05  Sat Aug 19 01:15:15 UTC "
                               "2023\nGCC version:  gcc version 12.2.0\n"),
            "535.104.05");
  EXPECT_EQ(parse_nvrm_version("NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  580.65.06  Release Build"),
            "580.65.06");
  EXPECT_EQ(parse_nvrm_version("NVRM version: NVIDIA UNIX x86_64 Kernel Module\t570.86.15 x"), "570.86.15");
  EXPECT_EQ(parse_nvrm_version("NVRM version: NVIDIA UNIX x86_64 Kernel Module for x86_64 12 builds"), "");
  EXPECT_EQ(parse_nvrm_version("GCC version: gcc 12.2.0"), "");  // no NVRM line
  EXPECT_EQ(parse_nvrm_version(""), "");
}

TEST(NcclCompat, InsufficientDriverNamesTheDriverFoundAndTheRuntimeNeeded) {
  // An R535 node (CUDA 12.2) and a CUDA 13.0 build.
  EXPECT_EQ(insufficient_driver_text(12020, 13000, "535.104.05"),
            "the NVIDIA driver 535.104.05 runs CUDA up to 12.2; this collbench carries the CUDA 13.0 runtime, which "
            "needs driver 580.65.06 or newer (R580 branch): update the driver, or use a CUDA 12 build of collbench "
            "(cmake --preset cuda12, docs/install.md)");
  // Release unreadable; a CUDA 12.9 build on a driver older than R525.
  EXPECT_EQ(insufficient_driver_text(11080, 12090, ""),
            "the NVIDIA driver runs CUDA up to 11.8; this collbench carries the CUDA 12.9 runtime, which needs driver "
            "525.60.13 or newer (R525 branch): update the driver");
  // No driver at all.
  EXPECT_EQ(insufficient_driver_text(0, 13000, ""),
            "no NVIDIA driver was found (libcuda.so.1 could not be loaded); this collbench carries the CUDA 13.0 "
            "runtime, which needs driver 580.65.06 or newer (R580 branch): update the driver, or use a CUDA 12 build "
            "of collbench (cmake --preset cuda12, docs/install.md)");
  // A runtime major without a known floor.
  EXPECT_EQ(insufficient_driver_text(12090, 14000, "575.51.03"),
            "the NVIDIA driver 575.51.03 runs CUDA up to 12.9; this collbench carries the CUDA 14.0 runtime, which "
            "needs a driver for CUDA 14.x: update the driver, or use a CUDA 12 build of collbench (cmake --preset "
            "cuda12, docs/install.md)");
}

TEST(NcclCompat, FeaturesMissingFromEachOlderNccl) {
  EXPECT_EQ(names(nccl_features_missing(nccl_version_code(2, 21, 5))),
            (std::vector<std::string>{"the PAT algorithm", "fp8 types", "per-collective NCCL_ALGO", "symmetric windows",
                                      "ncclAlltoAll", "the device API"}));
  EXPECT_EQ(names(nccl_features_missing(nccl_version_code(2, 23, 4))),
            (std::vector<std::string>{"fp8 types", "per-collective NCCL_ALGO", "symmetric windows", "ncclAlltoAll",
                                      "the device API"}));
  EXPECT_EQ(names(nccl_features_missing(nccl_version_code(2, 26, 5))),
            (std::vector<std::string>{"symmetric windows", "ncclAlltoAll", "the device API"}));
  EXPECT_EQ(names(nccl_features_missing(nccl_version_code(2, 27, 7))),
            (std::vector<std::string>{"ncclAlltoAll", "the device API"}));
  EXPECT_TRUE(nccl_features_missing(nccl_version_code(2, 28, 9)).empty());
  // The gates the backend uses are the features' versions.
  EXPECT_EQ(nccl_version_code(2, 27, 0), kNcclWindowVersion);
  EXPECT_EQ(nccl_version_code(2, 28, 0), kNcclDeviceApiVersion);
}

TEST(NcclCompat, WaiverNamesTheFeatureTheVersionAndTheLoadedLibrary) {
  EXPECT_EQ(nccl_feature_waiver("symmetric windows", nccl_version_code(2, 26, 5)),
            "symmetric windows needs NCCL >= 2.27 (ncclCommWindowRegister, ncclCommWindowDeregister); the loaded "
            "libnccl is 2.26.5");
  EXPECT_EQ(nccl_feature_waiver("symmetric windows", nccl_version_code(2, 27, 0)), std::nullopt);
  EXPECT_EQ(nccl_feature_waiver("the device API", nccl_version_code(2, 27, 7)),
            "the device API needs NCCL >= 2.28 (ncclDevCommCreate, ncclTeamLsa); the loaded libnccl is 2.27.7");
  EXPECT_EQ(nccl_feature_waiver("no such feature", nccl_version_code(2, 21, 5)), std::nullopt);
}

TEST(NcclCompat, OlderNcclWaivesOnlyTheBackendsThatNeedWhatItLacks) {
  const int v2215 = nccl_version_code(2, 21, 5);
  const int v2265 = nccl_version_code(2, 26, 5);
  const int v2277 = nccl_version_code(2, 27, 7);
  // What 2.21 has runs: NCCL's own choice, ring, tree, registered buffers.
  for (const char* algo : {"auto", "ring", "tree", "nvls", "nvlstree"}) {
    EXPECT_EQ(nccl_version_waiver(algo, BufferKind::plain, v2215), std::nullopt) << algo;
    EXPECT_EQ(nccl_version_waiver(algo, BufferKind::registered, v2215), std::nullopt) << algo;
  }
  EXPECT_EQ(nccl_version_waiver("pat", BufferKind::plain, v2215),
            "the PAT algorithm needs NCCL >= 2.23 (NCCL_ALGO=pat); the loaded libnccl is 2.21.5");
  EXPECT_EQ(nccl_version_waiver("pat", BufferKind::plain, nccl_version_code(2, 23, 4)), std::nullopt);
  // Symmetric windows: 2.27.
  const std::string windows =
      "symmetric windows needs NCCL >= 2.27 (ncclCommWindowRegister, ncclCommWindowDeregister); the loaded libnccl "
      "is 2.26.5";
  EXPECT_EQ(nccl_version_waiver("auto", BufferKind::symmetric, v2265), windows);
  EXPECT_EQ(nccl_version_waiver("symmetric", BufferKind::symmetric, v2265), windows);
  EXPECT_EQ(nccl_version_waiver("cb-multimem", BufferKind::symmetric, v2265), windows);
  EXPECT_EQ(nccl_version_waiver("symmetric", BufferKind::symmetric, v2277), std::nullopt);
  // cb-multimem: windows on 2.27, but not the device API.
  EXPECT_EQ(nccl_version_waiver("cb-multimem", BufferKind::symmetric, v2277),
            "the device API needs NCCL >= 2.28 (ncclDevCommCreate, ncclTeamLsa); the loaded libnccl is 2.27.7");
  EXPECT_EQ(nccl_version_waiver("cb-multimem", BufferKind::symmetric, nccl_version_code(2, 28, 9)), std::nullopt);
}

TEST(NcclCompat, BuildWithoutCbMultimemWaivesItWithTheBuildsReason) {
  InSwitchProbe p;
  p.nccl_version = nccl_version_code(2, 28, 9);
  for (int r = 0; r < 8; ++r) p.ranks.push_back({1, 9, "host a"});
  p.lsa_ranks = 8;
  EXPECT_EQ(in_switch_waiver("cb-multimem", "allreduce", Dtype::float32, Redop::sum, p), std::nullopt);
  p.multimem_not_built = "compiled by Clang 19.1.7 (NCCL's device headers need nvcc)";
  EXPECT_EQ(in_switch_waiver("cb-multimem", "allreduce", Dtype::float32, Redop::sum, p),
            "cb-multimem is not in this build: compiled by Clang 19.1.7 (NCCL's device headers need nvcc)");
  // NCCL's own in-switch algorithms do not need collbench's kernels.
  EXPECT_EQ(in_switch_waiver("nvls", "allreduce", Dtype::float32, Redop::sum, p), std::nullopt);
}

}  // namespace
