// Overlap mode, pure parts: the formulas (exposed time, efficiency) against hand-computed values
// including the degenerate cases, the pipeline schedule and its ideal, compute-load parsing and
// sizing from the DeepSeek-V3 profile, per-chunk scaling, the record's overlap object, and the
// CPU loads' results (not their speed: no timing here).
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <stdexcept>
#include <thread>

#include "collbench/core/error.hpp"
#include "collbench/overlap/load.hpp"
#include "collbench/overlap/metrics.hpp"
#include "collbench/overlap/pipeline.hpp"
#include "collbench/overlap/spec.hpp"
#include "collbench/overlap/workers.hpp"
#include "collbench/plan/sweep.hpp"
#include "collbench/run/measure.hpp"

using namespace collbench;
using namespace collbench::overlap;

namespace {

std::string message_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const InputError& e) {
    return e.what();
  }
  return "(no InputError)";
}

}  // namespace

TEST(OverlapMetrics, HandComputed) {
  // comm 100, compute 400, both 420: 20 us exposed; saved 500 - 420 = 80 of at most 100.
  auto m = overlap_metrics(100, 400, 420);
  EXPECT_DOUBLE_EQ(m.exposed_us, 20.0);
  ASSERT_TRUE(m.efficiency);
  EXPECT_DOUBLE_EQ(*m.efficiency, 0.8);
  // Perfect overlap of equal parts: both = max = 300, saved 300 of 300.
  m = overlap_metrics(300, 300, 300);
  EXPECT_DOUBLE_EQ(*m.efficiency, 1.0);
  EXPECT_DOUBLE_EQ(m.exposed_us, 0.0);
  // Serial: both = sum, nothing saved; the whole collective is exposed.
  m = overlap_metrics(300, 500, 800);
  EXPECT_DOUBLE_EQ(*m.efficiency, 0.0);
  EXPECT_DOUBLE_EQ(m.exposed_us, 300.0);
  // Contention: both (1300) is longer than one after the other (1200): negative efficiency,
  // and more than the collective's own time exposed.
  m = overlap_metrics(200, 1000, 1300);
  EXPECT_DOUBLE_EQ(*m.efficiency, -0.5);
  EXPECT_DOUBLE_EQ(m.exposed_us, 300.0);
  // Communication longer than compute: normalised by the compute (the shorter).
  m = overlap_metrics(1000, 250, 1100);
  EXPECT_DOUBLE_EQ(*m.efficiency, 0.6);  // (1250 - 1100) / 250
  EXPECT_DOUBLE_EQ(m.exposed_us, 850.0);
}

TEST(OverlapMetrics, DegenerateCases) {
  // No compute: nothing to hide behind; everything exposed, efficiency undefined (null).
  auto m = overlap_metrics(100, 0, 100);
  EXPECT_DOUBLE_EQ(m.exposed_us, 100.0);
  EXPECT_FALSE(m.efficiency.has_value());
  // No communication: nothing exposed, efficiency undefined.
  m = overlap_metrics(0, 500, 500);
  EXPECT_DOUBLE_EQ(m.exposed_us, 0.0);
  EXPECT_FALSE(m.efficiency.has_value());
  m = overlap_metrics(0, 0, 0);
  EXPECT_FALSE(m.efficiency.has_value());
  // Noise can make both slightly shorter than compute alone: reported, not clamped.
  m = overlap_metrics(50, 1000, 990);
  EXPECT_DOUBLE_EQ(m.exposed_us, -10.0);
  EXPECT_DOUBLE_EQ(*m.efficiency, 1.2);
  EXPECT_THROW(overlap_metrics(-1, 1, 1), std::invalid_argument);
  EXPECT_THROW(overlap_metrics(1, 1, std::numeric_limits<double>::infinity()), std::invalid_argument);
}

