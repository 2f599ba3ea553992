// One replica's serving ceiling and a workload's offered load (platforms/serving_capacity.h):
// hand counts of the offered side, the estimate's terms against the step cost model it is built
// on, and the sizing and overload warning going one way and then the other.
#include <gtest/gtest.h>

#include "platforms/platform.h"
#include "platforms/serving_capacity.h"
#include "tests/tlm/sc_test_main.h"
#include "tlm/sched/decode_cost_model.h"

using namespace kvtier;

namespace {

workload::Workload three_requests(double last_arrival_s) {
  workload::Workload w;
  auto add = [&](double t, uint32_t prompt, uint32_t output, std::vector<uint64_t> keys) {
    workload::Request r;
    r.id = w.requests.size();
    r.arrival_s = t;
    r.prompt_tokens = prompt;
    r.output_tokens = output;
    r.prefix_hashes = std::move(keys);
    w.requests.push_back(r);
  };
  add(0.0, 100, 10, {1, 2});
  add(1.0, 200, 20, {1, 3});
  add(last_arrival_s, 300, 30, {4});
  return w;
}

}  // namespace

// 3 requests over 4 s; prompts 100, 200, 300 (mean 200), outputs 10, 20, 30 (mean 20); of the
// five prompt blocks only the second request's key 1 was seen before.
TEST(ServingCapacity, OfferedLoadCountsRateMeansAndReuseByHand) {
  const OfferedLoad o = offered_load(three_requests(4.0));
  EXPECT_DOUBLE_EQ(o.requests_per_s, 0.75);
  EXPECT_DOUBLE_EQ(o.mean_prompt_tokens, 200.0);
  EXPECT_DOUBLE_EQ(o.mean_output_tokens, 20.0);
  EXPECT_DOUBLE_EQ(o.prefix_reuse, 0.2);
  EXPECT_DOUBLE_EQ(offered_load(three_requests(1.0)).requests_per_s, 3.0);
  EXPECT_EQ(offered_load(workload::Workload{}).requests_per_s, 0.0);
}

// The estimate's terms on the default platform: B is the KV budget over the mean context (8,000
// tokens, 4,000 + 8,000/2 output) when that is below sched.max_decode_set, else the cap; a
// request costs its prefill plus O decode steps shared by B.
TEST(ServingCapacity, DecodeSetAndServiceTimeFollowTheStepCostModel) {
  const PlatformConfig config = load_platform("", {});
  const double kv_tokens =
      static_cast<double>(static_cast<uint64_t>(config.hbm.kv_budget_gib * 1024 * 1024 * 1024) /
                          block_bytes(config, config.model_shape)) /
      layer_groups(config, config.model_shape) * config.host.block_tokens;
  const ServingCapacity c = serving_capacity(config, 4000, 8000, 0.0);
  EXPECT_EQ(c.decode_set, std::min<uint64_t>(static_cast<uint64_t>(kv_tokens / 8000),
                                             config.sched.max_decode_set));
  const DecodeCostModel cost(config.model_shape, config.model, config.hbm, config.sched,
                             config.gpu);
  EXPECT_DOUBLE_EQ(c.decode_step_s,
                   cost.step(c.decode_set, c.decode_set * 8000, 0, 0, 0).total_s());
  EXPECT_GT(c.prefill_s, 0.0);
  EXPECT_DOUBLE_EQ(c.service_s, c.prefill_s + 8000 * c.decode_step_s / c.decode_set);
  EXPECT_DOUBLE_EQ(c.requests_per_s, 1.0 / c.service_s);
  // Every prompt token cached: no prefill; more cached, more served.
  const ServingCapacity all = serving_capacity(config, 4000, 8000, 1.0);
  EXPECT_EQ(all.prefill_s, 0.0);
  EXPECT_GT(all.requests_per_s, c.requests_per_s);
  // A small budget holds one request: B = 1 (never 0).
  const PlatformConfig small = load_platform("", {"hbm.kv_budget_gib=0.5"});
  EXPECT_EQ(serving_capacity(small, 4000, 8000, 0.0).decode_set, 1u);
}

