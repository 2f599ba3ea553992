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

bool has(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }
}  // namespace

// 3 of 8 steps waited for KV, 2 preemptions, 5 of the steps streamed: the verdict gives each, and the
// waits as a share of the steps (3 / 8 = 37.5 %).
TEST(ConstraintVerdict, CapacityNamesWaitsAsAShareOfStepsPreemptionsAndStreamedSteps) {
  Constraints k = empty_constraints();
  for (int i = 0; i < 3; ++i) k.capacity.queue_head_waited();
  for (int i = 0; i < 2; ++i) k.capacity.preempted();
  const auto report = constraint_report(k, context(8, 5));
  EXPECT_EQ(report["capacity"]["capacity_waits"].get<uint64_t>(), 3u);
  EXPECT_EQ(report["capacity"]["steps"].get<uint64_t>(), 8u);
  EXPECT_EQ(report["capacity"]["streamed_steps"].get<uint64_t>(), 5u);
  const std::string v = constraint_verdict(report);
  EXPECT_TRUE(has(v, "CAPACITY binds: 3 of 8 steps (37.5 %) with the queue head waiting for KV, 2 preemptions, "
                     "0 requests rejected, 5 steps streaming part of the decode set's KV from the tier"))
      << v;
  EXPECT_TRUE(has(constraint_summary(report), "2 preemptions; 5 streamed steps; violations 3")) << constraint_summary(report);
}

// Streaming alone (no wait, no preemption) still means the decode set outgrew the budget: CAPACITY
// binds, with 0 waits.
TEST(ConstraintVerdict, StreamingAloneIsCapacityBinding) {
  Constraints k = empty_constraints();
  const std::string v = constraint_verdict(constraint_report(k, context(4, 1)));
  EXPECT_TRUE(has(v, "CAPACITY binds: 0 of 4 steps (0.0 %)")) << v;
  EXPECT_TRUE(has(v, "1 steps streaming part of the decode set's KV")) << v;
}

// Nothing waited, nobody was preempted or rejected, nothing streamed: CAPACITY is not named.
TEST(ConstraintVerdict, CapacityIsSilentWhenItDoesNotBind) {
  Constraints k = empty_constraints();
  const std::string v = constraint_verdict(constraint_report(k, context(4)));
  EXPECT_FALSE(has(v, "CAPACITY")) << v;
  EXPECT_TRUE(has(v, "every transfer in time")) << v;
}
