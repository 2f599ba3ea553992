// The decode cost model, the replacement policy and the block object against values computed
// by hand from the specification and the platform parameters.
#include <gtest/gtest.h>

#include "tlm/host/policy/lru.h"
#include "tlm/kv/block.h"
#include "tlm/kv/metrics.h"
#include "tlm/sched/decode_cost_model.h"
#include "workloads/model.h"

using namespace kvtier;

TEST(DecodeCostModel, StepTimeIsTheTwoBandwidthFormula) {
  ModelConfig mc;  // Llama-3-70B, FP8 weights, bf16 KV
  HbmConfig hbm;   // 4.8 TB/s, eta_w 0.87, eta_kv 0.27
  SchedConfig sched;
  sched.cost_model = CostModel::TwoBandwidth;
  sched.layer_overhead_us = 20;
  const DecodeCostModel cost(workload::model_by_name("llama-3-70b"), mc, hbm, sched);
  // Weights: 70,553,706,496 B (the config's shapes, workloads/models/llama-3-70b.json) / (4.8e12
  // B/s x 0.87) = 16.895045 ms per step.
  // KV: 10,000 tokens x 327,680 B = 3.2768e9 B / (4.8e12 x 0.27) = 2.528395 ms.
  // Overhead: 80 layers x 20 us = 1.6 ms.
  const double expected =
      70'553'706'496.0 / (4.8e12 * 0.87) + 3.2768e9 / (4.8e12 * 0.27) + 80 * 20e-6;
  EXPECT_NEAR(cost.decode_step_s(10'000), expected, 1e-12);
  EXPECT_NEAR(cost.decode_step_s(10'000), 21.023440e-3, 1e-8);
  EXPECT_NEAR(cost.step(1, 10'000, 0, 0, 0).total_s(), expected, 1e-12);
  // Doubling the KV read adds exactly one more KV term.
  EXPECT_NEAR(cost.decode_step_s(20'000) - cost.decode_step_s(10'000), 3.2768e9 / (4.8e12 * 0.27),
              1e-12);
  EXPECT_EQ(cost.kv_bytes_per_token(), 327'680u);
}

TEST(DecodeCostModel, PrefillIsComputeAtUtilisation) {
  ModelConfig mc;
  HbmConfig hbm;
  SchedConfig sched;
  sched.cost_model = CostModel::TwoBandwidth;
  sched.prefill_tflops = 1000;
  sched.prefill_utilization = 0.5;
  const DecodeCostModel cost(workload::model_by_name("llama-3-8b"), mc, hbm, sched);
  // 100 new tokens, no cached prefix: 2 x 8,030,261,248 parameters x 100 dense FLOPs plus 4 x 4096
  // x 32 layers x (100 x 101 / 2) attention FLOPs, at 500 TFLOP/s.
  const double flops = 2 * 8'030'261'248.0 * 100 + 4.0 * 4096 * 32 * 5050;
  EXPECT_NEAR(cost.prefill_s(100, 5050), flops / 500e12, 1e-15);
  EXPECT_EQ(cost.prefill_s(0, 0), 0.0);
}

TEST(LruPolicy, EvictsTheBlockIdleLongestAndNeverAPinnedOne) {
  LruPolicy lru;
  lru.on_idle(1, 0.0);
  lru.on_idle(2, 1.0);
  lru.on_idle(3, 2.0);
  EXPECT_EQ(lru.victim(), 1u);
  lru.on_pinned(1);  // read again by a running request
  EXPECT_EQ(lru.victim(), 2u);
  lru.on_removed(2);
  EXPECT_EQ(lru.victim(), 3u);
  lru.on_idle(1, 3.0);  // its reader finished: most recently used now
  lru.on_removed(3);
  EXPECT_EQ(lru.victim(), 1u);
  lru.on_removed(1);
  EXPECT_FALSE(lru.victim().has_value());
  EXPECT_EQ(lru.evictable(), 0u);
}

TEST(PolicyStore, PersistentStateSurvivesEvictionAndNonPersistentDoesNot) {
  kv::PolicyStore forgetful(false), persistent(true);
  forgetful.touch(7).uses = 5;
  persistent.touch(7).uses = 5;
  forgetful.on_evict(7);
  persistent.on_evict(7);
  EXPECT_EQ(forgetful.find(7), nullptr);
  ASSERT_NE(persistent.find(7), nullptr);
  EXPECT_EQ(persistent.find(7)->uses, 5u);
}

TEST(WriteOnceLedger, CountsDemotionsAndFlagsRewrites) {
  kv::WriteOnceLedger ledger;
  ledger.demotion(1);
  ledger.promotion(1);
  ledger.promotion(1);
  ledger.demotion(2);
  EXPECT_EQ(ledger.max_demotions_per_block(), 1u);
  EXPECT_EQ(ledger.blocks_over_bound(), 0u);
  ledger.rewrite(1);  // re-quantisation writes new payload: delta_b = 2
  EXPECT_EQ(ledger.max_demotions_per_block(), 2u);
  EXPECT_EQ(ledger.blocks_over_bound(), 1u);
  EXPECT_EQ(ledger.rewrites(), 1u);
}

TEST(WriteOnceLedger, AFreedBlocksSuccessorStartsANewLifetime) {
  kv::WriteOnceLedger ledger;
  ledger.demotion(9);
  ledger.retire(9);    // FREE: the block is dead
  ledger.demotion(9);  // a new block with the same identity, demoted once in its own lifetime
  EXPECT_EQ(ledger.max_demotions_per_block(), 1u);
  EXPECT_EQ(ledger.blocks_over_bound(), 0u);
}

TEST(WriteOnceLedger, HeldCountsGiveTheKeyedLedgersFigures) {
  // The same history kept by key and held by the caller (one Counts per block lifetime).
  kv::WriteOnceLedger keyed, held;
  kv::WriteOnceLedger::Counts a, b;
  keyed.demotion(1), held.demotion(a);
  keyed.promotion(1), held.promotion(a);
  keyed.demotion(2), held.demotion(b);
  keyed.rewrite(1), held.rewrite(a);  // delta_b = 2 for block 1
  keyed.retire(2), b = {};            // block 2 freed; its successor starts over
  keyed.demotion(2), held.demotion(b);
  EXPECT_EQ(a.promotions, 1u);
  EXPECT_EQ(a.demotions, 2u);
  EXPECT_EQ(b.demotions, 1u);
  EXPECT_EQ(held.max_demotions_per_block(), keyed.max_demotions_per_block());
  EXPECT_EQ(held.max_demotions_per_block(), 2u);
  EXPECT_EQ(held.blocks_over_bound(), keyed.blocks_over_bound());
  EXPECT_EQ(held.blocks_over_bound(), 1u);
  EXPECT_EQ(held.rewrites(), 1u);
  EXPECT_EQ(held.blocks(), 0u);  // held counts are the caller's
}

TEST(Percentiles, NearestRankPlainAndWeighted) {
  EXPECT_EQ(kv::percentile({5, 1, 3, 2, 4}, 50), 3.0);
  EXPECT_EQ(kv::percentile({5, 1, 3, 2, 4}, 99), 5.0);
  EXPECT_EQ(kv::percentile({}, 50), 0.0);
  // 0.01 s seen by 98 tokens, 1.0 s by 2: the median token waited 0.01 s, the 99th 1.0 s.
  EXPECT_EQ(kv::weighted_percentile({{1.0, 2}, {0.01, 98}}, 50), 0.01);
  EXPECT_EQ(kv::weighted_percentile({{1.0, 2}, {0.01, 98}}, 99), 1.0);
}

TEST(ModelDescriptor, KvBytesPerTokenFromTheShape) {
  // 2 (K, V) x 80 layers x 8 KV heads x 128 x 2 B = 327,680 B = 320 KiB (CALIBRATION.md §5).
  EXPECT_EQ(workload::model_by_name("llama-3-70b").kv_bytes_per_token(2), 327'680u);
  EXPECT_EQ(workload::model_by_name("llama-3-8b").kv_bytes_per_token(2), 131'072u);
  EXPECT_THROW(workload::model_by_name("gpt-5"), std::invalid_argument);
}
