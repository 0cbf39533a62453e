// The GPU libraries are opened at run time, not linked (docs/nccl-backend.md, "Linking"): the
// RAII loader, the candidates it tries, and the errors that name the library and the missing
// symbol. CPU only: libc and libm stand in for a library that lacks NCCL's or cuBLAS's symbols.
#include <gtest/gtest.h>

#include <cstdlib>
#include <string>
#include <utility>
#include <vector>

#ifdef COLLBENCH_HAVE_NCCL
#include "collbench/backend/nccl/dynamic_library.hpp"
#include "collbench/backend/nccl/gpu_libraries.hpp"

namespace {

using collbench::backend::nccl::DynamicLibrary;
using collbench::backend::nccl::library_candidates;

TEST(NcclLoader, OpensTheFirstCandidateThatLoadsAndResolvesSymbols) {
  DynamicLibrary lib;
  std::string error;
  ASSERT_TRUE(lib.open({"/nonexistent/libnothing.so.1", "libc.so.6"}, error)) << error;
  EXPECT_TRUE(error.empty());
  EXPECT_TRUE(lib.is_open());
  EXPECT_NE(lib.path().find("libc.so.6"), std::string::npos) << lib.path();
  EXPECT_NE(lib.symbol("malloc"), nullptr);
  EXPECT_EQ(lib.symbol("ncclAllReduce"), nullptr);

  DynamicLibrary moved(std::move(lib));
  EXPECT_TRUE(moved.is_open());
  EXPECT_FALSE(lib.is_open());  // NOLINT(bugprone-use-after-move): the moved-from state is part of the contract
  EXPECT_EQ(lib.symbol("malloc"), nullptr);
}

TEST(NcclLoader, FailureNamesEveryCandidate) {
  DynamicLibrary lib;
  std::string error;
  EXPECT_FALSE(lib.open({"/nonexistent/a/libnccl.so.2", "/nonexistent/b/libnccl.so.2"}, error));
  EXPECT_FALSE(lib.is_open());
  EXPECT_NE(error.find("/nonexistent/a/libnccl.so.2"), std::string::npos) << error;
  EXPECT_NE(error.find("/nonexistent/b/libnccl.so.2"), std::string::npos) << error;
}

TEST(NcclLoader, CandidatesHonourTheOverrideThenTheBuildDirectory) {
  ::unsetenv("COLLBENCH_TEST_LIBRARY");
  EXPECT_EQ(library_candidates("COLLBENCH_TEST_LIBRARY", "libnccl.so.2", "/opt/nccl/lib"),
            (std::vector<std::string>{"libnccl.so.2", "/opt/nccl/lib/libnccl.so.2"}));
  EXPECT_EQ(library_candidates("COLLBENCH_TEST_LIBRARY", "libnccl.so.2", ""), std::vector<std::string>{"libnccl.so.2"});
  ::setenv("COLLBENCH_TEST_LIBRARY", "/x/libnccl.so.2", 1);
  EXPECT_EQ(library_candidates("COLLBENCH_TEST_LIBRARY", "libnccl.so.2", "/opt/nccl/lib"),
            std::vector<std::string>{"/x/libnccl.so.2"});
  ::unsetenv("COLLBENCH_TEST_LIBRARY");
}

TEST(NcclLoader, MissingNcclNamesTheLibrary) {
  ::setenv("COLLBENCH_NCCL_LIBRARY", "/nonexistent/libnccl.so.2", 1);
  const auto problem = collbench::backend::nccl::try_load_nccl();
  ::unsetenv("COLLBENCH_NCCL_LIBRARY");
  ASSERT_TRUE(problem.has_value());
  EXPECT_NE(problem->find("cannot load the NCCL library"), std::string::npos) << *problem;
  EXPECT_NE(problem->find("/nonexistent/libnccl.so.2"), std::string::npos) << *problem;
  EXPECT_NE(problem->find("--backend mpi"), std::string::npos) << *problem;
}

TEST(NcclLoader, NcclWithoutASymbolNamesTheSymbol) {
  ::setenv("COLLBENCH_NCCL_LIBRARY", "libc.so.6", 1);
  const auto problem = collbench::backend::nccl::try_load_nccl();
  ::unsetenv("COLLBENCH_NCCL_LIBRARY");
  ASSERT_TRUE(problem.has_value());
  EXPECT_NE(problem->find("libc.so.6 has no symbol ncclGetVersion"), std::string::npos) << *problem;
}

TEST(NcclLoader, MissingCublasNamesTheLibraryAndWithoutASymbolTheSymbol) {
  ::setenv("COLLBENCH_CUBLAS_LIBRARY", "libm.so.6", 1);
  const auto problem = collbench::backend::nccl::try_load_cublas();
  ::unsetenv("COLLBENCH_CUBLAS_LIBRARY");
  ASSERT_TRUE(problem.has_value());
  EXPECT_NE(problem->find("libm.so.6 has no symbol cublasCreate_v2"), std::string::npos) << *problem;
}

TEST(NcclLoader, MissingCublasNamesTheLibrary) {
  ::setenv("COLLBENCH_CUBLAS_LIBRARY", "/nonexistent/libcublas.so.13", 1);
  const auto problem = collbench::backend::nccl::try_load_cublas();
  ::unsetenv("COLLBENCH_CUBLAS_LIBRARY");
  ASSERT_TRUE(problem.has_value());
  EXPECT_NE(problem->find("cannot load cuBLAS"), std::string::npos) << *problem;
  EXPECT_NE(problem->find("/nonexistent/libcublas.so.13"), std::string::npos) << *problem;
}

// An NCCL older than the headers (2.21-2.27 on many fleets) is not refused: what it lacks is
// optional, resolved to nullptr, and the version decides what runs (nccl_compat.hpp). The stand-in
// (tests/fake/fake_nccl_old.cpp) is a 2.26.5 exporting exactly the required symbols.
#ifdef COLLBENCH_FAKE_OLD_NCCL
TEST(NcclLoader, AnOlderNcclLoadsWithoutItsOptionalSymbols) {
  ::setenv("COLLBENCH_NCCL_LIBRARY", COLLBENCH_FAKE_OLD_NCCL, 1);
  const auto check = collbench::backend::nccl::check_nccl_library();
  ::unsetenv("COLLBENCH_NCCL_LIBRARY");
  ASSERT_FALSE(check.problem.has_value()) << *check.problem;
  EXPECT_EQ(check.version, 22605);
  EXPECT_EQ(check.absent_optional,
            (std::vector<std::string>{"ncclCommWindowRegister", "ncclCommWindowDeregister", "ncclAlltoAll"}));
}
#endif

TEST(NcclLoader, CheckReportsTheLoadProblem) {
  ::setenv("COLLBENCH_NCCL_LIBRARY", "libc.so.6", 1);
  const auto check = collbench::backend::nccl::check_nccl_library();
  ::unsetenv("COLLBENCH_NCCL_LIBRARY");
  ASSERT_TRUE(check.problem.has_value());
  EXPECT_NE(check.problem->find("libc.so.6 has no symbol ncclGetVersion"), std::string::npos) << *check.problem;
  EXPECT_EQ(check.version, 0);
  EXPECT_TRUE(check.absent_optional.empty());
}

// Where the build machine's NCCL and cuBLAS are installed (as in CI), the loaders find them
// without help: the dynamic loader's search, then the directory CMake found them in.
TEST(NcclLoader, FindsTheInstalledLibrariesWithoutOverride) {
  ::unsetenv("COLLBENCH_NCCL_LIBRARY");
  ::unsetenv("COLLBENCH_CUBLAS_LIBRARY");
  const auto nccl = collbench::backend::nccl::try_load_nccl();
  const auto cublas = collbench::backend::nccl::try_load_cublas();
  EXPECT_FALSE(nccl.has_value()) << *nccl;
  EXPECT_FALSE(cublas.has_value()) << *cublas;
}

}  // namespace
#endif
