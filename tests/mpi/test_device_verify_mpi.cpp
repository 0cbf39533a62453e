// The runner's device verification path (run/case_buffers.cpp), run on the CPU: a backend that
// forwards everything to the MPI backend and offers device_patterns() executed by the kernels'
// host reference (coll/device_plan.hpp apply_plan_host, count_wrong_host) on its host buffers.
// measure() must then fill and check every planned family through it (and never under --verify
// host), find no wrong element in the MPI library's real results, and name the rank a corrupt
// fault item hits, writing the flipped element back afterwards.
#include <gtest/gtest.h>
#include <mpi.h>

#include <cstring>
#include <string>
#include <vector>

#include "collbench/backend/device_patterns.hpp"
#include "collbench/backend/mpi/mpi_backend.hpp"
#include "collbench/coll/collective.hpp"
#include "collbench/coll/device_plan.hpp"
#include "collbench/core/pairing.hpp"
#include "collbench/run/measure.hpp"
#include "collbench/run/session.hpp"
#include "mpi_test_util.hpp"

namespace {

using namespace collbench;
using mpitest::world_rank;
using mpitest::world_size;

class HostPlanBackend final : public backend::Backend, public backend::DevicePatterns {
 public:
  HostPlanBackend() : inner_(backend::make_mpi_backend(backend::BackendOptions{})) {}
  [[nodiscard]] std::string name() const override { return "mpi+host-plan"; }
  [[nodiscard]] std::unique_ptr<backend::Buffer> allocate(std::size_t bytes) override {
    return inner_->allocate(bytes);
  }
  void upload(backend::Buffer& dst, const void* host, std::size_t bytes) override { inner_->upload(dst, host, bytes); }
  void download(void* host, backend::Buffer& src, std::size_t bytes) override { inner_->download(host, src, bytes); }
  [[nodiscard]] std::unique_ptr<backend::Comm> world() override { return inner_->world(); }
  [[nodiscard]] std::unique_ptr<backend::Comm> split(int color, int key) override { return inner_->split(color, key); }
  [[nodiscard]] std::unique_ptr<backend::Timer> timer() override { return inner_->timer(); }
  [[nodiscard]] std::map<std::string, std::string> provenance() const override { return inner_->provenance(); }
  [[nodiscard]] backend::DevicePatterns* device_patterns() override { return this; }

  void fill(void* dst, std::size_t total_elems, const pattern::PatternParams& params,
            std::span<const pattern::Segment> segments) override {
    ++fills;
    std::memset(dst, 0, total_elems * dtype_size(params.dtype));
    backend::nccl::apply_plan_host(dst, params, segments);
  }
  std::uint64_t count_wrong(const void* src, const pattern::PatternParams& params,
                            std::span<const pattern::Segment> segments) override {
    ++counts;
    return backend::nccl::count_wrong_host(src, params, segments);
  }
  double read(const void* src, std::size_t index, Dtype dtype) override { return load_element(src, index, dtype); }
  void write(void* dst, std::size_t index, Dtype dtype, double value) override {
    ++writes;
    store_element(dst, index, dtype, value);
  }

  int fills = 0, counts = 0, writes = 0;

