// --verify and the device plan the runner gives a backend's fill and check kernels
// (run/device_verify.hpp): the choice, its refusal on the MPI backend, and for every family with
// a device plan the plan's host reference (apply_plan_host, count_wrong_host: what the kernels
// compute) against the host path the runner uses otherwise (the family's fill() into the buffer
// that allocate_and_fill builds, in and out of place, and the family's verify()).
#include <gtest/gtest.h>

#include <algorithm>
#include <functional>
#include <set>
#include <string>
#include <vector>

#include "collbench/backend/registry.hpp"
#include "collbench/coll/collective.hpp"
#include "collbench/coll/device_plan.hpp"
#include "collbench/coll/pattern.hpp"
#include "collbench/core/error.hpp"
#include "collbench/run/device_verify.hpp"

namespace {

using namespace collbench;
using run::VerifyMode;

std::string input_error(const std::function<void()>& f) {
  try {
    f();
  } catch (const InputError& e) {
    return e.what();
  }
  return "(no InputError)";
}

TEST(DeviceVerify, ParsesTheThreeModesAndNamesThemOnBadInput) {
  EXPECT_EQ(run::parse_verify_mode("auto"), VerifyMode::automatic);
  EXPECT_EQ(run::parse_verify_mode("host"), VerifyMode::host);
  EXPECT_EQ(run::parse_verify_mode("device"), VerifyMode::device);
  EXPECT_EQ(input_error([] { run::parse_verify_mode("gpu"); }), "--verify gpu: accepted: auto, host, device");
  for (VerifyMode m : {VerifyMode::automatic, VerifyMode::host, VerifyMode::device}) {
    EXPECT_EQ(run::parse_verify_mode(run::to_string(m)), m);
  }
}

TEST(DeviceVerify, DeviceOnlyWhereTheBackendOffersItAndTheFamilyHasAPlan) {
  for (VerifyMode m : {VerifyMode::automatic, VerifyMode::device}) {
    EXPECT_TRUE(run::verifies_on_device(m, true, true));
    EXPECT_FALSE(run::verifies_on_device(m, false, true));
    EXPECT_FALSE(run::verifies_on_device(m, true, false));
  }
  EXPECT_FALSE(run::verifies_on_device(VerifyMode::host, true, true));
}

TEST(DeviceVerify, DeviceModeIsRefusedUpFrontOnTheMpiBackend) {
  plan::Sweep sweep;
  plan::Case nccl;
  nccl.backend = "nccl";
  plan::Case mpi;
  mpi.backend = "mpi";
  sweep.cases = {nccl, mpi};
  EXPECT_EQ(input_error([&] { run::check_verify_mode(VerifyMode::device, sweep); }),
            "--verify device: the mpi backend has no device verification (its buffers are host memory, filled and "
            "checked on the host); use --verify host or auto, or --backend nccl");
  EXPECT_NO_THROW(run::check_verify_mode(VerifyMode::automatic, sweep));
  EXPECT_NO_THROW(run::check_verify_mode(VerifyMode::host, sweep));
  sweep.cases = {nccl};
  EXPECT_NO_THROW(run::check_verify_mode(VerifyMode::device, sweep));
  // The registry says it before any backend exists (built or not: a missing nccl backend is
  // refused by name when it is made).
  EXPECT_FALSE(backend::backend_entry("mpi").device_verification);
  EXPECT_TRUE(backend::backend_entry("nccl").device_verification);
}

std::vector<Redop> redops_for(const coll::Collective& c) {
  if (!c.has_redop()) return {Redop::sum};
  return {Redop::sum, Redop::prod, Redop::min, Redop::max};
}

// The host path's input buffer (allocate_and_fill): zeroed, the family's fill() at its input offset.
std::vector<unsigned char> host_input(const coll::Collective& c, const coll::Shape& s, const coll::CaseContext& ctx) {
  const std::size_t elem = dtype_size(ctx.dtype);
  const std::size_t elems = ctx.in_place ? s.in_place_elems() : s.send_elems;
  const std::size_t offset = ctx.in_place ? c.in_place_input_offset(s, ctx) : 0;
  std::vector<unsigned char> buf(std::max<std::size_t>(elems * elem, 1), 0);
  c.fill(buf.data() + offset * elem, s, ctx);
  return buf;
}

// One case: the plan's input equals the host input byte for byte; its expected result passes
// verify(), and a corrupted element (and a poisoned result) count the same on both sides.
void check_case(const coll::Collective& c, const coll::Shape& s, const coll::CaseContext& ctx,
                const std::string& where) {
  const auto plan = run::device_case_plan(c, s, ctx);
  ASSERT_TRUE(plan) << where;
  const std::size_t elem = dtype_size(ctx.dtype);
  const auto host = host_input(c, s, ctx);
  std::vector<unsigned char> device(std::max<std::size_t>(plan->fill_elems * elem, 1), 0);
  ASSERT_EQ(device.size(), host.size()) << where;
  backend::nccl::apply_plan_host(device.data(), plan->params, plan->fill);
  ASSERT_EQ(device, host) << where;

  std::vector<unsigned char> result(std::max<std::size_t>(s.recv_elems * elem, 1), 0xff);
  EXPECT_EQ(backend::nccl::count_wrong_host(result.data(), plan->params, plan->expected), s.recv_elems) << where;
  EXPECT_EQ(c.verify(result.data(), s, ctx), s.recv_elems) << where;
  backend::nccl::apply_plan_host(result.data(), plan->params, plan->expected);
  ASSERT_EQ(c.verify(result.data(), s, ctx), 0u) << where;
  ASSERT_EQ(backend::nccl::count_wrong_host(result.data(), plan->params, plan->expected), 0u) << where;
  if (s.recv_elems == 0) return;
  const std::size_t victim = s.recv_elems / 2;
  store_element(result.data(), victim, ctx.dtype, coll::corrupted(load_element(result.data(), victim, ctx.dtype)));
  EXPECT_EQ(c.verify(result.data(), s, ctx), 1u) << where;
  EXPECT_EQ(backend::nccl::count_wrong_host(result.data(), plan->params, plan->expected), 1u) << where;
}

TEST(DeviceVerify, PlanOfEveryPlannedFamilyMatchesTheHostPathInAndOutOfPlace) {
  const std::set<std::string> planned{"allreduce", "reducescatter", "allgather", "alltoall",
                                      "alltoallv", "broadcast",     "sendrecv"};
  int checked = 0;
  for (const auto& c : coll::collective_registry()) {
    coll::CaseContext probe;
    const bool has = run::device_case_plan(*c, c->shape(1024, Dtype::float32, 0, 1), probe).has_value();
    EXPECT_EQ(has, planned.count(std::string(c->name())) > 0) << c->name();
    if (!has) continue;
    for (const auto& info : all_dtypes()) {
      for (Redop redop : redops_for(*c)) {
        for (int n : {1, 2, 3, 8}) {
          for (int rank : std::set<int>{0, n - 1}) {
            for (bool in_place : {false, true}) {
              if (in_place && !c->supports_in_place()) continue;
              for (std::uint64_t bytes : {0, 8, 1000, 4096 + 24}) {
                coll::CaseContext ctx;
                ctx.dtype = info.dtype;
                ctx.redop = redop;
                ctx.rank = rank;
                ctx.num_ranks = n;
                ctx.root = n - 1;
                ctx.in_place = in_place;
                const coll::Shape s = c->shape(bytes, info.dtype, rank, n);
                const std::string where = std::string(c->name()) + " " + std::string(info.name) + " " +
                                          std::string(to_string(redop)) + " n=" + std::to_string(n) + " rank " +
                                          std::to_string(rank) + (in_place ? " in place" : "") + " bytes " +
                                          std::to_string(bytes);
                check_case(*c, s, ctx, where);
                ++checked;
              }
            }
          }
        }
      }
    }
  }
  EXPECT_GT(checked, 1000);
}

}  // namespace
