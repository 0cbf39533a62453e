// Google Benchmark for the MoE routing generator (host only, one core): the per-rank
// preparation a 1,024-GPU run does before its first dispatch (target < 50 ms), and the offline
// counts matrix the model builds for a whole run (target < 30 s). Figures: docs/moe.md.
#include <benchmark/benchmark.h>

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

}  // namespace

// Argument: groups_per_token (0 = unlimited, 4 = DeepSeek-V3's limit).
BENCHMARK(BM_RankCounts)->ArgName("groups_per_token")->Arg(0)->Arg(4)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_RankRoutingAndLayout)->ArgName("groups_per_token")->Arg(0)->Arg(4)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_CountsMatrix1024)->ArgName("groups_per_token")->Arg(0)->Arg(4)->Iterations(1)->Unit(benchmark::kSecond);

BENCHMARK_MAIN();