 private:
  std::unique_ptr<backend::Backend> inner_;
};

struct Outcome {
  run::Measurement m;
  int fills, counts, writes;
};

Outcome measure_with(const plan::Case& spec, run::VerifyMode verify, const run::FaultPlan& faults) {
  HostPlanBackend be;
  auto comm = be.world();
  run::Control control;
  run::MeasureInput in;
  in.spec = &spec;
  in.collective = &coll::find_collective(spec.collective);
  in.backend = &be;
  in.comm = comm.get();
  in.control = &control;
  in.faults = &faults;
  in.world_rank = world_rank();
  in.verify = verify;
  run::Measurement m = run::measure(in);
  return {std::move(m), be.fills, be.counts, be.writes};
}

std::vector<plan::Case> planned_cases() {
  std::vector<plan::Case> out;
  for (const std::string name :
       {"allreduce", "reducescatter", "allgather", "alltoall", "alltoallv", "broadcast", "sendrecv"}) {
    const coll::Collective& c = coll::find_collective(name);
    for (Dtype d : {Dtype::float32, Dtype::bfloat16, Dtype::float8e4m3}) {
      for (Redop r : c.has_redop() ? std::vector<Redop>{Redop::sum, Redop::prod, Redop::min, Redop::max}
                                   : std::vector<Redop>{Redop::sum}) {
        for (bool in_place : {false, true}) {
          if (in_place && !c.supports_in_place()) continue;
          plan::Case k = mpitest::fixed_case(name, 4096, 2);
          k.dtype = d;
          k.redop = r;
          k.in_place = in_place;
          out.push_back(k);
        }
      }
    }
  }
  // sendrecv's other pairing (the family-wide cases above are the ring): every round of the
  // circle method on this many ranks, as locate's link matrix and accept's pairwise checks run it.
  for (int round = 0; round < round_robin_rounds(world_size()); ++round) {
    plan::Case k = mpitest::fixed_case("sendrecv", 4096, 2);
    k.dtype = Dtype::bfloat16;
    k.params = {{"pairing", "round-robin"}, {"round", std::to_string(round)}};
    out.push_back(k);
  }
  return out;
}

std::string where(const plan::Case& c) {
  std::string params;
  for (const auto& [key, value] : c.params) params += " " + key + "=" + value;
  return c.collective + " " + std::string(to_string(c.dtype)) + " " + std::string(to_string(c.redop)) +
         (c.in_place ? " in place" : "") + params;
}

TEST(DeviceVerifyMpi, TheMpiBackendOffersNone) {
  EXPECT_EQ(backend::make_mpi_backend(backend::BackendOptions{})->device_patterns(), nullptr);
}

TEST(DeviceVerifyMpi, EveryPlannedFamilyFillsAndChecksThroughDevicePatterns) {
  const run::FaultPlan none;
  for (const auto& c : planned_cases()) {
    const Outcome o = measure_with(c, run::VerifyMode::automatic, none);
    EXPECT_EQ(o.fills, 1) << where(c);
    EXPECT_EQ(o.counts, 1) << where(c);
    EXPECT_TRUE(o.m.checked) << where(c);
    if (world_rank() == 0) {
      EXPECT_EQ(o.m.wrong_by_rank, std::vector<std::uint64_t>(world_size(), 0)) << where(c);
    }
  }
}

TEST(DeviceVerifyMpi, HostModeNeverUsesThem) {
  const run::FaultPlan none;
  for (const auto& c : planned_cases()) {
    const Outcome o = measure_with(c, run::VerifyMode::host, none);
    EXPECT_EQ(o.fills + o.counts, 0) << where(c);
    if (world_rank() == 0) {
      EXPECT_EQ(o.m.wrong_by_rank, std::vector<std::uint64_t>(world_size(), 0)) << where(c);
    }
  }
}

TEST(DeviceVerifyMpi, CorruptFaultIsCountedOnItsRankAndWrittenBack) {
  const int victim = world_size() - 1;
  const run::FaultPlan faults = run::FaultPlan::parse("corrupt:rank=" + std::to_string(victim));
  for (const auto& c : planned_cases()) {
    const Outcome o = measure_with(c, run::VerifyMode::automatic, faults);
    EXPECT_EQ(o.writes, world_rank() == victim ? 2 : 0) << where(c);  // flipped, then written back
    if (world_rank() != 0) continue;
    std::vector<std::uint64_t> expected(world_size(), 0);
    expected[static_cast<std::size_t>(victim)] = 1;
    EXPECT_EQ(o.m.wrong_by_rank, expected) << where(c);
  }
}

}  // namespace