TEST(OverlapPipeline, TwoStageScheduleByHand) {
  const auto s = pipeline_schedule(4, 2);
  ASSERT_EQ(s.size(), 6u);
  // slot: compute chunk, then communication (combine of s-2 first, dispatch of s)
  EXPECT_EQ(s[0].compute_chunk, -1);
  EXPECT_EQ(s[0].comm, (std::vector<ChunkOp>{{0, 0}}));
  EXPECT_EQ(s[1].compute_chunk, 0);
  EXPECT_EQ(s[1].comm, (std::vector<ChunkOp>{{1, 0}}));
  EXPECT_EQ(s[2].compute_chunk, 1);
  EXPECT_EQ(s[2].comm, (std::vector<ChunkOp>{{0, 1}, {2, 0}}));
  EXPECT_EQ(s[3].compute_chunk, 2);
  EXPECT_EQ(s[3].comm, (std::vector<ChunkOp>{{1, 1}, {3, 0}}));
  EXPECT_EQ(s[4].compute_chunk, 3);
  EXPECT_EQ(s[4].comm, (std::vector<ChunkOp>{{2, 1}}));
  EXPECT_EQ(s[5].compute_chunk, -1);
  EXPECT_EQ(s[5].comm, (std::vector<ChunkOp>{{3, 1}}));
  // dispatch 1, combine 2, compute 4 per chunk:
  // 1 + max(4,1) + max(4,3) + max(4,3) + max(4,2) + 2 = 19; ideal max(16, 12) = 16.
  EXPECT_DOUBLE_EQ(schedule_time_us(s, {{1.0, 2.0}, 4.0}), 19.0);
  EXPECT_DOUBLE_EQ(ideal_step_us(4 * (1.0 + 2.0), 4 * 4.0), 16.0);
  // Communication-bound: dispatch 3, combine 3, compute 1 per chunk:
  // 3 + max(1,3) + max(1,6) + max(1,6) + max(1,3) + 3 = 24 = ideal max(4, 24): the compute hides.
  EXPECT_DOUBLE_EQ(schedule_time_us(s, {{3.0, 3.0}, 1.0}), 24.0);
}

TEST(OverlapPipeline, OneStageScheduleByHand) {
  const auto s = pipeline_schedule(3, 1);
  ASSERT_EQ(s.size(), 4u);
  EXPECT_EQ(s[0].comm, (std::vector<ChunkOp>{{0, 0}}));
  EXPECT_EQ(s[3].compute_chunk, 2);
  EXPECT_TRUE(s[3].comm.empty());
  // comm 2, compute 3: 2 + 3 + 3 + 3 = 11; ideal max(6, 9) = 9.
  EXPECT_DOUBLE_EQ(schedule_time_us(s, {{2.0}, 3.0}), 11.0);
  // One chunk: no overlap at all, the serial time.
  EXPECT_DOUBLE_EQ(schedule_time_us(pipeline_schedule(1, 1), {{2.0}, 3.0}), 5.0);
  EXPECT_DOUBLE_EQ(schedule_time_us(pipeline_schedule(1, 2), {{2.0, 1.0}, 3.0}), 6.0);
}

TEST(OverlapPipeline, EveryChunkDispatchedComputedCombinedInOrder) {
  for (int chunks = 1; chunks <= 9; ++chunks) {
    for (int stages = 1; stages <= 2; ++stages) {
      const auto s = pipeline_schedule(chunks, stages);
      std::vector<int> dispatched(chunks, -1), computed(chunks, -1), combined(chunks, -1);
      for (int slot = 0; slot < static_cast<int>(s.size()); ++slot) {
        if (s[slot].compute_chunk >= 0) computed[s[slot].compute_chunk] = slot;
        for (const auto& op : s[slot].comm) (op.stage == 0 ? dispatched : combined)[op.chunk] = slot;
      }
      for (int c = 0; c < chunks; ++c) {
        EXPECT_GE(dispatched[c], 0);
        EXPECT_LT(dispatched[c], computed[c]) << "chunk " << c;
        if (stages == 2) {
          EXPECT_LT(computed[c], combined[c]) << "chunk " << c;
        }
        if (c > 0) {
          EXPECT_EQ(dispatched[c], computed[c - 1]) << "chunk i's communication beside chunk i-1's compute";
        }
      }
    }
  }
  EXPECT_THROW(pipeline_schedule(0, 1), std::invalid_argument);
  EXPECT_THROW(pipeline_schedule(2, 3), std::invalid_argument);
}

