// The refusal path of docs/nccl-backend.md ("A forced algorithm NCCL refuses"), on the CPU: NCCL's
// refusal of a forced algorithm (ncclInvalidUsage, or ncclInternalError with "no algorithm/protocol
// available") becomes backend::Unsupported (throw_if_refused, the
// mapping NcclComm::check_collective uses), and run::measure turns a refusal on every rank into a
// waiver with rank 0's reason, and a refusal on some ranks only into a failure on every rank.
// The launch is the MPI backend's all-reduce, except on the ranks that stand in for an NCCL that
// refused: they call the mapping with NCCL's code, as check_collective does with ncclAllReduce's.
#include <gtest/gtest.h>
#include <mpi.h>

#include <functional>
#include <string>

#include "collbench/backend/nccl/nccl_host.hpp"
#include "collbench/backend/registry.hpp"
#include "collbench/coll/collective.hpp"
#include "collbench/core/error.hpp"
#include "collbench/run/fault.hpp"
#include "collbench/run/measure.hpp"
#include "collbench/run/session.hpp"
#include "mpi_test_util.hpp"

namespace {

using namespace collbench;
namespace nccl = collbench::backend::nccl;

using mpitest::world_rank;
using mpitest::world_size;

// allreduce whose launch asks `answer(rank)` for NCCL's result code: ncclSuccess runs the real
// (MPI) all-reduce; kNcclResultInvalidUsage goes through the backend's mapping; -1 returns at
// once, like an NCCL launch that was enqueued but whose peers never come.
class AnsweringAllreduce final : public coll::Collective {
 public:
  AnsweringAllreduce(std::function<int(int)> answer, nccl::AlgoSettings algo)
      : Collective(coll::find_collective("allreduce").id()),
        real_(coll::find_collective("allreduce")),
        answer_(std::move(answer)),
        algo_(std::move(algo)) {}
  [[nodiscard]] std::string_view description() const override { return real_.description(); }
  [[nodiscard]] coll::Shape shape(std::uint64_t bytes, Dtype dtype, int rank, int n) const override {
    return real_.shape(bytes, dtype, rank, n);
  }
  void fill(void* p, const coll::Shape& s, const coll::CaseContext& c) const override { real_.fill(p, s, c); }
  [[nodiscard]] std::uint64_t verify(const void* p, const coll::Shape& s, const coll::CaseContext& c) const override {
    return real_.verify(p, s, c);
  }
  void launch(backend::Comm& comm, const void* send, void* recv, const coll::Shape& s,
              const coll::CaseContext& c) const override {
    const int rc = answer_(comm.rank());
    if (rc == nccl::kNcclResultSuccess) return real_.launch(comm, send, recv, s, c);
    if (rc < 0) return;
    nccl::throw_if_refused(rc, algo_, nccl::NcclOp::allreduce, "collbench-world",
                           "invalid usage (run with NCCL_DEBUG=WARN for details)");
    throw RuntimeFailure("not a refusal");  // check_collective's throw_nccl_error
  }

 private:
  const coll::Collective& real_;
  std::function<int(int)> answer_;
  nccl::AlgoSettings algo_;
};

struct Harness {
  run::Control control;
  run::FaultPlan faults;
  std::unique_ptr<backend::Backend> be = backend::make_backend("mpi", backend::BackendOptions{});
  std::unique_ptr<backend::Comm> comm = be->world();
  plan::Case spec = mpitest::fixed_case("allreduce", 4096, 3);

