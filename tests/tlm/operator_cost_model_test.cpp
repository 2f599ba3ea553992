// The per-operator cost model against hand-computed cases: a memory-bound and a compute-bound
// GEMM, the tensor-parallel split and all-reduce, the decode KV slope, the LM head, an MoE layer,
// and the step the scheduler gets from it.
#include <gtest/gtest.h>

#include "tlm/sched/decode_cost_model.h"
#include "tlm/sched/operator_cost_model.h"
#include "workloads/model.h"

using namespace kvtier;

namespace {

// Round numbers: A = 1 TB/s, peaks 1000 TFLOP/s (bf16) and 2000 (FP8), large GEMMs at full
// bandwidth and half the peak, no launch costs, no small-output penalty.
struct RoundNumbers {
  ModelConfig mc;
  HbmConfig hbm;
  GpuConfig gpu;
  RoundNumbers() {
    mc.weight_dtype_bytes = 2;
    hbm.peak_bw_gbps = 1000;
    hbm.achievable_fraction = 1.0;
    hbm.eta_kv = 0.25;
    gpu.tflops_bf16 = 1000;
    gpu.tflops_fp8 = 2000;
    gpu.linear_eta_mem = 1.0;
    gpu.linear_launch_us = 0;
    gpu.linear_eta_flop = 0.5;
    gpu.linear_half_outputs = 0;
    gpu.elementwise_eta = 1.0;
    gpu.elementwise_launch_us = 0;
    gpu.attention_eta_flop = 0.5;
    gpu.allreduce_latency_us_2 = 10;
    gpu.allreduce_gbps_2 = 100;
  }
};

const workload::ModelDescriptor& llama8b() { return workload::model_by_name("llama-3-8b"); }

}  // namespace

