// The runner under MPI: domain scope with 2 domains, records' structure, and fault injection
// (a corrupted element is caught and counted against the right rank).
#include <gtest/gtest.h>
#include <mpi.h>

#include <algorithm>
#include <cstdlib>

#include "collbench/run/runner.hpp"
#include "mpi_test_util.hpp"

namespace {

using namespace collbench;

using mpitest::world_rank;
using mpitest::world_size;

plan::Sweep small_sweep(const std::string& collective, Scope scope, std::vector<std::uint64_t> sizes) {
  std::vector<plan::Case> cases;
  for (auto b : sizes) cases.push_back(mpitest::fixed_case(collective, b, 5, scope));
  return mpitest::sweep_of("test", std::move(cases));
}

run::RunnerOptions quiet() {
  run::RunnerOptions o;
  o.outputs = {report::OutputTarget{"none"}};
  o.show_progress = false;
  return o;
}

TEST(RunnerMpi, DomainScopeRunsEachDomainAtOnce) {
  const int n = world_size();
  if (n % 2 != 0) GTEST_SKIP() << "needs an even rank count";
  auto o = quiet();
  o.placement.ranks_per_domain = n / 2;
  run::Runner runner(o);
  for (const char* name : {"allreduce", "alltoall"}) {
    const auto summary = runner.run(small_sweep(name, Scope::domain, {4096, 65536}));
    EXPECT_EQ(summary.cases_failed, 0);
    if (world_rank() != 0) continue;
    ASSERT_EQ(summary.records.size(), 2u);
    for (const auto& r : summary.records) {
      EXPECT_EQ(r.scope, "domain");
      EXPECT_EQ(r.num_ranks, n);
      EXPECT_EQ(r.num_domains, 2);
      EXPECT_EQ(r.domain_sizes, (std::vector<int>{n / 2, n / 2}));
      EXPECT_EQ(r.comm_ranks, n / 2);  // busbw uses the domain communicator
      EXPECT_EQ(r.wrong_total, 0u);
      EXPECT_TRUE(r.checked);
      EXPECT_EQ(r.iterations, 5);
      ASSERT_TRUE(r.per_rank.has_value());
      EXPECT_EQ(r.per_rank->mean_us.size(), static_cast<std::size_t>(n));
      // busbw = algbw x factor(domain size)
      const double factor = std::string(name) == "allreduce" ? 2.0 * (n / 2 - 1) / (n / 2) : (n / 2 - 1.0) / (n / 2);
      EXPECT_NEAR(r.busbw_gbps, r.algbw_gbps * factor, 1e-12);
    }
  }
}

TEST(RunnerMpi, GlobalScopeUnevenDomainSizes) {
  const int n = world_size();
  if (n < 3) GTEST_SKIP() << "needs 3+ ranks";
  auto o = quiet();
  o.placement.domain_sizes = std::to_string(n - 1) + ",1";
  run::Runner runner(o);
  const auto summary = runner.run(small_sweep("reducescatter", Scope::domain, {1000}));
  EXPECT_EQ(summary.cases_failed, 0);
  if (world_rank() == 0) {
    ASSERT_EQ(summary.records.size(), 1u);
    EXPECT_EQ(summary.records[0].domain_sizes, (std::vector<int>{n - 1, 1}));
  }
}

TEST(RunnerMpi, CorruptFaultIsCaughtAndNamesTheRank) {
  if (world_size() < 2) GTEST_SKIP();
  setenv("COLLBENCH_FAULT", "corrupt:rank=1", 1);
  run::Runner runner(quiet());
  const auto summary = runner.run(small_sweep("allreduce", Scope::global, {4096}));
  unsetenv("COLLBENCH_FAULT");
  EXPECT_EQ(summary.cases_failed, 1);  // agreed on every rank
  if (world_rank() != 0) return;
  const auto& r = summary.records.at(0);
  EXPECT_EQ(r.status, "failed");
  EXPECT_EQ(r.wrong_total, 1u);
  ASSERT_EQ(r.wrong_by_rank.size(), 1u);
  EXPECT_EQ(r.wrong_by_rank.at(1), 1u);
  EXPECT_EQ(r.fault.value_or(""), "corrupt:rank=1");
  EXPECT_NE(r.reason.value_or("").find("rank 1"), std::string::npos);
}

TEST(RunnerMpi, DelayAndSlowFaultsShowInTheMeasuredTimes) {
  // A 20 ms delay on the last rank is inside every sample's common start-to-end time, so the
  // fastest sample is at least 20 ms; slow:factor=3 multiplies every measured time on top.
  const int last = world_size() - 1;
  const std::string delay = "delay:rank=" + std::to_string(last) + ",us=20000";
  for (const auto& [fault, floor_us] :
       std::vector<std::pair<std::string, double>>{{delay, 20000.0}, {delay + ";slow:factor=3", 60000.0}}) {
    setenv("COLLBENCH_FAULT", fault.c_str(), 1);
    run::Runner runner(quiet());
    auto sweep = small_sweep("allreduce", Scope::global, {8});
    sweep.cases[0].stop.min_iters = sweep.cases[0].stop.max_iters = 3;
    const auto summary = runner.run(sweep);
    unsetenv("COLLBENCH_FAULT");
    if (world_rank() != 0) continue;
    const auto& r = summary.records.at(0);
    EXPECT_EQ(r.fault.value_or(""), fault);
    ASSERT_TRUE(r.time_us.has_value());
    EXPECT_GE(r.time_us->min, floor_us) << fault;
    // The delayed rank enters last and waits least inside the collective.
    if (world_size() > 1) {
      const auto& wait = r.per_rank->wait_us;
      EXPECT_EQ(std::min_element(wait.begin(), wait.end()) - wait.begin(), last) << fault;
    }
  }
}

TEST(RunnerMpi, HierarchicalAllreduceAndAlltoallVerifyExactly) {
  const int n = world_size();
  const int m = n % 2 == 0 && n > 2 ? 2 : 1;  // 4 ranks: 2 domains of 2; 2 ranks: 2 of 1
  auto o = quiet();
  o.placement.ranks_per_domain = m;
  run::Runner runner(o);
  for (const char* name : {"allreduce", "alltoall"}) {
    // 1000 B: the allreduce count (250) does not split into domain chunks, so the flat tail runs too.
    auto sweep = small_sweep(name, Scope::global, {1000, 65536});
    for (auto& c : sweep.cases) c.algo = "hierarchical";
    for (const auto dtype : {Dtype::float32, Dtype::bfloat16}) {
      for (auto& c : sweep.cases) c.dtype = dtype;
      const auto summary = runner.run(sweep);
      EXPECT_EQ(summary.cases_failed, 0) << name;
      if (world_rank() != 0) continue;
      for (const auto& r : summary.records) {
        EXPECT_EQ(r.status, "ok") << name << " " << r.reason.value_or("");
        EXPECT_EQ(r.wrong_total, 0u) << name;
        EXPECT_EQ(r.algo_used.value_or(""), "hierarchical");
      }
    }
  }
}

TEST(RunnerMpi, HierarchicalOnUnevenDomainsIsWaived) {
  const int n = world_size();
  if (n < 3) GTEST_SKIP() << "needs 3+ ranks for uneven domains";
  auto o = quiet();
  o.placement.domain_sizes = std::to_string(n - 1) + ",1";
  run::Runner runner(o);
  auto sweep = small_sweep("allreduce", Scope::global, {4096});
  sweep.cases[0].algo = "hierarchical";
  const auto summary = runner.run(sweep);
  if (world_rank() != 0) return;
  EXPECT_EQ(summary.records.at(0).status, "waived");
  EXPECT_NE(summary.records.at(0).reason.value_or("").find("equal domain sizes"), std::string::npos);
}

TEST(RunnerMpi, WaivedAlgorithmIsARecordNotADrop) {
  auto sweep = small_sweep("allreduce", Scope::global, {4096});
  sweep.cases[0].algo = "nvls";
  run::Runner runner(quiet());
  const auto summary = runner.run(sweep);
  EXPECT_EQ(summary.cases_failed, 0);
  if (world_rank() != 0) return;
  ASSERT_EQ(summary.records.size(), 1u);
  EXPECT_EQ(summary.records[0].status, "waived");
  EXPECT_NE(summary.records[0].reason.value_or("").find("nvls"), std::string::npos);
}

}  // namespace

