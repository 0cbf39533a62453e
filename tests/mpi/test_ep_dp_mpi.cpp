// ep-dp-concurrent under MPI: the grouped all-to-all inside each domain and all-reduce across
// domains verify exactly (out of place and in place, spin and yield progress), the record carries
// the side timings and the interference ratio, and one domain or scope domain is waived with the
// reason. No timing assertions (ranks may share cores).
#include <gtest/gtest.h>
#include <mpi.h>

#include <cstring>
#include <vector>

#include "collbench/backend/registry.hpp"
#include "collbench/core/error.hpp"
#include "collbench/run/runner.hpp"
#include "mpi_test_util.hpp"

namespace {

using namespace collbench;

using mpitest::world_rank;
using mpitest::world_size;

plan::Sweep epdp_sweep(std::vector<std::uint64_t> sizes, bool in_place = false, Scope scope = Scope::global) {
  std::vector<plan::Case> cases;
  for (auto b : sizes) {
    cases.push_back(mpitest::fixed_case("ep-dp-concurrent", b, 4, scope));
    cases.back().in_place = in_place;
  }
  return mpitest::sweep_of("epdp", std::move(cases));
}

run::RunnerOptions options(int ranks_per_domain, const std::string& progress) {
  run::RunnerOptions o;
  o.outputs = {report::OutputTarget{"none"}};
  o.show_progress = false;
  o.progress = progress;
  o.placement.ranks_per_domain = ranks_per_domain;
  return o;
}

// Two domains: ranks_per_domain n/2 (np 4: 2 x 2; np 2: 2 x 1).
TEST(EpDpMpi, VerifiesExactlyAndRecordsSideTimings) {
  const int n = world_size();
  if (n % 2 != 0) GTEST_SKIP() << "needs an even rank count";
  // Spin (blocking-free group: MPI_Waitall) only where every rank has a core of its own.
  for (const std::string progress : {"yield", n <= 2 ? "spin" : "yield"}) {
    for (const bool in_place : {false, true}) {
      run::Runner runner(options(n / 2, progress));
      auto sweep = epdp_sweep({4096, 1u << 16}, in_place);
      sweep.cases[1].params["dp_bytes"] = "20000";  // not a multiple of the domain size: the all-reduce does not care
      const auto summary = runner.run(sweep);
      EXPECT_EQ(summary.cases_failed, 0);
      EXPECT_EQ(summary.cases_waived, 0);
      if (world_rank() != 0) continue;
      ASSERT_EQ(summary.records.size(), 2u);
      for (const auto& r : summary.records) {
        EXPECT_EQ(r.status, "ok") << r.reason.value_or("");
        EXPECT_TRUE(r.checked);
        EXPECT_EQ(r.wrong_total, 0u);
        EXPECT_EQ(r.num_domains, 2);
        EXPECT_EQ(r.comm_ranks, n);
        EXPECT_EQ(r.busbw_gbps, 0.0);
        ASSERT_TRUE(r.extra.contains("concurrent")) << r.case_key;
        const auto& cc = r.extra.at("concurrent");
        EXPECT_EQ(cc.at("ep_ranks").get<int>(), n / 2);
        EXPECT_EQ(cc.at("dp_ranks").get<int>(), 2);
        EXPECT_GT(cc.at("ep_alone_us").get<double>(), 0.0);
        EXPECT_GT(cc.at("dp_alone_us").get<double>(), 0.0);
        ASSERT_TRUE(r.time_us.has_value());
        EXPECT_EQ(cc.at("both_us").get<double>(), r.time_us->p50);
        const double slowest = std::max(cc.at("ep_alone_us").get<double>(), cc.at("dp_alone_us").get<double>());
        EXPECT_DOUBLE_EQ(cc.at("interference").get<double>(), r.time_us->p50 / slowest);
      }
      const auto& second = summary.records[1];
      EXPECT_EQ(second.extra.at("concurrent").at("dp_bytes").get<std::uint64_t>(), 20000u);
      EXPECT_NE(second.case_key.find("@dp_bytes=20000"), std::string::npos) << second.case_key;
      EXPECT_EQ(second.bytes, 1u << 16);
    }
  }
}

TEST(EpDpMpi, OneDomainAndScopeDomainAreWaived) {
  const int n = world_size();
  run::Runner one(options(n, "yield"));
  const auto s1 = one.run(epdp_sweep({4096}));
  EXPECT_EQ(s1.cases_waived, 1);
  if (world_rank() == 0) {
    ASSERT_EQ(s1.records.size(), 1u);
    EXPECT_EQ(s1.records[0].status, "waived");
    EXPECT_NE(s1.records[0].reason.value_or("").find("needs at least 2 domains"), std::string::npos)
        << s1.records[0].reason.value_or("");
  }
  if (n % 2 != 0) return;
  run::Runner two(options(n / 2, "yield"));
  const auto s2 = two.run(epdp_sweep({4096}, false, Scope::domain));
  EXPECT_EQ(s2.cases_waived, 1);
  if (world_rank() == 0) {
    ASSERT_EQ(s2.records.size(), 1u);
    EXPECT_NE(s2.records[0].reason.value_or("").find("spans domains"), std::string::npos)
        << s2.records[0].reason.value_or("");
  }
}

// The backend's group directly: an all-to-all on one communicator and an all-reduce on another,
// issued together and completed by group_end().
TEST(EpDpMpi, BackendGroupSpansCommunicators) {
  const int n = world_size();
  const int me = world_rank();
  if (n % 2 != 0) GTEST_SKIP() << "needs an even rank count";
  for (const auto progress : {backend::Progress::yield, backend::Progress::spin}) {
    if (progress == backend::Progress::spin && n > 2) continue;  // 2 cores: spinning ranks starve each other
    backend::BackendOptions bo;
    bo.progress = progress;
    auto b = backend::make_backend("mpi", bo);
    const int m = n / 2;
    auto domain = b->split(me / m, me);
    auto cross = b->split(me % m, me / m);
    ASSERT_FALSE(domain->group_waiver().has_value());
    std::vector<int> a2a_in(static_cast<std::size_t>(m)), a2a_out(static_cast<std::size_t>(m), -1);
    for (int j = 0; j < m; ++j) a2a_in[static_cast<std::size_t>(j)] = me * 100 + j;
    std::vector<int> ar(3, me + 1);
    // An all-to-all-v in the group too: its counts reach MPI as int arrays the backend converts,
    // which must live until group_end completes the request (ASan builds catch it otherwise).
    std::vector<std::size_t> ones(static_cast<std::size_t>(m), 1), displs(static_cast<std::size_t>(m));
    std::vector<int> v_in(static_cast<std::size_t>(m)), v_out(static_cast<std::size_t>(m), -1);
    for (int j = 0; j < m; ++j) {
      displs[static_cast<std::size_t>(j)] = static_cast<std::size_t>(j);
      v_in[static_cast<std::size_t>(j)] = me * 1000 + j;
    }
    domain->group_start();
    domain->run(
        {.op = NcclOp::alltoall, .dtype = Dtype::int32, .send = a2a_in.data(), .recv = a2a_out.data(), .count = 1});
    const backend::PeerLayout peers{ones, displs, ones, displs};
    domain->run(
        {.op = NcclOp::alltoallv, .dtype = Dtype::int32, .send = v_in.data(), .recv = v_out.data(), .peers = &peers});
    cross->run({.op = NcclOp::allreduce, .dtype = Dtype::int32, .send = ar.data(), .recv = ar.data(), .count = 3});
    domain->group_end();
    const int d = me / m;
    for (int s = 0; s < m; ++s) EXPECT_EQ(a2a_out[static_cast<std::size_t>(s)], (d * m + s) * 100 + me % m);
    for (int s = 0; s < m; ++s) EXPECT_EQ(v_out[static_cast<std::size_t>(s)], (d * m + s) * 1000 + me % m);
    // Ranks with local index l: l + 1 and m + l + 1.
    for (int v : ar) EXPECT_EQ(v, (me % m + 1) + (m + me % m + 1));
    EXPECT_THROW(domain->group_end(), Error);  // no open group
  }
}

}  // namespace
