// The shipped workloads' FLOPs per token, computed by hand below from their config.json values
// (profiles/workloads), and the published layouts `collbench step` defaults to (profiles/layouts).
#include <gtest/gtest.h>

#include <string>

#include "collbench/core/error.hpp"
#include "collbench/step/architecture.hpp"
#include "collbench/step/layout.hpp"

namespace collbench::step {
namespace {

Architecture shipped(const std::string& name) {
  return architecture_of(workload::load_workload_profile(name));
}

TEST(StepWorkloads, DeepSeekV3WithMtpByHand) {
  const Architecture a = shipped("deepseek-v3-bf16");
  EXPECT_TRUE(a.mla());
  EXPECT_EQ(a.mtp_layers, 1);
  // Active matmul parameters 36,624,596,992 (61 x MLA 187,105,280 + 3 x dense 396,361,728
  // + 58 x MoE 398,196,736 + head 926,679,040); core 2 x 128 x 2048 x 320 = 167,772,160 per layer.
  EXPECT_DOUBLE_EQ(active_matmul_params(a), 36624596992.0);
  EXPECT_DOUBLE_EQ(attention_core_flops_per_token(a), 167772160.0);
  // MTP: 187,105,280 + 398,196,736 + 2 x 7168^2 (102,760,448) + 926,679,040 = 1,614,741,504
  // parameters; 6 x that + 3 x 167,772,160 = 10,191,765,504 FLOPs.
  EXPECT_DOUBLE_EQ(mtp_params(a), 1614741504.0);
  EXPECT_DOUBLE_EQ(mtp_flops_per_token(a), 10191765504.0);
  // 6 x 36,624,596,992 + 3 x 61 x 167,772,160 = 250,449,887,232; + MTP = 260,641,652,736
  // (Megatron-Bridge's count, which leaves out the router: 1,648e12 / 6,338 = 260.0e9).
  EXPECT_DOUBLE_EQ(model_flops_per_token(a), 260641652736.0);
  // MLA up projections: 1536 x 128 x 192 + 512 x 128 x 256 = 54,525,952.
  EXPECT_DOUBLE_EQ(mla_up_proj_params(a), 54525952.0);
}

TEST(StepWorkloads, GptOss120bGqaSlidingWindowByHand) {
  const Architecture a = shipped("gpt-oss-120b");
  EXPECT_FALSE(a.mla());
  EXPECT_EQ(a.dense_layers, 0);
  EXPECT_EQ(a.shared_experts, 0);
  // GQA: 2880 x (64 x 64 + 2 x 8 x 64) + 64 x 64 x 2880 = 26,542,080.
  EXPECT_DOUBLE_EQ(attention_params(a), 26542080.0);
  // MoE: 4 x 3 x 2880 x 2880 + router 2880 x 128 = 99,901,440; head 201,088 x 2880 = 579,133,440.
  EXPECT_DOUBLE_EQ(moe_active_params(a), 99901440.0);
  EXPECT_DOUBLE_EQ(active_matmul_params(a), 36.0 * 26542080 + 36.0 * 99901440 + 579133440);  // 5,131,100,160
  // Full layer: 2 x 64 x 2048 x 128 = 33,554,432. Window 128: 128 - 128 x 127 / 8192 = 126.015625
  // keys, 2 x 64 x 126.015625 x 128 = 2,064,640.
  EXPECT_DOUBLE_EQ(attention_core_flops_per_token(a), 33554432.0);
  EXPECT_DOUBLE_EQ(window_core_flops_per_token(a), 2064640.0);
  // 6 x 5,131,100,160 + 3 x (18 x 33,554,432 + 18 x 2,064,640) = 32,710,030,848.
  EXPECT_DOUBLE_EQ(model_flops_per_token(a), 32710030848.0);
}

TEST(StepWorkloads, Qwen3_30bA3bGqaByHand) {
  const Architecture a = shipped("qwen3-30b-a3b");
  // GQA: 2048 x (32 x 128 + 2 x 4 x 128) + 32 x 128 x 2048 = 18,874,368.
  EXPECT_DOUBLE_EQ(attention_params(a), 18874368.0);
  // MoE: 8 x 3 x 2048 x 768 + 2048 x 128 = 38,010,880; head 151,936 x 2048 = 311,164,928.
  EXPECT_DOUBLE_EQ(moe_active_params(a), 38010880.0);
  EXPECT_DOUBLE_EQ(active_matmul_params(a), 3041656832.0);
  // 6 x 3,041,656,832 + 3 x 48 x 2 x 32 x 2048 x 256 = 18,249,940,992 + 4,831,838,208.
  EXPECT_DOUBLE_EQ(model_flops_per_token(a), 23081779200.0);
  EXPECT_DOUBLE_EQ(mla_up_proj_params(a), 0.0);
}

TEST(StepWorkloads, AttentionKeysExcludeEachOther) {
  auto p = workload::load_workload_profile("qwen3-30b-a3b");
  p.kv_lora_rank = 512;
  try {
    (void)architecture_of(p);
    FAIL();
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("model.kv_lora_rank 512 (MLA) and model.num_key_value_heads 4 / "
                                         "model.head_dim 128 (GQA) exclude each other"),
              std::string::npos)
        << e.what();
  }
  p.kv_lora_rank = 0;
  p.head_dim = 0;
  try {
    (void)architecture_of(p);
    FAIL();
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("lacks the architecture keys collbench step needs: model.head_dim"),
              std::string::npos)
        << e.what();
  }
}