TEST(OverlapSpec, ParsesLoadsAndSizes) {
  auto s = parse_compute_spec("gemm");
  EXPECT_EQ(s.load, "gemm");
  EXPECT_EQ(s.gemm, (GemmShape{256, 256, 256}));
  EXPECT_EQ(s.threads, 1);
  s = parse_compute_spec("gemm:m=512,n=64,k=32,threads=2,repeat=3");
  EXPECT_EQ(s.gemm, (GemmShape{512, 64, 32}));
  EXPECT_EQ(s.threads, 2);
  EXPECT_EQ(s.repeat, 3);
  EXPECT_DOUBLE_EQ(s.gemm.flops(), 2.0 * 512 * 64 * 32);
  // DeepSeek-V3 expert FFN: tokens per expert x 7168 x 2048 (m x k x n).
  s = parse_compute_spec("gemm:workload=deepseek-v3,tokens_per_expert=256");
  EXPECT_EQ(s.gemm, (GemmShape{256, 2048, 7168}));
  EXPECT_EQ(s.workload, "deepseek-v3");
  // From tokens per rank: 4096 x EP x 8 / 256.
  EXPECT_EQ(parse_compute_spec("gemm:workload=deepseek-v3,tokens=4096", 64).gemm.m, 8192);
  EXPECT_EQ(parse_compute_spec("gemm:workload=deepseek-v3,tokens=4096", 2).gemm.m, 256);
  EXPECT_EQ(parse_compute_spec("gemm:workload=deepseek-v3", 8).gemm.m, 1024);  // the profile's 4096 tokens
  EXPECT_EQ(tokens_per_expert(4096, 64, 8, 256), 8192);
  EXPECT_EQ(tokens_per_expert(100, 3, 8, 256), 10);  // 2400 / 256 = 9.375, rounded up
  EXPECT_EQ(parse_compute_spec("stream:bytes=1M").bytes, 1u << 20);
  EXPECT_DOUBLE_EQ(parse_compute_spec("sleep:time=20ms").sleep_us, 20000.0);
  EXPECT_EQ(describe(parse_compute_spec("gemm:workload=deepseek-v3,tokens_per_expert=256"), "gpu"),
            "gemm 256x2048x7168 bf16 (7.52 GFLOP) deepseek-v3 expert FFN x1");
  EXPECT_EQ(describe(parse_compute_spec("sleep:time=5ms,threads=2"), "cpu"), "sleep 5000 us, 2 threads");
}

TEST(OverlapSpec, BadInputNamesFlagAndAcceptedValues) {
  std::string m = message_of([] { parse_compute_spec("gem"); });
  EXPECT_NE(m.find("--overlap"), std::string::npos) << m;
  EXPECT_NE(m.find("gemm, stream, sleep"), std::string::npos) << m;
  EXPECT_NE(m.find("did you mean 'gemm'"), std::string::npos) << m;
  m = message_of([] { parse_compute_spec("gemm:q=4"); });
  EXPECT_NE(m.find("m, n, k, workload"), std::string::npos) << m;
  m = message_of([] { parse_compute_spec("gemm:m=0"); });
  EXPECT_NE(m.find("m=0"), std::string::npos) << m;
  EXPECT_NE(m.find("1.."), std::string::npos) << m;
  m = message_of([] { parse_compute_spec("gemm:m"); });
  EXPECT_NE(m.find("not key=value"), std::string::npos) << m;
  m = message_of([] { parse_compute_spec("gemm:tokens=5"); });
  EXPECT_NE(m.find("need workload=NAME"), std::string::npos) << m;
  m = message_of([] { parse_compute_spec("sleep:time=-1s"); });
  EXPECT_NE(m.find("--overlap"), std::string::npos) << m;
  m = message_of([] { parse_compute_spec("stream:bytes=8"); });
  EXPECT_NE(m.find("minimum"), std::string::npos) << m;
  m = message_of([] { parse_compute_spec("sleep:time=1ms,time=2ms"); });
  EXPECT_NE(m.find("twice"), std::string::npos) << m;
  // Each phase runs under the watchdog: a sleep load is at most a minute.
  m = message_of([] { parse_compute_spec("sleep:time=2m"); });
  EXPECT_NE(m.find("must be in (0, 60s]"), std::string::npos) << m;
  // 1,048,576 tokens x EP 64 x top-8 / 256 experts = 2,097,152 rows per expert > 2^20.
  m = message_of([] { parse_compute_spec("gemm:workload=deepseek-v3,tokens=1048576", 64); });
  EXPECT_NE(m.find("the GEMM's m = 2097152 (from workload 'deepseek-v3') exceeds 1048576"), std::string::npos) << m;
}

