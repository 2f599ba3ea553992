// Seeded constrained-random test of the Verilated kvdp engine against the reference model,
// and the proof that this test can fail: the same run on the mutant build with the
// write_once_skip mutant selected (DEMOTE ignores an existing tier copy, rtl/mutants) must
// report both scoreboard mismatches and RTL assertion failures.
#include <gtest/gtest.h>

#include <cstdlib>

#include "Vkvdp_engine.h"
#include "Vkvdp_engine_alt.h"
#include "Vkvdp_engine_broken.h"
#include "kvdp_mutants.h"
#include "kvdp_random_run.h"

namespace kvtier::rtl_tb {
namespace {

// KVDP_RANDOM_SEED in the environment replays another seed; the default is fixed so CI is
// reproducible.
uint64_t random_seed() {
  const char* env = std::getenv("KVDP_RANDOM_SEED");
  return env ? std::strtoull(env, nullptr, 0) : 20240611ull;
}

TEST(KvdpEngineRandom, HundredThousandDescriptorsMatchReference) {
  constexpr uint64_t kDescriptors = 100000;
  const RandomRunResult r = run_random<Vkvdp_engine>(kTbConfig, random_seed(), kDescriptors);
  EXPECT_TRUE(r.drained) << "engine did not complete every descriptor";
  EXPECT_EQ(r.completions, kDescriptors);
  EXPECT_EQ(r.mismatches, 0u);
  EXPECT_EQ(r.assertion_failures, 0);
  // The stimulus really reached the corners it is meant to reach.
  EXPECT_GT(r.status_histogram.count(cmdset::Status::NO_SPACE), 0u);
  EXPECT_GT(r.status_histogram.count(cmdset::Status::DENIED), 0u);
  EXPECT_GT(r.status_histogram.count(cmdset::Status::PINNED), 0u);
  EXPECT_GT(r.status_histogram.count(cmdset::Status::BAD_OPCODE), 0u);
  EXPECT_GT(r.write_once_skips, 0u);
  EXPECT_GT(r.rewrites, 0u);
  EXPECT_EQ(r.max_outstanding_seen, kTbMaxOutstanding);
  // Transfers longer than a run left in several handshakes, and runs of several bursts were
  // taken (MaxRunBursts = 2): fewer handshakes than bursts.
  EXPECT_GT(r.multi_burst_runs, 0u);
  EXPECT_LT(r.runs, r.bursts);
  EXPECT_GT(r.multi_burst_dones, 0u) << "done pulses of several bursts reached the engine";
  RecordProperty("cycles_per_second",
                 std::to_string(r.wall_seconds > 0 ? double(r.cycles) / r.wall_seconds : 0.0));
}

// The same checks on a second configuration: one-cycle SRAM, a single outstanding transfer,
// queue depths that are not powers of two, 6-bit tags and 4-bit tenants (keys and tenants
// alias in the index exactly as the reference model says).
TEST(KvdpEngineRandom, AlternateConfigurationMatchesReference) {
  constexpr uint64_t kDescriptors = 30000;
  const RandomRunResult r =
      run_random<Vkvdp_engine_alt>(kTbAltConfig, random_seed() + 1, kDescriptors);
  EXPECT_TRUE(r.drained);
  EXPECT_EQ(r.completions, kDescriptors);
  EXPECT_EQ(r.mismatches, 0u);
  EXPECT_EQ(r.assertion_failures, 0);
  EXPECT_GT(r.status_histogram.count(cmdset::Status::NO_SPACE), 0u);
  EXPECT_EQ(r.max_outstanding_seen, kTbAltConfig.max_outstanding);
  // One burst per handshake (MaxRunBursts = 1).
  EXPECT_EQ(r.multi_burst_runs, 0u);
  EXPECT_EQ(r.runs, r.bursts);
}

uint32_t mutant_id(const char* name) {
  for (const cosim::MutantInfo& m : cosim::kMutants)
    if (std::string(name) == m.name) return m.id;
  ADD_FAILURE() << "no mutant " << name;
  return 0;
}

TEST(KvdpEngineRandom, BrokenWriteOnceVariantIsCaught) {
  const RandomRunResult r = run_random<Vkvdp_engine_broken>(kTbConfig, random_seed(), 20000, true,
                                                            mutant_id("write_once_skip"));
  EXPECT_GT(r.mismatches, 0u) << "the scoreboard missed a skipped write-once check";
  EXPECT_GT(r.assertion_failures, 0) << "the RTL assertions missed a skipped write-once check";
}

// The mutant build with no mutant selected is the design: the same run passes.
TEST(KvdpEngineRandom, MutantBuildWithoutMutantMatchesReference) {
  const RandomRunResult r =
      run_random<Vkvdp_engine_broken>(kTbConfig, random_seed(), 20000, true, 0);
  EXPECT_TRUE(r.drained);
  EXPECT_EQ(r.mismatches, 0u);
  EXPECT_EQ(r.assertion_failures, 0);
}

}  // namespace
}  // namespace kvtier::rtl_tb
