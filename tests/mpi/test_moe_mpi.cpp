// MoE harness under MPI (mpiexec -n 2 and -n 4): moe-dispatch, moe-combine and moe-roundtrip
// verify exactly for uniform and skewed routing, flat and hierarchical (4 ranks: 2 domains of 2;
// 2 ranks: 2 domains of 1), with the counts exchange timed and untimed; a corrupted receive
// buffer is caught on the rank that holds it; per-class bytes in records and on the wire match
// the counts matrix. Token counts are small so the whole suite stays fast on 2 cores.
#include <gtest/gtest.h>
#include <mpi.h>

#include <functional>
#include <map>
#include <string>
#include <thread>
#include <vector>

#include "collbench/backend/hierarchical.hpp"
#include "collbench/backend/registry.hpp"
#include "collbench/coll/collective.hpp"
#include "collbench/coll/moe_plan.hpp"
#include "collbench/model/traffic.hpp"
#include "collbench/run/control_row_gather.hpp"
#include "collbench/run/runner.hpp"
#include "collbench/workload/counts.hpp"
#include "mpi_test_util.hpp"

namespace {

using namespace collbench;
using Params = std::map<std::string, std::string>;

const char* const kUniform = "{popularity: uniform}";
// Strongly skewed: the experts of local rank 1 of every EP group are 6x as popular.
const char* const kHotRank = "{popularity: one-hot-rank, hot_rank: 1, hot_factor: 6, groups_per_token: 0}";
const char* const kLognormal = "{popularity: lognormal, sigma: 1.2}";

class MoeMpi : public ::testing::Test {
 protected:
  void SetUp() override {
    int n = 0;
    MPI_Comm_size(MPI_COMM_WORLD, &n);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank_);
    backend::BackendOptions o;
    if (static_cast<unsigned>(n) > std::thread::hardware_concurrency()) o.progress = backend::Progress::yield;
    backend_ = backend::make_backend("mpi", o);
    world_ = backend_->world();
    // 4 ranks: 2 domains of 2; 2 ranks: 2 domains of 1; otherwise one domain.
    const int m = n >= 4 && n % 2 == 0 ? n / 2 : (n == 2 ? 1 : n);
    placement_ = placement_from_ranks_per_domain(n, m);
    const int d = placement_.domain_of(rank_);
    const int local = rank_ - placement_.domain_offset(d);
    domain_ = backend_->split(d, rank_);
    cross_ = backend_->split(local, d);
    hier_ = std::make_unique<backend::HierarchicalComm>(*backend_, *domain_, *cross_, *world_);
  }

  struct Run {
    std::uint64_t wrong = 0;  // this rank's
    coll::Shape shape;
  };

  // fill, (prepare), launch twice, verify; `corrupt` may damage this rank's result first.
  Run run(const std::string& collective, const std::string& algo, const Params& params,
          const std::function<void(unsigned char*, std::size_t)>& corrupt = {}) {
    const auto& c = coll::find_collective(collective);
    coll::CaseContext ctx;
    ctx.dtype = *c.case_dtype(params);
    ctx.rank = world_->rank();
    ctx.num_ranks = world_->size();
    ctx.params = &params;
    ctx.algo = algo;
    ctx.placement = placement_;
    c.check_params(params);
    EXPECT_FALSE(c.waiver(ctx)) << *c.waiver(ctx);
    backend::Comm& comm = algo == "hierarchical" ? static_cast<backend::Comm&>(*hier_) : *world_;
    Run out;
    out.shape = c.shape_for(0, ctx);
    const std::size_t elem = dtype_size(ctx.dtype);
    std::vector<unsigned char> host(std::max<std::size_t>(out.shape.send_elems * elem, 1), 0);
    c.fill(host.data(), out.shape, ctx);
    auto send = backend_->allocate(host.size());
    backend_->upload(*send, host.data(), host.size());
    const std::size_t recv_bytes = std::max<std::size_t>(out.shape.recv_elems * elem, 1);
    auto recv = backend_->allocate(recv_bytes);
    std::vector<unsigned char> poison(recv_bytes, 0xA5);  // nothing may pass by accident
    backend_->upload(*recv, poison.data(), poison.size());
    c.prepare(comm, send->data(), recv->data(), out.shape, ctx);
    c.launch(comm, send->data(), recv->data(), out.shape, ctx);
    c.launch(comm, send->data(), recv->data(), out.shape, ctx);  // repeatable (warm-up + timed)
    for (const auto& side : c.side_operations(out.shape))
      c.launch_side(side, comm, send->data(), recv->data(), out.shape, ctx);
    std::vector<unsigned char> result(recv_bytes);
    backend_->download(result.data(), *recv, recv_bytes);
    if (corrupt) corrupt(result.data(), out.shape.recv_elems * elem);
    out.wrong = c.verify(result.data(), out.shape, ctx);
    return out;
  }

