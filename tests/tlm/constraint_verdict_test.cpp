// The constraint report and its verdict line, from events fed by hand (no simulation): what
// CAPACITY reports when it binds, with its size, and that it stays silent when it does not.
#include <gtest/gtest.h>

#include <string>

#include "tlm/constraints/constraints.h"

using namespace kvtier;

namespace {
Constraints empty_constraints() { return Constraints(kv::QosTargets(), 0.99, 1.0); }

ConstraintContext context(uint64_t steps, uint64_t streamed_steps = 0) {
  ConstraintContext x;
  x.end_s = 10.0;
  x.budget_blocks = 100;
  x.block_bytes = 1 << 20;
  x.b_tier_bytes_per_s = 50e9;
  x.steps = steps;
  x.streamed_steps = streamed_steps;
  return x;
}

bool has(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}
}  // namespace

// 3 of 8 steps waited for KV, 2 preemptions, 5 of the steps streamed: the verdict gives each, and
// the waits as a share of the steps (3 / 8 = 37.5 %).
TEST(ConstraintVerdict, CapacityNamesWaitsAsAShareOfStepsPreemptionsAndStreamedSteps) {
  Constraints k = empty_constraints();
  for (int i = 0; i < 3; ++i) k.capacity.queue_head_waited();
  for (int i = 0; i < 2; ++i) k.capacity.preempted();
  const auto report = constraint_report(k, context(8, 5));
  EXPECT_EQ(report["capacity"]["capacity_waits"].get<uint64_t>(), 3u);
  EXPECT_EQ(report["capacity"]["steps"].get<uint64_t>(), 8u);
  EXPECT_EQ(report["capacity"]["streamed_steps"].get<uint64_t>(), 5u);
  const std::string v = constraint_verdict(report);
  EXPECT_TRUE(has(
      v,
      "CAPACITY binds: 3 of 8 steps (37.5 %) with the queue head waiting for KV, 2 preemptions, "
      "0 requests rejected, 5 steps streaming part of the decode set's KV from the tier"))
      << v;
  EXPECT_TRUE(has(constraint_summary(report), "2 preemptions; 5 streamed steps; violations 3"))
      << constraint_summary(report);
}

// Streaming alone (no wait, no preemption) still means the decode set outgrew the budget: CAPACITY
// binds, with 0 waits.
TEST(ConstraintVerdict, StreamingAloneIsCapacityBinding) {
  Constraints k = empty_constraints();
  const std::string v = constraint_verdict(constraint_report(k, context(4, 1)));
  EXPECT_TRUE(has(v, "CAPACITY binds: 0 of 4 steps (0.0 %)")) << v;
  EXPECT_TRUE(has(v, "1 steps streaming part of the decode set's KV")) << v;
}

// An offered rate above the replica's serving ceiling is an overload, said before CAPACITY (the
// queue it builds is what the waits count); at or below the ceiling nothing is said.
TEST(ConstraintVerdict, AnOverloadIsNamedBeforeCapacity) {
  Constraints k = empty_constraints();
  for (int i = 0; i < 6; ++i) k.capacity.queue_head_waited();
  ConstraintContext x = context(8);
  x.offered_requests_per_s = 3.0;
  x.ceiling_requests_per_s = 0.25;
  const auto over = constraint_report(k, x);
  EXPECT_TRUE(over["capacity"]["overloaded"].get<bool>());
  const std::string v = constraint_verdict(over);
  EXPECT_TRUE(has(v, "; OVERLOADED: the workload offers 3.000 requests/s against this replica's "
                     "serving ceiling of 0.250, so its queue grows without bound"))
      << v;
  EXPECT_LT(v.find("OVERLOADED"), v.find("CAPACITY binds: 6 of 8 steps")) << v;
  x.offered_requests_per_s = 0.25;  // at the ceiling: served
  const auto at = constraint_report(k, x);
  EXPECT_FALSE(at["capacity"]["overloaded"].get<bool>());
  EXPECT_FALSE(has(constraint_verdict(at), "OVERLOADED"));
  x.offered_requests_per_s = 0.0;  // every request at one instant: no rate to judge
  EXPECT_FALSE(constraint_report(k, x)["capacity"]["overloaded"].get<bool>());
}

// Nothing waited, nobody was preempted or rejected, nothing streamed: CAPACITY is not named.
TEST(ConstraintVerdict, CapacityIsSilentWhenItDoesNotBind) {
  Constraints k = empty_constraints();
  const std::string v = constraint_verdict(constraint_report(k, context(4)));
  EXPECT_FALSE(has(v, "CAPACITY")) << v;
  EXPECT_TRUE(has(v, "no step read from the tier, so HIDING judged nothing")) << v;
}

