// Google Benchmark for the MoE routing generator (host only, one core): the per-rank
// preparation a 1,024-GPU run does before its first dispatch (target < 50 ms), and the offline
// counts matrix the model builds for a whole run (target < 30 s). Figures: docs/moe.md.
#include <benchmark/benchmark.h>

#include <algorithm>
#include <map>
#include <span>
#include <string>

#include "collbench/coll/collective.hpp"
#include "collbench/coll/moe_plan.hpp"
#include "collbench/workload/counts.hpp"
#include "collbench/workload/routing.hpp"

namespace {

using namespace collbench::workload;

// DeepSeek-V3 routing (256 experts, top-8, 8 groups) on num_ranks ranks in EP groups of 256.
RoutingConfig deepseek_v3(int num_ranks, int tokens_per_rank, int groups_per_token) {
  RoutingConfig c;
  c.num_ranks = num_ranks;
  c.num_experts = 256;
  c.top_k = 8;
  c.num_expert_groups = 8;
  c.tokens_per_rank = tokens_per_rank;
  c.settings.ep_size = 256;
  c.settings.groups_per_token = groups_per_token;
  return c;
}

constexpr int kSrcRank = 517;  // in EP group 2 of 4

// Per-destination counts only (what the counts exchange sends).
void BM_RankCounts(benchmark::State& state) {
  const RoutingGenerator gen(deepseek_v3(1024, 16384, static_cast<int>(state.range(0))));
  for (auto _ : state) {
    DestinationCounts counts = gen.count_destinations(kSrcRank);
    benchmark::DoNotOptimize(counts.dedup_rows.data());
  }
  state.SetItemsProcessed(state.iterations() * 16384);
}

// One rank's routing (token -> 8 experts and ranks) plus its send layout, which holds the
// per-destination counts: everything a source rank needs before it packs its buffer.
void BM_RankRoutingAndLayout(benchmark::State& state) {
  const RoutingGenerator gen(deepseek_v3(1024, 16384, static_cast<int>(state.range(0))));
  for (auto _ : state) {
    RankRouting routing = gen.route_rank(kSrcRank);
    SendLayout layout = send_layout(routing, gen.num_ranks(), RowConvention::dedup);
    benchmark::DoNotOptimize(layout.rows.data());
  }
  state.SetItemsProcessed(state.iterations() * 16384);
}

// The whole run offline: 1,024 ranks x 4096 tokens, both row conventions, plus load statistics.
void BM_CountsMatrix1024(benchmark::State& state) {
  const RoutingGenerator gen(deepseek_v3(1024, 4096, static_cast<int>(state.range(0))));
  double imbalance = 0.0;
  for (auto _ : state) {
    CountsMatrices m = gen.counts_matrices();
    imbalance = load_stats(m.dedup.receive_rows()).imbalance;
    benchmark::DoNotOptimize(m.dedup.rows.data());
  }
  state.counters["imbalance"] = imbalance;
  state.SetItemsProcessed(state.iterations() * 1024 * 4096);
}

// One rank's preparation of a simulated-scale MoE case (what every rank of a run does before its
// first exchange, and so what SMPI pays once per simulated rank): the DeepSeek-V3 latency
// workload (128 tokens per rank) in EP groups of 256 on `ranks` ranks, hierarchical dispatch over
// domains of 64, shape of rank 517 % ranks. Counts the routing the run needs at this scale.
void BM_MoeCaseShape(benchmark::State& state) {
  const int ranks = static_cast<int>(state.range(0));
  const std::map<std::string, std::string> params{{"workload", "deepseek-v3-latency"}, {"ep_size", "256"}};
  collbench::coll::CaseContext ctx;
  ctx.num_ranks = ranks;
  ctx.rank = 517 % ranks;
  ctx.params = &params;
  ctx.algo = "hierarchical";
  ctx.placement = collbench::placement_from_ranks_per_domain(ranks, 64);
  const auto& coll = collbench::coll::find_collective("moe-dispatch");
  for (auto _ : state) {
    // A fresh seed each time so the cached workload is not reused.
    const std::map<std::string, std::string> fresh{
        {"workload", "deepseek-v3-latency"}, {"ep_size", "256"}, {"seed", std::to_string(state.iterations() + 2)}};
    ctx.params = &fresh;
    benchmark::DoNotOptimize(coll.shape_for(0, ctx).bytes);
  }
}

// The same case with the counts shared (the runner's path): the rank routes its own tokens, takes
// the gathered matrix and builds its shape. The gather's communication is not in this figure.
void BM_MoeCaseShapeShared(benchmark::State& state) {
  const int ranks = static_cast<int>(state.range(0));
  collbench::coll::CaseContext ctx;
  ctx.num_ranks = ranks;
  ctx.rank = 517 % ranks;
  ctx.algo = "hierarchical";
  ctx.placement = collbench::placement_from_ranks_per_domain(ranks, 64);
  const auto& coll = collbench::coll::find_collective("moe-dispatch");
  for (auto _ : state) {
    state.PauseTiming();
    const std::map<std::string, std::string> fresh{
        {"workload", "deepseek-v3-latency"}, {"ep_size", "256"}, {"seed", std::to_string(state.iterations() + 100)}};
    ctx.params = &fresh;
    const auto config = collbench::coll::moe_config(collbench::coll::parse_moe_params(fresh), ranks);
    collbench::coll::KnownRowsGather gather(ctx.rank, RoutingGenerator(config.routing).counts_matrices().dedup.rows);
    state.ResumeTiming();
    coll.share_inputs(0, ctx, gather);
    benchmark::DoNotOptimize(coll.shape_for(0, ctx).bytes);
  }
}

}  // namespace

// Argument: groups_per_token (0 = unlimited, 4 = DeepSeek-V3's limit).
BENCHMARK(BM_RankCounts)->ArgName("groups_per_token")->Arg(0)->Arg(4)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_RankRoutingAndLayout)->ArgName("groups_per_token")->Arg(0)->Arg(4)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_CountsMatrix1024)->ArgName("groups_per_token")->Arg(0)->Arg(4)->Iterations(1)->Unit(benchmark::kSecond);

BENCHMARK(BM_MoeCaseShape)->ArgName("ranks")->Arg(256)->Arg(1024)->Iterations(2)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_MoeCaseShapeShared)->ArgName("ranks")->Arg(256)->Arg(1024)->Iterations(2)->Unit(benchmark::kMillisecond);

BENCHMARK_MAIN();