  int rank_ = 0;
  Placement placement_;
  std::unique_ptr<backend::Backend> backend_;
  std::unique_ptr<backend::Comm> world_, domain_, cross_;
  std::unique_ptr<backend::HierarchicalComm> hier_;
};

TEST_F(MoeMpi, EveryOpVerifiesForUniformAndSkewedRoutingFlatAndHierarchical) {
  int cases = 0;
  for (const char* op : {"moe-dispatch", "moe-combine", "moe-roundtrip"}) {
    for (const char* routing : {kUniform, kHotRank, kLognormal}) {
      for (const char* algo : {"flat", "hierarchical"}) {
        const Params p{{"tokens", "12"}, {"routing", routing}};
        const auto r = run(op, algo, p);
        EXPECT_EQ(mpitest::sum_over_ranks(r.wrong), 0u) << op << " " << routing << " " << algo;
        EXPECT_GT(r.shape.bytes_max_rank.value_or(0), 0u);
        ++cases;
      }
    }
  }
  EXPECT_EQ(cases, 18);
}

TEST_F(MoeMpi, CopyRowsBf16DispatchUntimedCountsAndEpGroupsVerify) {
  const int n = world_->size();
  const std::vector<Params> variants{
      {{"tokens", "10"}, {"rows", "copy"}, {"routing", kHotRank}},
      {{"tokens", "10"}, {"workload", "deepseek-v3-bf16"}, {"counts_exchange", "untimed"}},
      {{"tokens", "7"}, {"ep_size", std::to_string(n / 2)}, {"seed", "42"}, {"routing", kLognormal}},
      {{"tokens", "9"}, {"routing", "{popularity: uniform, tokens: linear}"}},  // T - rank tokens
  };
  for (const auto& p : variants) {
    for (const char* algo : {"flat", "hierarchical"}) {
      const auto r = run("moe-roundtrip", algo, p);
      std::string what;
      for (const auto& [k, v] : p) what += k + "=" + v + " ";
      EXPECT_EQ(mpitest::sum_over_ranks(r.wrong), 0u) << what << algo;
    }
  }
}

// EP groups of two domains (4 ranks, one per domain, ep_size 2): the hierarchical exchange runs
// the domain stages of the group's domains and the cross stage on the group's block of the cross
// communicator; every row still arrives.
TEST_F(MoeMpi, HierarchicalExchangeInsideEpGroupsOfTwoDomainsVerifies) {
  const int n = world_->size();
  if (n != 4) GTEST_SKIP() << "needs 4 ranks";
  // Without consecutive domains a block is the global communicator's (flat inside the block).
  EXPECT_EQ(dynamic_cast<backend::HierarchicalComm*>(hier_->block_level(2)), nullptr);
  EXPECT_EQ(hier_->block_level(4), hier_.get());
  placement_ = placement_from_ranks_per_domain(n, 1);
  domain_ = backend_->split(rank_, 0);
  cross_ = backend_->split(0, rank_);
  hier_ = std::make_unique<backend::HierarchicalComm>(*backend_, *domain_, *cross_, *world_, true);
  // The group's block of the hierarchical communicator is hierarchical again: 2 domains of 1.
  auto* block = dynamic_cast<backend::HierarchicalComm*>(hier_->block_level(2));
  ASSERT_NE(block, nullptr);
  EXPECT_EQ(block->size(), 2);
  EXPECT_EQ(block->cross_level()->size(), 2);
  EXPECT_EQ(block->domain_level()->size(), 1);
  for (const char* op : {"moe-dispatch", "moe-combine", "moe-roundtrip"}) {
    const Params p{{"tokens", "9"}, {"ep_size", "2"}, {"seed", "7"}, {"routing", kLognormal}};
    const auto r = run(op, "hierarchical", p);
    EXPECT_EQ(mpitest::sum_over_ranks(r.wrong), 0u) << op;
  }
}