TEST(StepLayouts, EachSystemsPublishedLayoutIsItsDefault) {
  const Layout gb300 = default_layout("deepseek-v3", "gb300-nvl72");
  EXPECT_EQ(gb300.name, "deepseek-v3-gb300-mxfp8");
  EXPECT_EQ(gb300.tp * 1000 + gb300.pp * 100 + gb300.vpp, 1208);  // TP1 PP2 VP8
  EXPECT_EQ(gb300.ep, 32);
  EXPECT_EQ(gb300.global_batch, 4096);
  EXPECT_EQ(gb300.micro_batch, 1);
  ASSERT_FALSE(gb300.published.empty());
  EXPECT_EQ(gb300.published.front().release, "26.06");
  EXPECT_DOUBLE_EQ(gb300.published.front().tflops_per_gpu, 1648.0);
  EXPECT_DOUBLE_EQ(gb300.published.front().tokens_per_s_per_gpu, 6338.0);
  EXPECT_TRUE(gb300.published.front().counts_mtp);

  const Layout gb200 = default_layout("deepseek-v3-bf16", "gb200-nvl72");
  EXPECT_EQ(gb200.name, "deepseek-v3-gb200-mxfp8");
  EXPECT_EQ(gb200.pp, 4);
  EXPECT_EQ(gb200.vpp, 4);
  EXPECT_EQ(gb200.ep, 64);
  EXPECT_EQ(gb200.recompute, Recompute::mla_up_proj);
  EXPECT_DOUBLE_EQ(gb200.published.front().tflops_per_gpu, 1292.0);

  EXPECT_EQ(default_layout("gpt-oss-120b", "gb300-nvl72").ep, 16);
  EXPECT_EQ(default_layout("gpt-oss-120b", "gb200-nvl72").ep, 64);
  EXPECT_EQ(default_layout("qwen3-30b-a3b", "gb300-nvl72").micro_batch, 8);
  EXPECT_EQ(default_layout("qwen3-30b-a3b", "gb200-nvl72").micro_batch, 4);
}

TEST(StepLayouts, NoDefaultForAnUnpublishedPair) {
  try {
    (void)default_layout("deepseek-v3", "h100-hgx");
    FAIL();
  } catch (const InputError& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find("no single default layout for workload 'deepseek-v3' on system 'h100-hgx'"), std::string::npos);
    EXPECT_NE(m.find("deepseek-v3-gb300-mxfp8 (deepseek-v3-bf16 or deepseek-v3 on gb300-nvl72)"), std::string::npos);
  }
}

TEST(StepLayouts, PublishedEntryErrorsNameTheKey) {
  const std::string base = "name: x\nglobal_batch: 8\ngpus: 8\n";
  try {
    (void)parse_layout(base + "published:\n  - release: \"26.06\"\n    gpus: 8\n    tflops: 5\n", "x.yaml");
    FAIL();
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("published[0].tflops"), std::string::npos) << e.what();
  }
  try {
    (void)parse_layout(base + "recompute: mla\n", "x.yaml");
    FAIL();
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("mla_up_proj"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace collbench::step
