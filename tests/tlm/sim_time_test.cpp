// The inline time conversions of tlm/common/timeline.h against SystemC's own: the same tick
// count for every value, and the same double back, bit for bit (a run's stats.json must not
// depend on which of the two computed it).
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <random>

#include "tests/tlm/sc_test_main.h"
#include "tlm/common/timeline.h"
#include "tlm/link/time_queue.h"

using namespace kvtier;

namespace {

bool same_bits(double a, double b) { return std::memcmp(&a, &b, sizeof a) == 0; }

TEST(SimTime, ResolutionIsTheOnePicosecondTheHelpersAssume) {
  EXPECT_NO_THROW(check_time_resolution());
}

TEST(SimTime, SecondsAndNanosecondsRoundAsSystemCDoes) {
  std::mt19937_64 rng(7);
  // Durations from femtoseconds to hours, on a log scale, plus exact tick boundaries.
  std::uniform_real_distribution<double> exponent(-16.0, 4.0);
  for (int i = 0; i < 200000; ++i) {
    const double s = std::pow(10.0, exponent(rng));
    ASSERT_EQ(seconds(s).value(), sc_core::sc_time(s, sc_core::SC_SEC).value()) << s;
    const double ns = s * 1e9;
    ASSERT_EQ(nanoseconds(ns).value(), sc_core::sc_time(ns, sc_core::SC_NS).value()) << ns;
  }
  for (double half : {0.5e-12, 1.5e-12, 2.5e-12, 1e-12, 0.0}) {
    EXPECT_EQ(seconds(half).value(), sc_core::sc_time(half, sc_core::SC_SEC).value()) << half;
  }
  EXPECT_EQ(seconds(0.0), sc_core::SC_ZERO_TIME);
  EXPECT_EQ(nanoseconds(12.5).value(), 12500u);  // 12.5 ns is 12,500 ticks of 1 ps
}

TEST(SimTime, FromTicksEqualsSystemCsFromValueOverTheWholeRange) {
  std::mt19937_64 rng(13);
  std::uniform_int_distribution<uint64_t> ticks(0, uint64_t(1) << 62);
  for (int i = 0; i < 200000; ++i) {
    const uint64_t v = i % 2 ? ticks(rng) : ticks(rng) >> (rng() % 62);
    ASSERT_EQ(from_ticks(v).value(), v) << v;
    ASSERT_EQ(from_ticks(v), sc_core::sc_time::from_value(v)) << v;
  }
  // Around 2^52 and 2^53, where a double stops holding every tick count.
  for (uint64_t base : {uint64_t(1) << 52, uint64_t(1) << 53, uint64_t(0)}) {
    for (uint64_t d = 0; d < 64; ++d) {
      if (base >= d) {
        EXPECT_EQ(from_ticks(base - d).value(), base - d);
      }
      EXPECT_EQ(from_ticks(base + d).value(), base + d);
    }
  }
  EXPECT_EQ(from_ticks(~uint64_t(0)).value(), ~uint64_t(0));
}

TEST(SimTime, ToSecondsGivesSystemCsDoubleBitForBit) {
  std::mt19937_64 rng(11);
  std::uniform_int_distribution<uint64_t> ticks(0, uint64_t(1) << 62);
  std::uniform_int_distribution<uint64_t> small(0, 100000000);
  for (int i = 0; i < 200000; ++i) {
    const sc_core::sc_time t = sc_core::sc_time::from_value(i % 2 ? ticks(rng) : small(rng));
    ASSERT_TRUE(same_bits(to_seconds(t), t.to_seconds())) << t.value();
  }
  EXPECT_DOUBLE_EQ(to_seconds(sc_core::sc_time(3, sc_core::SC_US)), 3e-6);
}

// sim_now() reads the kernel's clock inline: the same object sc_time_stamp() returns, before and
// after time advances.
TEST(SimTime, SimNowIsTheKernelsTimeStamp) {
  EXPECT_EQ(&sim_now(), &sc_core::sc_time_stamp());
  const sc_core::sc_time before = sim_now();
  sc_core::sc_start(sc_core::sc_time(7, sc_core::SC_NS));
  EXPECT_EQ(sim_now(), before + sc_core::sc_time(7, sc_core::SC_NS));
  EXPECT_EQ(sim_now(), sc_core::sc_time_stamp());
}

}  // namespace

KVTIER_SC_TEST_MAIN()