TEST_F(MoeMpi, CorruptedReceiveBufferIsCaughtOnItsRank) {
  const int victim = world_->size() - 1;
  for (const char* op : {"moe-dispatch", "moe-combine", "moe-roundtrip"}) {
    for (const char* algo : {"flat", "hierarchical"}) {
      const Params p{{"tokens", "8"}, {"routing", kHotRank}};
      // One flipped bit in the middle of the victim's receive buffer (a row, or a staged row).
      const auto r = run(op, algo, p, [&](unsigned char* buf, std::size_t bytes) {
        if (rank_ == victim && bytes > 0) buf[bytes / 2] ^= 0x01;
      });
      if (rank_ == victim) {
        EXPECT_GT(r.wrong, 0u) << op << " " << algo;
      } else {
        EXPECT_EQ(r.wrong, 0u) << op << " " << algo << " rank " << rank_;
      }
    }
  }
  // A wrong count in the counts region (first 8 bytes: rows from rank 0) is caught too.
  const auto r = run("moe-dispatch", "flat", {{"tokens", "8"}}, [&](unsigned char* buf, std::size_t) {
    if (rank_ == victim) buf[0] ^= 0x02;
  });
  EXPECT_EQ(mpitest::sum_over_ranks(r.wrong), 1u);
  if (rank_ == victim) {
    EXPECT_EQ(r.wrong, 1u);
  }
}

// The bytes each stage puts on the wire, summed over ranks, against the counts matrix: the
// flat exchange sends exactly the matrix's in-domain and off-domain bytes; the hierarchical one
// sends the off-domain bytes once across domains.
TEST_F(MoeMpi, PerClassBytesMatchTheCountsMatrix) {
  const int n = world_->size();
  const Params p{{"tokens", "12"}, {"routing", kHotRank}};
  const auto w = coll::moe_workload(coll::parse_moe_params(p), n);
  const auto& counts = w->matrix();
  const auto traffic = model::summarize_traffic(
      coll::moe_traffic(counts, w->dispatch_row_bytes, w->combine_row_bytes, coll::MoeOp::dispatch), placement_);
  const auto rows = workload::link_class_rows(counts, placement_);
  const auto mine = static_cast<std::size_t>(rank_);
  const auto row_bytes = static_cast<std::uint64_t>(w->dispatch_row_bytes);
  EXPECT_EQ(traffic.per_rank[mine].send_in_domain, static_cast<std::uint64_t>(rows.send_in_domain[mine]) * row_bytes);
  EXPECT_EQ(traffic.per_rank[mine].send_off_domain, static_cast<std::uint64_t>(rows.send_off_domain[mine]) * row_bytes);
  EXPECT_EQ(traffic.per_rank[mine].recv_off_domain, static_cast<std::uint64_t>(rows.recv_off_domain[mine]) * row_bytes);

  for (const auto algo : {coll::MoeAlgo::flat, coll::MoeAlgo::hierarchical}) {
    const auto L = coll::moe_layout(counts, w->dispatch_row_bytes, w->combine_row_bytes, coll::MoeOp::dispatch, algo,
                                    rank_, placement_);
    std::uint64_t in_domain = 0, off_domain = 0;
    const int my_domain = placement_.domain_of(rank_);
    const int my_local = rank_ - placement_.domain_offset(my_domain);
    for (const auto& st : L.dispatch.stages) {
      for (std::size_t peer = 0; peer < st.send_counts.size(); ++peer) {
        const std::uint64_t bytes = st.send_counts[peer] * coll::kMoeCarrierBytes;
        const int q = static_cast<int>(peer);
        if (st.level == coll::ExchangeStage::Level::comm) {
          if (q == rank_) continue;
          (placement_.domain_of(q) == my_domain ? in_domain : off_domain) += bytes;
        } else if (st.level == coll::ExchangeStage::Level::domain) {
          if (q != my_local) in_domain += bytes;
        } else if (q != my_domain) {
          off_domain += bytes;
        }
      }
    }
    const std::uint64_t total_off = mpitest::sum_over_ranks(off_domain);
    EXPECT_EQ(total_off, traffic.bytes_off_domain);
    if (algo == coll::MoeAlgo::flat) {
      EXPECT_EQ(in_domain, traffic.per_rank[mine].send_in_domain);
      EXPECT_EQ(off_domain, traffic.per_rank[mine].send_off_domain);
    }
  }
  if (placement_.num_domains() > 1) {
    EXPECT_GT(traffic.bytes_off_domain, 0u);
  }
}