  run::Measurement measure(const coll::Collective& c) {
    spec.algo = "ring";
    run::MeasureInput in;
    in.spec = &spec;
    in.collective = &c;
    in.backend = be.get();
    in.comm = comm.get();
    in.control = &control;
    in.faults = &faults;
    in.world_rank = world_rank();
    return run::measure(in);
  }
};

const nccl::AlgoSettings kRing = nccl::algo_settings("ring", nccl::nccl_version_code(2, 28, 9));
const std::string kReason =
    "NCCL refused allreduce with --algo ring (NCCL_ALGO=ring) on communicator collbench-world: invalid usage (run "
    "with NCCL_DEBUG=WARN for details)";

TEST(RefusalMpi, RefusedOnEveryRankIsAWaiverWithTheReasonOnEveryRank) {
  Harness h;
  const AnsweringAllreduce refusing([](int) { return nccl::kNcclResultInvalidUsage; }, kRing);
  const run::Measurement m = h.measure(refusing);
  ASSERT_TRUE(m.waived.has_value());
  EXPECT_EQ(*m.waived, kReason);
  EXPECT_FALSE(m.checked);
  EXPECT_TRUE(m.samples_us.empty());
  EXPECT_EQ(m.iterations, 0);
}

// -c 0: the first launch still goes through the agreement (one unchecked launch before warm-up),
// else the refusal would surface in the warm-up as a failure.
TEST(RefusalMpi, RefusedWithoutVerificationIsStillAWaiver) {
  Harness h;
  h.spec.check = false;
  const AnsweringAllreduce refusing([](int) { return nccl::kNcclResultInvalidUsage; }, kRing);
  const run::Measurement m = h.measure(refusing);
  ASSERT_TRUE(m.waived.has_value());
  EXPECT_EQ(*m.waived, kReason);

  const AnsweringAllreduce running([](int) { return nccl::kNcclResultSuccess; }, kRing);
  const run::Measurement ran = h.measure(running);
  EXPECT_FALSE(ran.waived.has_value());
  EXPECT_FALSE(ran.checked);
  if (world_rank() == 0) {
    EXPECT_EQ(ran.iterations, 3);
  }
}

TEST(RefusalMpi, RefusedOnOneRankOnlyFailsOnEveryRankNamingTheCount) {
  Harness h;
  const int n = world_size();
  // Rank 1 refuses; the others' launches were enqueued and would wait for it.
  const AnsweringAllreduce partial([](int r) { return r == 1 ? nccl::kNcclResultInvalidUsage : -1; }, kRing);
  try {
    (void)h.measure(partial);
    FAIL() << "a refusal on one rank of " << n << " must fail the case";
  } catch (const backend::Unsupported& e) {
    FAIL() << "a partial refusal escaped as a refusal: " << e.what();
  } catch (const RuntimeFailure& e) {
    const std::string expected = "the library refused the case on 1 of " + std::to_string(n) + " ranks";
    EXPECT_EQ(std::string(e.what()), world_rank() == 1 ? expected + ": " + kReason : expected);
  }
}

TEST(RefusalMpi, NoRefusalMeasuresTheCase) {
  Harness h;
  const AnsweringAllreduce running([](int) { return nccl::kNcclResultSuccess; }, kRing);
  const run::Measurement m = h.measure(running);
  EXPECT_FALSE(m.waived.has_value());
  EXPECT_TRUE(m.checked);
  if (world_rank() == 0) {
    EXPECT_EQ(m.iterations, 3);
    EXPECT_EQ(m.wrong_by_rank, std::vector<std::uint64_t>(static_cast<std::size_t>(world_size()), 0));
  }
}

// ncclInvalidUsage without a forced algorithm is collbench's bug, not a refusal: a failure.
TEST(RefusalMpi, InvalidUsageUnderAutoIsAFailureNotAWaiver) {
  Harness h;
  const AnsweringAllreduce auto_algo([](int) { return nccl::kNcclResultInvalidUsage; },
                                     nccl::algo_settings("auto", nccl::nccl_version_code(2, 28, 9)));
  EXPECT_THROW(
      {
        try {
          (void)h.measure(auto_algo);
        } catch (const backend::Unsupported&) {
          ADD_FAILURE() << "escaped as a refusal";
        }
      },
      RuntimeFailure);
}

}  // namespace