TEST(OverlapSpec, ChunkSpecDividesTheWork) {
  const auto g = chunk_spec(parse_compute_spec("gemm:m=257,n=8,k=8"), 4);
  EXPECT_EQ(g.gemm, (GemmShape{65, 8, 8}));  // ceil(257 / 4)
  EXPECT_DOUBLE_EQ(chunk_spec(parse_compute_spec("sleep:time=20ms"), 4).sleep_us, 5000.0);
  EXPECT_EQ(chunk_spec(parse_compute_spec("stream:bytes=4M"), 4).bytes, 1u << 20);
  EXPECT_THROW(chunk_spec(parse_compute_spec("gemm"), 0), InputError);
}

TEST(OverlapCpuLoads, ComputeCorrectResults) {
  for (const char* text :
       {"gemm:m=33,n=17,k=65,threads=3,repeat=2", "stream:bytes=100003,threads=2", "sleep:time=1ms"}) {
    const auto load = make_cpu_load(parse_compute_spec(text));
    EXPECT_EQ(load->device(), "cpu");
    for (int i = 0; i < 3; ++i) {
      load->start();
      load->wait();
    }
    EXPECT_EQ(load->check(), 0u) << text;
  }
}

TEST(OverlapCpuLoads, WorkersRefuseASecondStartBeforeWait) {
  Workers w(2);
  std::atomic<int> ran{0};
  std::atomic<bool> release{false};
  w.run([&](int) {  // held until released, so the second start certainly finds it running
    while (!release.load()) std::this_thread::yield();
    ++ran;
  });
  EXPECT_THROW(w.run([](int) {}), std::logic_error);
  release = true;
  w.wait();
  EXPECT_EQ(ran.load(), 2);
  EXPECT_THROW(Workers(0), std::invalid_argument);
}

