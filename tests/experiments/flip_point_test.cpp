// Where an experiment's verdict flips along its axis (platforms/flip_point.h), on points given by
// hand: the first value in ascending order whose verdict differs from the smallest measured
// value's, none when every measured value agrees, unmeasured points skipped.
#include <gtest/gtest.h>

#include "platforms/claim_rules.h"
#include "platforms/flip_point.h"

using namespace kvtier;

// Budgets 8, 16, 32, 64 GiB given out of order: refuted at 8 and 16, supported from 32 on.
TEST(FlipPoint, FirstValueWhoseVerdictDiffersInAscendingOrder) {
  FlipPoint f{"budget", {{32, true}, {8, false}, {64, true}, {16, false}}};
  ASSERT_TRUE(f.value());
  EXPECT_EQ(*f.value(), 32);
  EXPECT_EQ(f.first_verdict(), false);
  const auto j = flip_json(f);
  EXPECT_EQ(j["range"], nlohmann::ordered_json::array({8, 64}));
  EXPECT_EQ(j["value"], 32);
  EXPECT_EQ(j["supported_below_value"], false);
  EXPECT_EQ(j["points"][0]["value"], 8);
  EXPECT_EQ(j["points"][3]["supported"], true);
  EXPECT_EQ(describe_flip(f), "flip: along budget 8 to 64, refuted below 32, supported at 32");
}

// The same verdict at every value: no flip in range (null), which the line says as such.
TEST(FlipPoint, NoneWhenEveryMeasuredValueAgrees) {
  FlipPoint f{"tenants", {{1, true}, {4, true}, {16, std::nullopt}, {64, true}}};
  EXPECT_FALSE(f.value());
  const auto j = flip_json(f);
  EXPECT_TRUE(j["value"].is_null());
  EXPECT_TRUE(j["supported_below_value"].is_null());
  EXPECT_TRUE(j["points"][2]["supported"].is_null());  // 16: not measured
  EXPECT_EQ(describe_flip(f),
            "flip: none along tenants 1 to 64 (supported at every measured value)");
}

// An unmeasured smallest value does not set the reference verdict; nothing measured, nothing
// flips; nothing swept, no range.
TEST(FlipPoint, UnmeasuredPointsAreSkipped) {
  FlipPoint f{"entries", {{256, std::nullopt}, {1024, true}, {4096, false}}};
  EXPECT_EQ(f.first_verdict(), true);
  EXPECT_EQ(*f.value(), 4096);
  FlipPoint none{"entries", {{256, std::nullopt}}};
  EXPECT_FALSE(none.value());
  EXPECT_EQ(describe_flip(none), "flip: nothing measured along entries 256 to 256");
  EXPECT_TRUE(flip_json(FlipPoint{"x", {}})["range"].is_null());
}

// C4's test on hand-made rows (platforms/commands/experiment.h), 5 % relative margin.
// Supported: the device's word lifts the hit rate 2 points over none and the host's store only
// 0.5 (a bounded host store would do that). Refuted: the host's store does what the device's
// does. Refuted too where the device changes nothing beyond the margins: 1 point of hit rate is
// not more than 1, A_read 4 % lower is not more than 5 %.
// C1 by hand: 15 ms against 23 ms at p99, and 0.80 against 0.88 us of stall per token: the host
// arm's stall is 0.08 / 0.88 = 9.1 % above, more than 5 %: supported. The excerpt's own figures
// (0.841 against 0.879 us: 4.3 %) are not; nor is a lower stall with a higher latency, nor a host
// arm without stall.
TEST(C1Rule, LowerLatencyAndMateriallyLessStall) {
  const experiment::PromotionPath device{0.015, 0.80e-6}, host{0.023, 0.88e-6};
  EXPECT_NEAR(experiment::c1_stall_difference(device, host), 0.08 / 0.88, 1e-12);
  EXPECT_TRUE(experiment::c1_holds(device, host, 0.05));
  EXPECT_FALSE(experiment::c1_holds({0.015, 0.841e-6}, {0.023, 0.879e-6}, 0.05));
  EXPECT_FALSE(experiment::c1_holds({0.024, 0.80e-6}, host, 0.05));  // latency not lower
  EXPECT_FALSE(experiment::c1_holds(device, {0.023, 0.0}, 0.05));    // nothing to remove
}

TEST(C4Rule, DeviceBetterThanNoneAndTheHostNotTheSame) {
  const experiment::Placement none{0.30, 1.00, 2.00, 100.0};
  const experiment::Placement device{0.32, 0.90, 1.90, 104.0};
  const experiment::Placement host_short{0.305, 0.99, 1.99, 100.5};
  EXPECT_EQ(experiment::materially_better(device, none, 0.05),
            (std::vector<std::string>{"hit rate", "A_read"}));
  EXPECT_TRUE(experiment::c4_holds(none, device, host_short, 0.05));
  EXPECT_FALSE(experiment::c4_holds(none, device, device, 0.05));  // host-side achieves the same
  const experiment::Placement marginal{0.31, 0.96, 1.92, 104.9};
  EXPECT_TRUE(experiment::materially_better(marginal, none, 0.05).empty());
  EXPECT_FALSE(experiment::c4_holds(none, marginal, none, 0.05));
  // A relative margin of 0 counts any improvement of the ratios.
  EXPECT_EQ(experiment::materially_better(marginal, none, 0.0),
            (std::vector<std::string>{"A_read", "A_traffic", "reuse per moved byte"}));
}