TEST(OperatorCostModel, OneDecodeTokenIsMemoryBoundWeightsOverBandwidth) {
  RoundNumbers s;
  const OperatorCostModel m(llama8b(), s.mc, s.hbm, s.gpu);
  const StepCost c = m.cost({1, 0, 0, 0, 0});
  // QKV: 4096 x (4096 + 2 x 1024) bf16 weights = 50,331,648 B, activations 1 x (4096 + 6144) x 2 B
  // = 20,480 B; at 1e12 B/s: 50.352128 us. Its FLOPs (2 x 4096 x 6144) take 0.1 us at 500 TFLOP/s.
  EXPECT_NEAR(c.layer.qkv_s, 50'352'128 / 1e12, 1e-15);
  // Gate/up: 4096 x 28672 x 2 B = 234,881,024 B + (4096 + 28672) x 2 B = 65,536 B.
  EXPECT_NEAR(c.layer.gate_up_s, (234'881'024.0 + 65'536.0) / 1e12, 1e-15);
  // Down: 14336 x 4096 x 2 B = 117,440,512 B + 36,864 B; output projection 33,554,432 + 16,384 B.
  EXPECT_NEAR(c.layer.down_s, (117'440'512.0 + 36'864.0) / 1e12, 1e-15);
  EXPECT_NEAR(c.layer.out_proj_s, (33'554'432.0 + 16'384.0) / 1e12, 1e-15);
  EXPECT_NEAR(c.layer.linear_s(),
              c.layer.qkv_s + c.layer.out_proj_s + c.layer.gate_up_s + c.layer.down_s, 1e-18);
  EXPECT_EQ(c.layer.allreduce_s, 0.0);  // one GPU
  EXPECT_EQ(c.layer.attention_s, 0.0);  // no KV, no prefill
  // LM head once per step: 4096 x 128256 x 2 B + (4096 + 128256) x 2 B.
  EXPECT_NEAR(c.lm_head_s, (4096.0 * 128256 * 2 + (4096.0 + 128256) * 2) / 1e12, 1e-15);
  EXPECT_NEAR(c.step_s(), 32 * c.layer_s() + c.lm_head_s, 1e-15);
}

TEST(OperatorCostModel, ManyTokensAreComputeBoundFlopsOverPeakTimesEfficiency) {
  RoundNumbers s;
  s.gpu.linear_half_outputs = 4096.0 * 28672;  // gate/up at 4096 tokens: half of eta_flop
  const OperatorCostModel m(llama8b(), s.mc, s.hbm, s.gpu);
  const StepCost c = m.cost({0, 0, 4096, 0, 1});
  // Gate/up: 2 x 4096 x 4096 x 28672 = 962,072,674,304 FLOPs at 1e15 x 0.5 x (1/2) = 3.848 ms;
  // its 503,316,480 B take 0.503 ms: compute-bound.
  EXPECT_NEAR(c.layer.gate_up_s, 962'072'674'304.0 / 5e14 * 2.0, 1e-12);
  // FP8 weights run on the FP8 peak: half the time.
  s.mc.weight_dtype_bytes = 1;
  const OperatorCostModel fp8(llama8b(), s.mc, s.hbm, s.gpu);
  EXPECT_NEAR(fp8.cost({0, 0, 4096, 0, 1}).layer.gate_up_s, 962'072'674'304.0 / 1e15 * 2.0, 1e-12);
}

TEST(OperatorCostModel, TensorParallelSplitsTheWeightsAndAddsTwoAllReducesPerLayer) {
  RoundNumbers s;
  s.mc.tensor_parallel = 2;
  const OperatorCostModel m(llama8b(), s.mc, s.hbm, s.gpu);
  const StepCost c = m.cost({8, 0, 0, 0, 0});
  // QKV column-parallel: 4096 x 3072 x 2 B = 25,165,824 B + 8 x (4096 + 3072) x 2 B = 114,688 B.
  EXPECT_NEAR(c.layer.qkv_s, (25'165'824.0 + 114'688.0) / 1e12, 1e-15);
  // Two all-reduces of 8 x 4096 x 2 B = 65,536 B: 2 x (10 us + 65,536 / 100e9).
  EXPECT_NEAR(c.layer.allreduce_s, 2 * (10e-6 + 65'536 / 100e9), 1e-15);
  EXPECT_NEAR(m.allreduce_s(1e9), 10e-6 + 1e-2, 1e-15);
}

TEST(OperatorCostModel, DecodeKvSlopeIsOneOverAchievableTimesEtaKv) {
  RoundNumbers s;
  const OperatorCostModel m(llama8b(), s.mc, s.hbm, s.gpu);
  // 1,000 more context tokens at 131,072 B of KV per token (4,096 B per layer): 4.096 MB per
  // layer at 0.25 TB/s.
  const double dt =
      m.cost({16, 11'000, 0, 0, 0}).layer_s() - m.cost({16, 10'000, 0, 0, 0}).layer_s();
  EXPECT_NEAR(dt, 1000 * 4096 / 0.25e12, 1e-15);
  // Prefill attention: 4 x 4096 FLOPs per pair at 500 TFLOP/s.
  EXPECT_NEAR(m.cost({0, 0, 100, 5050, 1}).layer.attention_s, 4.0 * 4096 * 5050 / 5e14, 1e-18);
}

TEST(OperatorCostModel, MoeReadsTheExpertsItsTokensTouchAndComputesTopK) {
  const std::string mixtral =
      R"({"hidden_size": 4096, "num_hidden_layers": 32, "num_attention_heads": 32,
      "num_key_value_heads": 8, "intermediate_size": 14336, "vocab_size": 32000, "hidden_act": "silu",
      "num_local_experts": 8, "num_experts_per_tok": 2})";
  const workload::ModelDescriptor moe =
      workload::model_from_config_json(mixtral, "mixtral.json", "mixtral");
  RoundNumbers s;
  const OperatorCostModel m(moe, s.mc, s.hbm, s.gpu);
  // One token touches its 2 experts: 2 x 4096 x 28672 x 2 B of gate/up weights + 2 rows of
  // activations.
  EXPECT_NEAR(m.cost({1, 0, 0, 0, 0}).layer.gate_up_s, (2 * 234'881'024.0 + 2 * 65'536.0) / 1e12,
              1e-15);
  // 1,000 tokens touch all 8 (8 x (1 - (3/4)^1000) = 8 to double precision).
  const double gate_up_1000 = m.cost({1000, 0, 0, 0, 0}).layer.gate_up_s;
  const double bytes = 8 * 234'881'024.0 + 2000 * (4096.0 + 28672) * 2;
  const double flops = 2.0 * 2000 * 4096 * 28672;
  EXPECT_NEAR(gate_up_1000, std::max(bytes / 1e12, flops / 5e14), 1e-12);
  EXPECT_GT(m.cost({1, 0, 0, 0, 0}).layer.router_s, 0.0);
}

TEST(DecodeCostModel, OperatorStepIsTheOperatorModelsStepSplitForTheHbm) {
  RoundNumbers s;
  SchedConfig sched;  // sched.cost_model = operators
  const DecodeCostModel cost(llama8b(), s.mc, s.hbm, sched, s.gpu);
  const StepCost c = cost.operators({4, 8000, 512, 512 * 513 / 2, 1});
  const StepTime t = cost.step(4, 8000, 512, 512 * 513 / 2, 1);
  EXPECT_NEAR(t.total_s(), c.step_s(), 1e-15);
  EXPECT_NEAR(t.kv_s, 32 * c.layer.attention_kv_s, 1e-15);
  EXPECT_NEAR(t.prefill_s, 32 * c.layer.attention_flop_s, 1e-15);
  EXPECT_NEAR(t.weights_s, 32 * c.layer.linear_s() + c.lm_head_s, 1e-15);
  EXPECT_EQ(cost.step(0, 0, 0, 0, 0).total_s(), 0.0);  // nothing to run, no time
}