TEST(OverlapRecord, MediansFormulasAndPipelineIdeal) {
  run::Measurement::Overlap o;
  o.compute = parse_compute_spec("gemm:m=100,n=10,k=10");
  o.device = "cpu";
  o.chunks = 4;
  o.stages = 2;
  o.samples.comm_us = {90, 100, 400};      // median 100
  o.samples.compute_us = {390, 400, 410};  // median 400
  o.samples.both_us = {420, 420, 900};     // median 420
  o.samples.stage_us = {{40, 40, 40}, {60, 60, 60}};
  o.samples.iterations = 3;
  o.samples.stop_reason = "max_iters";
  o.compute_wrong_by_rank = {0, 0};
  const auto j = run::overlap_record(o, "yield");
  EXPECT_DOUBLE_EQ(j["t_comm_us"].get<double>(), 100.0);
  EXPECT_DOUBLE_EQ(j["t_compute_us"].get<double>(), 400.0);
  EXPECT_DOUBLE_EQ(j["t_both_us"].get<double>(), 420.0);
  EXPECT_DOUBLE_EQ(j["exposed_us"].get<double>(), 20.0);
  EXPECT_DOUBLE_EQ(j["efficiency"].get<double>(), 0.8);
  EXPECT_DOUBLE_EQ(j["exposed_fraction"].get<double>(), 0.2);
  // 95% bootstrap intervals (issue 37 item 11), each phase's median resampled from its own three
  // samples. exposed = both - compute: both's median is 420 in 20/27 of the resamples, compute's
  // 410 in 7/27, so 19% of them give 10 us, the lower end; 900 - 390 = 510 us in 6.7%, the upper.
  // Efficiency: (90 + 400 - 900) / 90 = -4.556 (3.2%, below it only -4.667 in 1.7%) and
  // (400 + 410 - 420) / 400 = 0.975 (5%, the largest).
  EXPECT_DOUBLE_EQ(j["exposed_ci_us"][0].get<double>(), 10.0);
  EXPECT_DOUBLE_EQ(j["exposed_ci_us"][1].get<double>(), 510.0);
  EXPECT_NEAR(j["efficiency_ci"][0].get<double>(), (90.0 + 400.0 - 900.0) / 90.0, 1e-12);
  EXPECT_NEAR(j["efficiency_ci"][1].get<double>(), 0.975, 1e-12);
  EXPECT_EQ(j["progress"], "yield");
  EXPECT_EQ(j["compute"]["gemm"]["m"], 100);
  // 4 chunks x 2 x 100 x 10 x 10 flops in 400 us = 0.2 GFLOP/s
  EXPECT_NEAR(j["compute"]["gflops_alone"].get<double>(), 0.2, 1e-12);
  const auto& p = j["pipeline"];
  EXPECT_EQ(p["chunks"], 4);
  EXPECT_DOUBLE_EQ(p["ideal_us"].get<double>(), 400.0);
  EXPECT_DOUBLE_EQ(p["serial_us"].get<double>(), 500.0);
  EXPECT_DOUBLE_EQ(p["step_over_ideal"].get<double>(), 420.0 / 400.0);
  // Per chunk: dispatch 10, combine 15, compute 100: 10 + 100 + 100 + 100 + 100 + 15 = 425.
  EXPECT_DOUBLE_EQ(p["schedule_us"].get<double>(), 425.0);
  // No compute at all: efficiency null, everything exposed.
  o.chunks = 0;
  o.samples.compute_us = {0, 0, 0};
  o.samples.both_us = {100, 100, 100};
  const auto d = run::overlap_record(o, "yield");
  EXPECT_TRUE(d["efficiency"].is_null());
  EXPECT_DOUBLE_EQ(d["exposed_us"].get<double>(), 100.0);
  EXPECT_TRUE(d["pipeline"].is_null());
}

TEST(OverlapPlan, ChunkCases) {
  plan::Case c;
  c.collective = "allreduce";
  c.bytes = 1 << 20;
  EXPECT_EQ(run::pipeline_chunk_case(c, 4).bytes, 1u << 18);
  c.bytes = 3;
  EXPECT_NE(message_of([&] { run::pipeline_chunk_case(c, 4); }).find("--overlap-chunks"), std::string::npos);
  c.collective = "moe-roundtrip";
  c.params["tokens"] = "510";
  EXPECT_EQ(run::pipeline_chunk_case(c, 4).params.at("tokens"), "128");
  c.params["tokens"] = "2";
  EXPECT_NE(message_of([&] { run::pipeline_chunk_case(c, 4); }).find("cannot be split"), std::string::npos);
}

TEST(OverlapPlan, SweepKeys) {
  const auto s = plan::parse_sweep(R"(
name: t
cases:
  - collective: allreduce
    bytes: 1M
    overlap: ["gemm:m=64,n=64,k=64", "sleep:time=5ms"]
    overlap_chunks: 2
)",
                                   "t.yaml");
  ASSERT_EQ(s.cases.size(), 2u);
  EXPECT_EQ(s.cases[0].overlap, "gemm:m=64,n=64,k=64");
  EXPECT_EQ(s.cases[1].overlap, "sleep:time=5ms");
  EXPECT_EQ(s.cases[1].overlap_chunks, 2);
  const std::string m = message_of([] {
    plan::parse_sweep("name: t\ncases:\n  - collective: allreduce\n    bytes: 1M\n    overlap: gemn\n", "bad.yaml");
  });
  EXPECT_NE(m.find("bad.yaml:5"), std::string::npos) << m;
  EXPECT_NE(m.find("did you mean 'gemm'"), std::string::npos) << m;
}
