// Which of NCCL's answers to a collective are refusals (backend::Unsupported, waived when every
// rank refused: tests/mpi/test_refusal_mpi.cpp) and which are failures: throw_if_refused of
// backend/nccl/nccl_host.hpp, the mapping NcclComm::check_collective applies to every NCCL
// collective call. CPU only; runs in every build.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include "collbench/backend/nccl/nccl_host.hpp"

namespace {

using namespace collbench;
using namespace collbench::backend::nccl;

const int kV2289 = nccl_version_code(2, 28, 9);

// The reason throw_if_refused gives, or "" when it does not throw.
std::string refusal(int rc, const std::string& algo, NcclOp op, int version = kV2289) {
  try {
    throw_if_refused(rc, algo_settings(algo, version), op, "collbench-world", "invalid usage (5)");
  } catch (const backend::Unsupported& e) {
    return e.what();
  }
  return "";
}

TEST(NcclRefusal, InvalidUsageOnAForcedOperationIsARefusalNamingAlgoAndCommunicator) {
  EXPECT_EQ(refusal(kNcclResultInvalidUsage, "pat", NcclOp::reducescatter),
            "NCCL refused reducescatter with --algo pat (NCCL_ALGO=reducescatter:pat;allgather:pat) on communicator "
            "collbench-world: invalid usage (5)");
  EXPECT_EQ(refusal(kNcclResultInvalidUsage, "nvls", NcclOp::allreduce),
            "NCCL refused allreduce with --algo nvls (NCCL_ALGO=allreduce:nvls;reducescatter:nvls;allgather:nvls) on "
            "communicator collbench-world: invalid usage (5)");
  // NCCL before 2.24 takes the plain NCCL_ALGO form; the reason shows what was set.
  EXPECT_EQ(refusal(kNcclResultInvalidUsage, "tree", NcclOp::allreduce, nccl_version_code(2, 21, 5)),
            "NCCL refused allreduce with --algo tree (NCCL_ALGO=tree) on communicator collbench-world: invalid usage "
            "(5)");
}

TEST(NcclRefusal, EveryForcedOperationOfEveryNcclAlgorithmRefuses) {
  const std::vector<std::pair<std::string, std::vector<NcclOp>>> forced{
      {"ring", {NcclOp::allreduce, NcclOp::reducescatter, NcclOp::allgather, NcclOp::broadcast}},
      {"tree", {NcclOp::allreduce}},
      {"nvls", {NcclOp::allreduce, NcclOp::reducescatter, NcclOp::allgather}},
      {"nvlstree", {NcclOp::allreduce}},
      {"pat", {NcclOp::reducescatter, NcclOp::allgather}},
      {"collnet", {NcclOp::allreduce, NcclOp::reducescatter, NcclOp::allgather}},
  };
  const std::vector<NcclOp> all{NcclOp::allreduce, NcclOp::reducescatter, NcclOp::allgather, NcclOp::broadcast,
                                NcclOp::alltoall};
  for (const auto& [algo, ops] : forced) {
    for (NcclOp op : all) {
      const bool is_forced = std::find(ops.begin(), ops.end(), op) != ops.end();
      const std::string why = refusal(kNcclResultInvalidUsage, algo, op);
      // Where the algorithm is not forced NCCL chose freely: invalid usage is collbench's bug.
      EXPECT_EQ(!why.empty(), is_forced) << algo << " " << to_string(op) << ": " << why;
      if (is_forced) {
        EXPECT_NE(why.find("--algo " + algo + " "), std::string::npos) << why;
      }
    }
  }
}

// Without NCCL_ALGO in the environment at the call (collbench sets it only while creating the
// communicator), NCCL 2.24+ answers ncclInternalError with its "no algorithm/protocol available"
// warning as the last error; NCCL before 2.24 always did (enqueue.cc). The wording changed in 2.30.
TEST(NcclRefusal, InternalErrorWithNoAlgorithmLeftIsARefusal) {
  const std::string nccl_text =
      "internal error - please report this issue to the NCCL developers (3); NCCL: Error : no "
      "algorithm/protocol available for function AllReduce with datatype ncclFloat32.";
  try {
    throw_if_refused(kNcclResultInternalError, algo_settings("nvls", kV2289), NcclOp::allreduce, "collbench-world",
                     nccl_text);
    ADD_FAILURE() << "not taken for a refusal";
  } catch (const backend::Unsupported& e) {
    EXPECT_EQ(std::string(e.what()),
              "NCCL refused allreduce with --algo nvls (NCCL_ALGO=allreduce:nvls;reducescatter:nvls;allgather:nvls) on "
              "communicator collbench-world: " +
                  nccl_text);
  }
  // 2.19-2.23 warn without the function's name; 2.30 capitalises; later NCCL names symmetric kernels.
  EXPECT_THROW(
      throw_if_refused(kNcclResultInternalError, algo_settings("tree", nccl_version_code(2, 21, 5)), NcclOp::allreduce,
                       "w", "internal error (3); NCCL: Error : no algorithm/protocol available"),
      backend::Unsupported);
  for (const char* text : {"internal error (3); NCCL: No algorithm/protocol available for function AllReduce with "
                           "datatype ncclFloat32.",
                           "internal error (3); NCCL: No algorithm/protocol nor symKernelId available for function "
                           "AllReduce"}) {
    EXPECT_THROW(
        throw_if_refused(kNcclResultInternalError, algo_settings("nvls", kV2289), NcclOp::allreduce, "w", text),
        backend::Unsupported)
        << text;
  }
  // Another internal error, or no algorithm forced for the operation: a failure.
  EXPECT_NO_THROW(throw_if_refused(kNcclResultInternalError, algo_settings("nvls", kV2289), NcclOp::allreduce, "w",
                                   "internal error (3); NCCL: proxy thread died"));
  EXPECT_NO_THROW(
      throw_if_refused(kNcclResultInternalError, algo_settings("nvls", kV2289), NcclOp::alltoall, "w", nccl_text));
  // A stale refusal of another function (NCCL keeps its last warning): an all-gather's internal
  // error under a forced nvls is a failure, not the all-reduce's refusal again.
  EXPECT_NO_THROW(
      throw_if_refused(kNcclResultInternalError, algo_settings("nvls", kV2289), NcclOp::allgather, "w", nccl_text));
  EXPECT_THROW(throw_if_refused(kNcclResultInternalError, algo_settings("nvls", kV2289), NcclOp::reducescatter, "w",
                                "internal error (3); NCCL: Error : no algorithm/protocol available for function "
                                "ReduceScatter with datatype ncclBfloat16."),
               backend::Unsupported);
  EXPECT_NO_THROW(
      throw_if_refused(kNcclResultInternalError, algo_settings("auto", kV2289), NcclOp::allreduce, "w", nccl_text));
}

TEST(NcclRefusal, OtherAnswersAreFailuresNotRefusals) {
  // ncclSuccess, ncclUnhandledCudaError, ncclSystemError, ncclInternalError, ncclInvalidArgument,
  // ncclRemoteError, ncclInProgress (nccl.h): the caller throws them as failures (exit 3).
  for (int rc : {0, 1, 2, 3, 4, 6, 7}) {
    EXPECT_EQ(refusal(rc, "ring", NcclOp::allreduce), "") << rc;
    EXPECT_EQ(refusal(rc, "pat", NcclOp::allgather), "") << rc;
  }
}

TEST(NcclRefusal, DeviceCommunicatorRefusesOnlyWhatEveryRankDecidesBeforeItsBootstrap) {
  // cb-multimem's ncclDevCommCreate: no symmetric support (ncclInvalidUsage) and no multicast
  // (ncclInvalidArgument) are waivers; a CUDA, system, internal or remote error, which one rank can
  // meet while its peers wait inside NCCL's bootstrap, ends the run instead (exit 3).
  EXPECT_TRUE(devcomm_refusal(kNcclResultInvalidUsage));
  EXPECT_TRUE(devcomm_refusal(kNcclResultInvalidArgument));
  for (int rc : {0, 1, 2, 3, 6, 7}) EXPECT_FALSE(devcomm_refusal(rc)) << rc;
}

TEST(NcclRefusal, NcclsOwnChoiceNeverRefuses) {
  for (const char* algo : {"auto", "flat", "hierarchical", "symmetric"}) {
    EXPECT_EQ(refusal(kNcclResultInvalidUsage, algo, NcclOp::allreduce), "") << algo;
  }
}

}  // namespace