// Through the runner: records carry the workload block, verified results, per-class bytes from
// the matrix, and the counts-exchange time.
TEST_F(MoeMpi, RunnerRecordsCarryTheWorkload) {
  // A seed no other test uses, so that the cached workload is the runner's.
  const Params kRunnerParams{{"tokens", "8"}, {"routing", kHotRank}, {"seed", "31"}};
  const int n = world_->size();
  plan::Sweep s;
  s.name = "moe-test";
  s.source = "<test>";
  for (const char* collective : {"moe-dispatch", "moe-combine"}) {
    for (const char* algo : {"flat", "hierarchical"}) {
      plan::Case c;
      c.collective = collective;
      c.algo = algo;
      c.params = kRunnerParams;
      c.stop.min_iters = c.stop.max_iters = 3;
      c.stop.warmup = 1;
      c.stop.min_time_s = 0;
      s.cases.push_back(c);
    }
  }
  run::RunnerOptions o;
  o.outputs = {report::OutputTarget{"none"}};
  o.show_progress = false;
  o.placement.ranks_per_domain = placement_.largest_domain();
  run::Runner runner(o);
  const auto summary = runner.run(s);
  EXPECT_EQ(summary.cases_failed, 0);
  if (rank_ != 0) return;
  ASSERT_EQ(summary.records.size(), 4u);
  const auto w = coll::moe_workload(coll::parse_moe_params(kRunnerParams), n);
  // The runner shared the counts (each rank routed its own tokens) and they are the offline ones.
  EXPECT_TRUE(w->counts_shared);
  const auto config = coll::moe_config(coll::parse_moe_params(kRunnerParams), n);
  EXPECT_EQ(w->matrix().rows,
            workload::RoutingGenerator(config.routing).counts_matrices().rows(config.profile.rows).rows);
  for (const auto& r : summary.records) {
    SCOPED_TRACE(r.collective + " " + r.algo_requested);
    EXPECT_EQ(r.status, "ok");
    EXPECT_TRUE(r.checked);
    EXPECT_EQ(r.wrong_total, 0u);
    EXPECT_EQ(r.dtype, r.collective == "moe-dispatch" ? "float8e4m3" : "bfloat16");
    const auto op = coll::moe_op_of(r.collective);
    const auto t = model::summarize_traffic(
        coll::moe_traffic(w->matrix(), w->dispatch_row_bytes, w->combine_row_bytes, op), placement_);
    ASSERT_TRUE(r.workload.is_object());
    EXPECT_EQ(r.workload["name"], "deepseek-v3");
    EXPECT_EQ(r.workload["tokens_per_rank"], 8);
    EXPECT_EQ(r.workload["bytes_in_domain"].get<std::uint64_t>(), t.bytes_in_domain);
    EXPECT_EQ(r.workload["bytes_off_domain"].get<std::uint64_t>(), t.bytes_off_domain);
    EXPECT_EQ(r.bytes_max_rank, t.bytes_max_rank);
    EXPECT_EQ(r.bytes_logical_total, t.bytes_logical_total);
    EXPECT_EQ(r.bytes, t.bytes_max_rank);
    EXPECT_EQ(r.workload["hottest_rank"], workload::load_stats(w->matrix().receive_rows()).hottest_rank_idx);
    EXPECT_EQ(r.workload["algorithm"], r.algo_requested);
    if (r.collective == "moe-dispatch") {
      EXPECT_EQ(r.workload["counts_exchange"], "timed");
      EXPECT_TRUE(r.workload["counts_exchange_us"].is_number());
    } else {
      EXPECT_TRUE(r.workload["counts_exchange"].is_null());  // combine sends no counts
    }
  }
}

// The control communicator's gather: rows spread over the ranks in blocks, assembled in row order
// on every rank (fewer rows than ranks, as many, and more).
TEST_F(MoeMpi, ControlRowGatherAssemblesEveryRankRowsInOrder) {
  const run::Control control;
  run::ControlRowGather gather(control);
  const int n = control.size();
  for (const int rows : {1, n, 2 * n + 1}) {
    SCOPED_TRACE(rows);
    const std::size_t len = 3;
    std::vector<std::int64_t> mine;
    for (const int row : gather.my_rows(rows)) {
      for (std::size_t j = 0; j < len; ++j) mine.push_back(row * 100 + static_cast<std::int64_t>(j));
    }
    const auto all = gather.gather(mine, rows, len);
    ASSERT_EQ(all.size(), static_cast<std::size_t>(rows) * len);
    for (int row = 0; row < rows; ++row) {
      for (std::size_t j = 0; j < len; ++j) {
        EXPECT_EQ(all[static_cast<std::size_t>(row) * len + j], row * 100 + static_cast<std::int64_t>(j));
      }
    }
  }
}

}  // namespace
