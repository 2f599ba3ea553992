// Long random run of the Verilated engine: the testbench's constrained-random stimulus
// (tests/rtl/kvdp_random_run.h: neighbour regimes that stall the DMA and completion ports,
// out-of-order burst completions, so back-pressure reaches the descriptor queue) for at least
// KVDP_LONG_CYCLES engine cycles in one continuous run, assertions on, against the reference
// model. Built into kvdp_rtl_tests (the Verilated models are compiled once); without
// KVDP_LONG_CYCLES the case skips, so the target's normal discovery does not run it. ctest
// runs it as rtl_random_1e6_cycles (label fast, CI) and rtl_random_1e7_cycles (label long).
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>

#include "Vkvdp_engine.h"
#include "kvdp_random_run.h"

namespace kvtier::rtl_tb {
namespace {

TEST(KvdpEngineLong, RandomTrafficWithBackPressureForTheRequestedCycles) {
  const char* env = std::getenv("KVDP_LONG_CYCLES");
  if (env == nullptr)
    GTEST_SKIP()
        << "KVDP_LONG_CYCLES not set (ctest: rtl_random_1e6_cycles, rtl_random_1e7_cycles)";
  const uint64_t target = std::strtoull(env, nullptr, 0);
  ASSERT_GT(target, 0u) << "KVDP_LONG_CYCLES='" << env << "' is not a positive cycle count";
  const uint64_t seed = 0x5eed0001;

  // Cycles per descriptor of this stimulus, from a short run; the long run gets 25 % more
  // descriptors than that predicts, and must reach the target in one continuous run.
  const RandomRunResult probe = run_random<Vkvdp_engine>(kTbConfig, seed + 1, 20000, false);
  ASSERT_TRUE(probe.drained);
  const double cycles_per_descriptor = double(probe.cycles) / double(probe.descriptors);
  const uint64_t descriptors =
      static_cast<uint64_t>(std::ceil(1.25 * double(target) / cycles_per_descriptor));

  const RandomRunResult r = run_random<Vkvdp_engine>(kTbConfig, seed, descriptors);
  EXPECT_GE(r.cycles, target);
  EXPECT_TRUE(r.drained) << "engine did not complete every descriptor";
  EXPECT_EQ(r.completions, descriptors);
  EXPECT_EQ(r.mismatches, 0u);
  EXPECT_EQ(r.assertion_failures, 0);
  // Every corner of the command set was reached, and the queues filled.
  for (const cmdset::Status s :
       {cmdset::Status::OK, cmdset::Status::MISS, cmdset::Status::DENIED, cmdset::Status::NO_SPACE,
        cmdset::Status::PINNED, cmdset::Status::BAD_OPCODE})
    EXPECT_GT(r.status_histogram.count(s), 0u) << cmdset::to_string(s);
  EXPECT_GT(r.write_once_skips, 0u);
  EXPECT_GT(r.rewrites, 0u);
  EXPECT_EQ(r.max_outstanding_seen, kTbMaxOutstanding);
  std::printf(
      "long random run: %llu cycles (target %llu), %llu descriptors, %llu bursts, %.1f s wall, "
      "%llu mismatches, %d assertion failures\n",
      static_cast<unsigned long long>(r.cycles), static_cast<unsigned long long>(target),
      static_cast<unsigned long long>(descriptors), static_cast<unsigned long long>(r.bursts),
      r.wall_seconds, static_cast<unsigned long long>(r.mismatches), r.assertion_failures);
}

}  // namespace
}  // namespace kvtier::rtl_tb