// Hosts: rank 0 numbers them in order of first appearance and every rank receives the numbers;
// outside a simulation every rank also receives every rank's name and pid.
// Communicator lifecycle (docs/measurement.md): a set (world dup + domain split + cross split)
// is created at its first case and freed after its last, and the cases of each set run together.
// Plain and overlap cases alternate in the sweep (two sets on the MPI backend: overlap mode polls,
// so it has a backend of its own) over three algorithms and both scopes: created up front, as
// before, both sets' 6 communicators would be alive at once; regrouped, 3 are.
TEST(RunnerMpi, CommunicatorSetsLiveFromTheirFirstCaseToTheirLast) {
  const int n = world_size();
  if (n % 2 != 0) GTEST_SKIP() << "needs an even rank count";
  auto o = quiet();
  o.placement.ranks_per_domain = n / 2;
  std::vector<plan::Case> cases;
  for (Scope scope : {Scope::domain, Scope::global}) {
    for (const char* algo : {"auto", "flat", "hierarchical"}) {
      for (const char* overlap : {"", "sleep:time=1ms"}) {
        plan::Case c = mpitest::fixed_case("allreduce", 4096, 2, scope);
        c.algo = algo;
        c.overlap = overlap;
        cases.push_back(c);
      }
    }
  }
  run::Runner runner(o);
  const auto summary = runner.run(mpitest::sweep_of("lifecycle", cases));
  EXPECT_EQ(summary.cases_failed, 0);
  EXPECT_EQ(summary.communicators, (backend::CommCounts{6, 3}));
  if (world_rank() == 0) {
    ASSERT_EQ(summary.records.size(), 12u);
    // The plain set's six cases first, in the sweep's order, then the overlap set's.
    for (std::size_t i = 0; i < 12; ++i) {
      const bool overlap = summary.records[i].case_key.find("overlap=") != std::string::npos;
      EXPECT_EQ(overlap, i >= 6) << summary.records[i].case_key;
    }
    EXPECT_EQ(summary.records[0].scope, "domain");
    EXPECT_EQ(summary.records[3].scope, "global");
    EXPECT_EQ(summary.records[4].algo_requested, "flat");
  }
}