// HIDING with nothing to judge is not a pass: no transfer and no chunk give null met fractions
// (printed n/a), and the verdict says nothing was judged. One chunk on time and one transfer on
// time give 1 and "every chunk in time"; one late transfer of two gives 0.5.
TEST(ConstraintVerdict, HidingWithNothingToJudgeIsNullNotMet) {
  Constraints none = empty_constraints();
  const auto empty = constraint_report(none, context(4));
  EXPECT_TRUE(empty["hiding"]["met_fraction"].is_null());
  EXPECT_TRUE(empty["hiding"]["chunk_met_fraction"].is_null());
  EXPECT_FALSE(has(constraint_verdict(empty), "every chunk in time")) << constraint_verdict(empty);
  EXPECT_TRUE(has(constraint_summary(empty), "0 of 0 chunks late (met n/a"))
      << constraint_summary(empty);
  EXPECT_TRUE(has(constraint_summary(empty), "0 of 0 transfers late (met n/a"))
      << constraint_summary(empty);

  Constraints k = empty_constraints();
  EXPECT_FALSE(k.hiding.chunk(1.0, 1.0, 0.0));               // ready exactly at its start
  k.hiding.transfer(0.5, 1.0, Lateness::StallsStep, false);  // 0.5 s early
  k.hiding.transfer(1.5, 1.0, Lateness::StallsStep, false);  // 0.5 s late
  const auto judged = constraint_report(k, context(4));
  EXPECT_DOUBLE_EQ(judged["hiding"]["chunk_met_fraction"].get<double>(), 1.0);
  EXPECT_DOUBLE_EQ(judged["hiding"]["met_fraction"].get<double>(), 0.5);
  EXPECT_TRUE(has(constraint_verdict(judged), "every chunk in time")) << constraint_verdict(judged);
  EXPECT_TRUE(has(constraint_summary(judged), "1 of 2 transfers late (met 0.5"))
      << constraint_summary(judged);
}

// SUSTAINABILITY by hand: window 0 has two steps of 10 ms compute needing 0.3 GB and 0.5 GB from
// the tier: 0.8 GB / 20 ms = 40 GB/s, within 50 GB/s. Window 1 has one step of 10 ms needing
// 0.6 GB (60 GB/s) and one needing nothing (10 ms): 0.6 / 0.02 = 30 GB/s, yet the single step
// demanded 60 GB/s. Window 2: one 10 ms step needing 0.7 GB: 70 GB/s, a violation. The carried
// rate (0.2 GB moved in window 2) is reported beside it and decides nothing.
TEST(ConstraintVerdict, SustainabilityJudgesDemandedBytesOverComputeTime) {
  Constraints k = empty_constraints();
  k.sustainability.step(0.1, 0.010, 0.3e9);
  k.sustainability.step(0.5, 0.010, 0.5e9);
  k.sustainability.step(1.2, 0.010, 0.6e9);
  k.sustainability.step(1.7, 0.010, 0.0);
  k.sustainability.step(2.5, 0.010, 0.7e9);
  k.sustainability.demand(DemandDirection::ToHbm, 2.5, 0.2e9);
  const auto report = constraint_report(k, context(5));
  const auto& s = report["sustainability"];
  EXPECT_DOUBLE_EQ(k.sustainability.demanded_rate(0), 40e9);
  EXPECT_DOUBLE_EQ(k.sustainability.demanded_rate(1), 30e9);
  EXPECT_DOUBLE_EQ(s["peak_demanded_bytes_per_s"].get<double>(), 70e9);
  EXPECT_DOUBLE_EQ(s["peak_step_demanded_bytes_per_s"].get<double>(), 70e9);
  EXPECT_DOUBLE_EQ(s["peak_demanded_utilisation"].get<double>(), 70e9 / 50e9);
  EXPECT_DOUBLE_EQ(s["peak_carried_utilisation"].get<double>(), 0.2e9 / 50e9);
  EXPECT_EQ(s["violations"].get<uint64_t>(), 1u);
  EXPECT_EQ(s["steps_needing_tier"].get<uint64_t>(), 4u);
  EXPECT_TRUE(has(constraint_verdict(report),
                  "SUSTAINABILITY binds: demanded rate exceeded B_tier in 1 windows"));
}

// HIDING by hand: three chunks, planned to start at 1.0, 2.0 and 3.0 ms, usable at 0.9, 2.05 and
// 3.3 ms. With no slack two are late (50 and 300 us); with 100 us of slack only the third (200
// us). An async load is counted apart; the verdict counts chunks.
TEST(ConstraintVerdict, HidingJudgesChunksAgainstTheirPlannedStartPlusSlack) {
  for (double slack : {0.0, 100e-6}) {
    Constraints k = empty_constraints();
    k.hiding.chunk(0.9e-3, 1.0e-3, slack);
    k.hiding.chunk(2.05e-3, 2.0e-3, slack);
    k.hiding.chunk(3.3e-3, 3.0e-3, slack);
    k.hiding.async_load(5e-3, 4e-3, slack);
    ConstraintContext x = context(3);
    x.prefetch_slack_s = slack;
    const auto report = constraint_report(k, x);
    const auto& h = report["hiding"];
    EXPECT_EQ(h["chunks"].get<uint64_t>(), 3u);
    EXPECT_EQ(h["chunks_late"].get<uint64_t>(), slack == 0.0 ? 2u : 1u);
    EXPECT_NEAR(h["chunk_lateness_max_s"].get<double>(), 300e-6 - slack, 1e-12);
    EXPECT_EQ(h["async_loads_late"].get<uint64_t>(), 1u);
    EXPECT_EQ(h["violations"].get<uint64_t>(), (slack == 0.0 ? 2u : 1u) + 1u);
    EXPECT_TRUE(has(constraint_verdict(report), slack == 0.0 ? "2 of 3 chunks" : "1 of 3 chunks"));
  }
}
