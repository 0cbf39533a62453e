// The GPU backend is compiled whenever the build was configured with CUDA: a configuration that
// reports the nccl backend (COLLBENCH_WITH_CUDA) but did not compile it (e.g. the backend's
// CMakeLists.txt went missing, or its library was dropped from the link) fails here, so CI
// cannot silently skip the GPU translation units. With COLLBENCH_EXPECT_GPU_BUILD=1 in the
// environment (CI jobs that have the CUDA toolkit) a CPU-only configuration fails as well.
// CPU only; runs in every build.
#include <gtest/gtest.h>

#include <cstdlib>
#include <string>

#include "collbench/backend/registry.hpp"
#include "collbench/core/build_info.hpp"

namespace {

using namespace collbench;

#ifdef COLLBENCH_HAVE_NCCL
constexpr bool kCompiled = true;
#else
constexpr bool kCompiled = false;
#endif

TEST(NcclHostBuild, ConfiguredAndCompiledAgree) {
  const bool configured = std::string(build::kBackends).find("nccl") != std::string::npos;
  EXPECT_EQ(configured, kCompiled) << "backends configured: '" << build::kBackends
                                   << "'; nccl backend compiled: " << kCompiled;
  bool listed = false;
  for (const auto& entry : backend::backend_registry()) {
    if (entry.name != "nccl") continue;
    listed = true;
    EXPECT_EQ(entry.built, kCompiled);
    EXPECT_EQ(entry.make != nullptr, kCompiled);
  }
  EXPECT_TRUE(listed);
}

TEST(NcclHostBuild, GpuBuildExpectedByEnvironment) {
  const char* expect = std::getenv("COLLBENCH_EXPECT_GPU_BUILD");
  if (expect == nullptr || std::string(expect) != "1") GTEST_SKIP() << "COLLBENCH_EXPECT_GPU_BUILD is not 1";
  EXPECT_TRUE(kCompiled) << "COLLBENCH_EXPECT_GPU_BUILD=1 but this build has no nccl backend (configured without "
                            "CUDA/NCCL?)";
}

}  // namespace