// EP groups (Comm::block_level) are communicators of their set: created at the MoE case's
// verification launch, counted, and freed with the set.
TEST(RunnerMpi, EpGroupCommunicatorsAreCountedWithTheirSet) {
  const int n = world_size();
  if (n % 2 != 0) GTEST_SKIP() << "needs an even rank count";
  plan::Case c = mpitest::fixed_case("moe-dispatch", 0, 2);
  c.algo = "flat";
  c.params = {{"tokens", "6"}, {"ep_size", std::to_string(n / 2)}};
  plan::Case whole = c;  // one EP group over all ranks: no split
  whole.params["ep_size"] = std::to_string(n);
  run::Runner runner(quiet());
  const auto summary = runner.run(mpitest::sweep_of("ep", {c, whole, c}));
  EXPECT_EQ(summary.cases_failed, 0);
  // world + domain + cross, and the EP group's split of the world, made once.
  EXPECT_EQ(summary.communicators, (backend::CommCounts{4, 4}));
}

TEST(SessionMpi, EveryRankKnowsEveryHostAndItsNumber) {
  const run::Control control;
  const run::ProcessInfo info = run::gather_process_info(control);
  const auto n = static_cast<std::size_t>(world_size());
  ASSERT_EQ(info.host_index.size(), n);
  ASSERT_EQ(info.hosts.size(), n);
  EXPECT_EQ(info.host_index[0], 0);  // the first host seen is host 0
  for (std::size_t r = 0; r < n; ++r) {
    EXPECT_EQ(info.hosts[r].rank, static_cast<int>(r));
    EXPECT_FALSE(info.hosts[r].host.empty());
    EXPECT_GT(info.hosts[r].pid, 0);
    // Same number <=> same name.
    for (std::size_t q = 0; q < n; ++q) {
      EXPECT_EQ(info.host_index[r] == info.host_index[q], info.hosts[r].host == info.hosts[q].host);
    }
  }
  if (n > 1) {
    EXPECT_NE(info.hosts[0].pid, info.hosts[1].pid);
  }
}