// The estimate on a second geometry: the pinned preset's all-layer blocks (one layer group) of 32
// tokens, where the default has four groups of 16-token blocks. The KV budget holds the same
// tokens either way, to within one block: budget / (KV bytes per token on one GPU). At a mean
// context of 8,000 tokens the decode set is that over 8,000 on both, and the decode step and
// prefill, which read tokens, not blocks, give both the same ceiling.
TEST(ServingCapacity, ASecondGeometryHoldsTheSameTokensAndServesTheSame) {
  const PlatformConfig one = load_platform("", {});
  const PlatformConfig two = load_platform("h200-cxl2-x16-pinned", {"host.block_tokens=32"});
  ASSERT_EQ(layer_groups(one, one.model_shape), 4u);
  ASSERT_EQ(layer_groups(two, two.model_shape), 1u);
  ASSERT_EQ(one.hbm.kv_budget_gib, two.hbm.kv_budget_gib);
  const double bytes_per_token =
      static_cast<double>(one.model_shape.kv_bytes_per_token(one.model.kv_dtype_bytes)) /
      one.model.tensor_parallel;
  const double tokens = one.hbm.kv_budget_gib * 1024 * 1024 * 1024 / bytes_per_token;
  for (const PlatformConfig* config : {&one, &two}) {
    const ServingCapacity c = serving_capacity(*config, 4000, 8000, 0.0);
    const uint64_t by_hand =
        std::min<uint64_t>(static_cast<uint64_t>(tokens / 8000), config->sched.max_decode_set);
    // The budget binds here, not the decode-set cap, so the geometry could have changed it.
    ASSERT_LT(by_hand, config->sched.max_decode_set) << config->source;
    EXPECT_EQ(c.decode_set, by_hand) << config->source;
  }
  const ServingCapacity a = serving_capacity(one, 4000, 8000, 0.5);
  const ServingCapacity b = serving_capacity(two, 4000, 8000, 0.5);
  EXPECT_DOUBLE_EQ(a.decode_step_s, b.decode_step_s);
  EXPECT_DOUBLE_EQ(a.prefill_s, b.prefill_s);
  EXPECT_DOUBLE_EQ(a.requests_per_s, b.requests_per_s);
}

// Sizing goes one way and then the other: a rate under one replica's ceiling needs one and is no
// overload; the same requests arriving 50 times as fast need more, and run warns.
TEST(ServingCapacity, ReplicasNeededAndOverloadWarningFlipWithTheRate) {
  const PlatformConfig config = load_platform("", {});
  OfferedLoad o;
  o.mean_prompt_tokens = 2000;
  o.mean_output_tokens = 200;
  const ServingCapacity one = serving_capacity(config, 2000, 200, 0.0);
  o.requests_per_s = 0.5 * one.requests_per_s;
  EXPECT_EQ(replicas_needed(o, one, 1.0), 1u);
  EXPECT_EQ(overload_warning(config, o, 1), "");
  o.requests_per_s = 2.5 * one.requests_per_s;
  EXPECT_EQ(replicas_needed(o, one, 1.0), 3u);  // ceil(2.5)
  EXPECT_EQ(replicas_needed(o, one, 0.8), 4u);  // ceil(3.125)
  const std::string w = overload_warning(config, o, 1);
  EXPECT_NE(w.find("queue grows without bound"), std::string::npos) << w;
  EXPECT_NE(w.find("about 3 replicas"), std::string::npos) << w;
  EXPECT_EQ(overload_warning(config, o, 3), "");  // three replicas keep up
  o.requests_per_s = 0;
  EXPECT_EQ(replicas_needed(o, one, 1.0), 0u);
}

KVTIER_SC_TEST_MAIN()
