// The step model (docs/step.md) on tiny workloads whose step time is computed by hand below.
#include <gtest/gtest.h>

#include "collbench/core/error.hpp"
#include "collbench/step/overlap_source.hpp"
#include "collbench/step/step.hpp"

namespace collbench::step {
namespace {

// 2 layers (1 dense, 1 MoE), H 4, 1 head, plain q projection (q_lora 0), kv_lora 2, d_qk 2, d_v 2,
// dense FFN 8, 4 experts top-1 FFN 4, vocabulary 8, sequence 8, rows of 8 B.
Architecture tiny() {
  Architecture a;
  a.layers = 2, a.dense_layers = 1, a.moe_layers = 1, a.hidden = 4;
  a.heads = 1, a.q_lora_rank = 0, a.kv_lora_rank = 2, a.qk_nope = 2, a.qk_rope = 0, a.v_dim = 2;
  a.dense_ffn = 8, a.experts = 4, a.shared_experts = 0, a.top_k = 1, a.expert_ffn = 4;
  a.vocab = 8, a.sequence = 8, a.dispatch_row_bytes = 8, a.combine_row_bytes = 8;
  return a;
}

StepInputs inputs(int tp, int gpus) {
  StepInputs in;
  in.arch = tiny();
  in.layout.name = "tiny";
  in.layout.tp = tp;
  in.layout.global_batch = 2;
  in.layout.gpus = gpus;
  in.system.name = "tiny-system";
  in.system.kind = "cpu";
  // 1e6 FLOP/s BF16 peak: GEMMs at 0.5 of it (5e5 FLOP/s), attention core at 0.25 (2.5e5 FLOP/s).
  in.system.compute = model::Compute{1e6, 2e6, 0.5, 0.25};
  return in;
}

TEST(StepArchitecture, TinyCountsByHand) {
  const Architecture a = tiny();
  // q 4x1x2 = 8; kv 4x(2+0) + 2x1x(2+2) = 16; out 1x2x4 = 8.
  EXPECT_DOUBLE_EQ(attention_params(a), 32.0);
  EXPECT_DOUBLE_EQ(dense_ffn_params(a), 96.0);   // 3 x 4 x 8
  EXPECT_DOUBLE_EQ(moe_active_params(a), 64.0);  // 1 x 3 x 4 x 4 + router 4 x 4
  // 2 x 32 + 96 + 64 + head 8 x 4 = 256; attention core 2 x 1 x 8/2 x (2 + 2) = 32 per token and layer.
  EXPECT_DOUBLE_EQ(active_matmul_params(a), 256.0);
  EXPECT_DOUBLE_EQ(attention_core_flops_per_token(a), 32.0);
  EXPECT_DOUBLE_EQ(model_flops_per_token(a), 6.0 * 256 + 3.0 * 2 * 32);  // 1728
}

TEST(StepArchitecture, DeepSeekV3ActiveParameters) {
  Architecture a;
  a.layers = 61, a.dense_layers = 3, a.moe_layers = 58, a.hidden = 7168, a.heads = 128, a.q_lora_rank = 1536;
  a.kv_lora_rank = 512, a.qk_nope = 128, a.qk_rope = 64, a.v_dim = 128, a.dense_ffn = 18432, a.experts = 256;
  a.shared_experts = 1, a.top_k = 8, a.expert_ffn = 2048, a.vocab = 129280, a.sequence = 4096;
  // MLA: 7168x1536 + 1536x128x192 + 7168x576 + 512x128x256 + 128x128x7168 = 187,105,280 per layer.
  EXPECT_DOUBLE_EQ(attention_params(a), 187105280.0);
  // + embedding 129280 x 7168 = 37.55e9: the model card's "37B activated".
  EXPECT_DOUBLE_EQ(active_matmul_params(a) + embedding_params(a), 37551276032.0);
}

TEST(StepModel, TinyStepWithoutCommunicationByHand) {
  const StepInputs in = inputs(1, 1);
  const CommTimes comm(in.system, {}, false, std::nullopt);
  const StepPoint pt = build_step(in, comm, 1);
  // 8 tokens per micro-batch. Dense fwd: GEMM 2x8x(32+96) = 2048 FLOP / 5e5 = 4096 us, core 8x32 = 256 /
  // 2.5e5 = 1024 us: 5120 us; MoE fwd: 2x8x(32+64) = 1536 / 5e5 = 3072 + 1024 = 4096 us; output layer
  // 2x8x32 = 512 / 5e5 = 1024 us. Backward: 2 x the GEMMs, the core x (3x2 + 2x2) / (2 + 2) = 2.5 at
  // the same rate (no attention_backward_efficiency): dense 8192 + 2560 = 10752, MoE 6144 + 2560 =
  // 8704, output 2048. F = 10240, B = 21504 us per micro-batch.
  EXPECT_TRUE(pt.phases.empty());
  EXPECT_DOUBLE_EQ(pt.layers[0].fwd_compute_us, 5120.0);
  EXPECT_DOUBLE_EQ(pt.layers[0].bwd_compute_us, 10752.0);
  EXPECT_DOUBLE_EQ(pt.layers[1].fwd_compute_us, 4096.0);
  EXPECT_DOUBLE_EQ(pt.layers[1].bwd_compute_us, 8704.0);
  EXPECT_DOUBLE_EQ(pt.layers[2].bwd_compute_us, 2048.0);
  EXPECT_DOUBLE_EQ(pt.microbatch_fwd_us, 10240.0);
  EXPECT_DOUBLE_EQ(pt.microbatch_bwd_us, 21504.0);
  // global batch 2, micro-batch 1, DP 1: m = 2, PP 1: step = 2 x 31744 = 63488 us.
  EXPECT_EQ(pt.shape.micro_batches, 2);
  EXPECT_DOUBLE_EQ(pt.step_us, 63488.0);
  // 16 tokens x 1728 = 27648 FLOP (the 3 x attention convention) in 0.063488 s on 1 GPU:
  // 435483.87... FLOP/s.
  EXPECT_DOUBLE_EQ(pt.model_flops, 27648.0);
  EXPECT_NEAR(pt.tflops_per_gpu, 27648.0 / 0.063488 / 1e12, 1e-18);
}

TEST(StepModel, AttentionBackwardHasItsOwnEfficiency) {
  StepInputs in = inputs(1, 1);
  in.system.compute->attention_backward_efficiency = 0.125;  // 1.25e5 FLOP/s for the backward core
  const CommTimes comm(in.system, {}, false, std::nullopt);
  const StepPoint pt = build_step(in, comm, 1);
  // The backward core: 256 FLOP x 2.5 / 1.25e5 = 5120 us (2560 at the forward's rate); the forward is
  // unchanged. Dense 8192 + 5120, MoE 6144 + 5120.
  EXPECT_DOUBLE_EQ(pt.layers[0].fwd_compute_us, 5120.0);
  EXPECT_DOUBLE_EQ(pt.layers[0].bwd_compute_us, 13312.0);
  EXPECT_DOUBLE_EQ(pt.layers[1].bwd_compute_us, 11264.0);
  EXPECT_DOUBLE_EQ(pt.microbatch_bwd_us, 13312.0 + 11264.0 + 2048.0);
}

TEST(StepArchitecture, AttentionBackwardFlopRatio) {
  Architecture mla = tiny();  // d_qk 2, d_v 2
  EXPECT_DOUBLE_EQ(attention_backward_flop_ratio(mla), 2.5);
  mla.qk_nope = 128, mla.qk_rope = 64, mla.v_dim = 128;  // DeepSeek-V3: (576 + 256) / 320
  EXPECT_DOUBLE_EQ(attention_backward_flop_ratio(mla), 2.6);
  Architecture gqa = tiny();
  gqa.kv_lora_rank = 0, gqa.qk_nope = 0, gqa.v_dim = 0, gqa.head_dim = 64, gqa.kv_heads = 8;
  EXPECT_DOUBLE_EQ(attention_backward_flop_ratio(gqa), 2.5);
}

record::CaseRecord measured(const std::string& collective, std::uint64_t bytes, double p50) {
  record::CaseRecord r;
  r.collective = collective;
  r.scope = "global";
  r.num_ranks = 2;
  r.domain_sizes = {2};
  r.num_domains = 1;
  r.bytes = bytes;
  r.time_us = record::TimeStats{};
  r.time_us->p50 = p50;
  return r;
}

TEST(StepModel, TinyStepWithMeasuredTensorParallelByHand) {
  StepInputs in = inputs(2, 2);
  record::ResultFile f;
  f.path = "tiny.jsonl";
  // TP moves 8 tokens x H 4 x 2 B = 64 B per call: exactly the measured 64 B points (100 us).
  f.cases = {measured("allgather", 64, 100.0), measured("allgather", 256, 400.0), measured("reducescatter", 64, 100.0)};
  const CommTimes comm(in.system, {f}, false, std::nullopt);
  const StepPoint pt = build_step(in, comm, 2);
  // TP 2, EP 1: the experts are replicated over the 2 ranks (expert DP 2), so the expert gradients
  // (1 layer x 4 experts x 3 x 4 x 4 = 192 params, 768 B in FP32) are reduce-scattered: the 64 B point
  // extrapolated linearly is 1200 us, hidden behind the 10752 us backward compute (DP overlap 1).
  ASSERT_EQ(pt.phases.size(), 4U);
  EXPECT_EQ(pt.phases[2].name, "expert-DP reduce-scatter");
  EXPECT_DOUBLE_EQ(pt.phases[2].bytes, 768.0);
  EXPECT_DOUBLE_EQ(pt.phases[2].answer.time_us, 1200.0);
  EXPECT_DOUBLE_EQ(pt.phases[2].exposed_per_step_us, 0.0);
  EXPECT_DOUBLE_EQ(pt.phases[2].slack_us, 10752.0 - 1200.0);
  EXPECT_EQ(pt.phases[0].answer.source, "measured");
  EXPECT_DOUBLE_EQ(pt.phases[0].answer.time_us, 100.0);
  // Compute halves (4 tokens per GPU): dense 2560, MoE 2048, output 512 us forward (cores 512 each).
  // TP exposed (overlap 0): dense 2 AG + 2 RS = 400 us, MoE 1 + 1 = 200 us, in each direction.
  // F = 2560 + 2048 + 512 + 600 = 5720; B = 2 x (2048 + 1536 + 512) + 2.5 x (512 + 512) + 600 = 11352;
  // m = 2: step = 2 x 17072 = 34144 us.
  EXPECT_DOUBLE_EQ(pt.microbatch_fwd_us, 5720.0);
  EXPECT_DOUBLE_EQ(pt.microbatch_bwd_us, 11352.0);
  EXPECT_DOUBLE_EQ(pt.step_us, 34144.0);
  EXPECT_DOUBLE_EQ(pt.phases[0].exposed_per_step_us, 2.0 * 2 * 300.0);  // m x (fwd + bwd) x (200 + 100)
}

TEST(StepModel, MissingMeasuredCollectiveIsAnInputErrorUnlessFallback) {
  StepInputs in = inputs(2, 2);
  record::ResultFile f;
  f.path = "tiny.jsonl";
  f.cases = {measured("allgather", 64, 100.0)};
  const CommTimes strict(in.system, {f}, false, std::nullopt);
  try {
    (void)build_step(in, strict, 2);
    FAIL() << "no error";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("no ok record of reducescatter on 2 ranks inside one domain"),
              std::string::npos)
        << e.what();
  }
}

TEST(StepMeasured, InterpolatesLogLog) {
  const std::vector<MeasuredPoint> pts{{1000, 10}, {4000, 40}};
  std::string how;
  EXPECT_DOUBLE_EQ(interpolate(pts, 2000, how), 20.0);  // halfway in log bytes: 10 x 4^0.5
  EXPECT_EQ(how, "interpolated");
  EXPECT_DOUBLE_EQ(interpolate(pts, 8000, how), 80.0);
  EXPECT_EQ(how, "extrapolated");
  EXPECT_DOUBLE_EQ(interpolate(pts, 500, how), 10.0);
  EXPECT_EQ(how, "below the smallest size");
}

TEST(StepLayout, RefusesLayoutsThatDoNotDivide) {
  Layout l;
  l.name = "bad";
  l.tp = 2, l.pp = 2, l.ep = 4, l.global_batch = 8, l.gpus = 8;
  Architecture a = tiny();
  EXPECT_THROW((void)shape_at(l, a, 6), InputError);  // 6 GPUs, tp x pp = 4
  l.ep = 3;
  EXPECT_THROW((void)shape_at(l, a, 12), InputError);  // 3 does not divide 4 experts
  l.ep = 2;
  l.pp = 4;
  EXPECT_THROW((void)shape_at(l, a, 8), InputError);  // 2 layers over 4 stages
  l.pp = 2;
  const Shape s = shape_at(l, a, 8);  // dp 2, expert DP 2 x 2 / 2 = 2, m = 8 / 2 = 4
  EXPECT_EQ(s.dp, 2);
  EXPECT_EQ(s.edp, 2);
  EXPECT_EQ(s.micro_batches, 4);
}

}  // namespace
}  // namespace collbench::step

namespace collbench::step {
namespace {

record::CaseRecord moe(const std::string& collective, int ranks, std::vector<int> domains, std::uint64_t total,
                       double p50) {
  record::CaseRecord r = measured(collective, total, p50);
  r.num_ranks = ranks;
  r.domain_sizes = std::move(domains);
  r.num_domains = static_cast<int>(r.domain_sizes.size());
  r.bytes_logical_total = total;
  r.bytes = total;  // bytes_max_rank: not the key of a MoE record
  return r;
}

CommAnswer ep_time(const std::vector<record::CaseRecord>& cases, double bytes, int size = 2) {
  record::ResultFile f;
  f.path = "ep.jsonl";
  f.cases = cases;
  model::SystemProfile system;
  const CommTimes comm(system, {f}, false, std::nullopt);
  GroupGeometry g;
  g.kind = GroupKind::ep;
  g.size = size;
  return comm.time(CommQuery{"alltoall", &g, bytes, Dtype::bfloat16, "EP dispatch", {"moe-dispatch"}});
}

TEST(StepMeasured, EpPhasesTakeMoeRecordsByMeanBytesPerRank) {
  // moe-dispatch on 2 ranks moving 2000 and 8000 B in all: 1000 and 4000 B per rank (10 and 40 us);
  // 2000 B per rank is halfway in log bytes: 10 x 4^0.5 = 20 us. The alltoall record is not used.
  const auto a = ep_time({moe("moe-dispatch", 2, {2}, 2000, 10.0), moe("moe-dispatch", 2, {2}, 8000, 40.0),
                          measured("alltoall", 2000, 999.0)},
                         2000.0);
  EXPECT_DOUBLE_EQ(a.time_us, 20.0);
  EXPECT_EQ(a.source, "measured");
  EXPECT_NE(a.detail.find("moe-dispatch on 2 ranks inside one domain, 2 sizes 1000B..3.91KiB per rank, interpolated"),
            std::string::npos)
      << a.detail;
}

TEST(StepMeasured, EpPhasesFallBackToAlltoallWithoutMoeRecords) {
  // moe-combine does not serve a dispatch query; alltoall 2000 B at 50 us does.
  const auto a = ep_time({moe("moe-combine", 2, {2}, 4000, 10.0), measured("alltoall", 2000, 50.0)}, 2000.0);
  EXPECT_DOUBLE_EQ(a.time_us, 50.0);
  EXPECT_NE(a.detail.find("(alltoall on 2 ranks"), std::string::npos) << a.detail;
}

TEST(StepMeasured, MoeRecordsMatchTheirEpGroupSizeAndScope) {
  // 4 ranks in domains [2, 2], ep_size 2: EP groups {0,1} {2,3} stay inside a domain; per rank
  // 12000 / 4 = 3000 B at 30 us, exact.
  auto inside = moe("moe-dispatch", 4, {2, 2}, 12000, 30.0);
  inside.workload = {{"ep_size", 2}};
  const auto a = ep_time({inside}, 3000.0);
  EXPECT_DOUBLE_EQ(a.time_us, 30.0);
  EXPECT_NE(a.detail.find("exact at"), std::string::npos) << a.detail;
  // ep_size 4 over [2, 2] crosses domains: no record for a group inside one domain (exit 2 names both).
  inside.workload = {{"ep_size", 4}};
  try {
    (void)ep_time({inside}, 3000.0);
    FAIL() << "no error";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("no ok record of moe-dispatch or alltoall on 2 ranks inside one domain"),
              std::string::npos)
        << e.what();
  }
}

record::CaseRecord with_overlap(const std::string& collective, std::uint64_t bytes, nlohmann::json efficiency,
                                const std::string& status = "ok") {
  record::CaseRecord r = measured(collective, bytes, 100.0);
  r.status = status;
  r.overlap = {{"efficiency", std::move(efficiency)}, {"compute", {{"spec", "gemm:m=64,n=64,k=64"}}}};
  return r;
}

TEST(StepOverlap, RecordsServeAKindByCollectiveOrderThenLargestBytes) {
  record::ResultFile f;
  f.path = "ov.jsonl";
  // EP prefers moe-roundtrip (none here), then moe-dispatch: of its usable records the largest (4 KiB,
  // 0.6); the 8 KiB one failed and the 16 KiB one has a null efficiency. alltoall (0.9) comes later.
  f.cases = {with_overlap("alltoall", 1 << 20, 0.9),       with_overlap("moe-dispatch", 1024, 0.8),
             with_overlap("moe-dispatch", 4096, 0.6),      with_overlap("moe-dispatch", 8192, 0.7, "failed"),
             with_overlap("moe-dispatch", 16384, nullptr), with_overlap("sendrecv", 64, 1.07)};
  const auto ep = overlap_from_records("ep", f);
  EXPECT_DOUBLE_EQ(ep.efficiency, 0.6);
  EXPECT_EQ(ep.detail, "ov.jsonl: moe-dispatch 4KiB on 2 ranks beside gemm:m=64,n=64,k=64, efficiency 0.6");
  // Above 1 (noise, docs/overlap.md) is used as 1 and says so.
  const auto pp = overlap_from_records("pp", f);
  EXPECT_DOUBLE_EQ(pp.efficiency, 1.0);
  EXPECT_EQ(pp.detail, "ov.jsonl: sendrecv 64B on 2 ranks beside gemm:m=64,n=64,k=64, efficiency 1.07 (used as 1)");
  try {
    (void)overlap_from_records("tp", f);
    FAIL() << "no error";
  } catch (const InputError& e) {
    EXPECT_EQ(std::string(e.what()),
              "--overlap tp=ov.jsonl: no ok record with an overlap efficiency of allgather, reducescatter, allreduce "
              "(the collectives that serve tp); record one with collbench run allgather ... --overlap LOAD "
              "(docs/overlap.md)");
  }
}

}  // namespace
}  // namespace collbench::step
