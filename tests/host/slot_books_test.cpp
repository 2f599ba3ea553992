// The host's slot books on their own: HBM slots (free list, pins, the occupancy integral) and the
// tier store (tier slots, the reclaim order, the copies' formats), each against hand counts.
#include <gtest/gtest.h>

#include <systemc>

#include "tests/tlm/sc_test_main.h"
#include "tlm/host/hbm_slots.h"
#include "tlm/host/tier_store.h"

using namespace kvtier;

TEST(HbmSlots, HandsOutTheLowestSlotFirstAndTheLastGivenBackNext) {
  HbmOccupancyStats stats;
  HbmSlots slots(4, 1.0, stats);
  EXPECT_EQ(slots.free(), 4u);
  EXPECT_EQ(slots.take(), 0u);
  EXPECT_EQ(slots.take(), 1u);
  EXPECT_EQ(slots.take(), 2u);
  slots.give_back(1);
  EXPECT_EQ(slots.resident(), 2u);
  EXPECT_EQ(slots.take(), 1u);  // a stack: the slot given back last
  EXPECT_EQ(slots.take(), 3u);
  EXPECT_EQ(slots.free(), 0u);
  EXPECT_EQ(stats.peak_resident_blocks, 4u);
  slots.give_back(0);
  slots.give_back(2);
  EXPECT_EQ(stats.peak_resident_blocks, 4u);  // a peak stays
  EXPECT_EQ(slots.resident(), 2u);
}

TEST(HbmSlots, TakingFromAFullBudgetIsAnError) {
  HbmOccupancyStats stats;
  HbmSlots slots(1, 1.0, stats);
  slots.take();
  EXPECT_THROW(slots.take(), sc_core::sc_report);
}

// Two slots resident from 0.5 s to 2.25 s, then three until 3 s, one-second windows:
// total 2 x 1.75 + 3 x 0.75 = 5.75 block-seconds; windows [0,1) 1.0, [1,2) 2.0, [2,3) 0.5 + 2.25.
TEST(HbmSlots, IntegratesResidentSlotsOverTimeAndPerWindow) {
  HbmOccupancyStats stats;
  HbmSlots slots(8, 1.0, stats);
  slots.integrate(0.5);  // nothing resident yet
  slots.take();
  slots.take();
  slots.integrate(2.25);
  slots.take();
  slots.integrate(3.0);
  slots.integrate(2.0);  // never backwards
  EXPECT_DOUBLE_EQ(stats.hbm_block_seconds, 5.75);
  ASSERT_EQ(stats.hbm_block_seconds_per_window.size(), 3u);
  EXPECT_DOUBLE_EQ(stats.hbm_block_seconds_per_window[0], 1.0);
  EXPECT_DOUBLE_EQ(stats.hbm_block_seconds_per_window[1], 2.0);
  EXPECT_DOUBLE_EQ(stats.hbm_block_seconds_per_window[2], 2.75);
  EXPECT_DOUBLE_EQ(slots.integrated_to_s(), 3.0);
}

TEST(HbmSlots, VerifyNamesEachCounterThatDisagreesWithARecount) {
  HbmOccupancyStats stats;
  HbmSlots slots(4, 1.0, stats);
  slots.take();
  slots.take();
  slots.pin(2);
  slots.unpin();
  EXPECT_EQ(slots.pinned(), 1u);
  EXPECT_EQ(slots.verify(2, 1), "");
  EXPECT_EQ(slots.verify(2, 0), "pinned slots 1 but blocks say 0; ");
  EXPECT_EQ(slots.verify(3, 1), "resident slots 2 but blocks say 3; ");
}

TEST(TierStore, SlotsAreAStackAndUsedCountsWhatIsTaken) {
  HostConfig c;
  TierStore tier(3, 1000, c);
  EXPECT_EQ(tier.blocks(), 3u);
  EXPECT_EQ(tier.take(), 0u);
  EXPECT_EQ(tier.take(), 1u);
  EXPECT_EQ(tier.used(), 2u);
  tier.give_back(0);
  EXPECT_EQ(tier.take(), 0u);
  EXPECT_EQ(tier.take(), 2u);
  EXPECT_TRUE(tier.full());
  EXPECT_EQ(tier.used(), 3u);
}

TEST(TierStore, TheReclaimOrderIsOldestFirstWithAFreshEpochPerEntry) {
  HostConfig c;
  TierStore tier(3, 1000, c);
  const uint64_t a = tier.queue_for_reclaim(10);
  const uint64_t b = tier.queue_for_reclaim(20);
  const uint64_t a2 = tier.queue_for_reclaim(10);  // block 10 left HBM again: its entry is new
  EXPECT_LT(a, b);
  EXPECT_LT(b, a2);
  uint64_t key = 0, epoch = 0;
  ASSERT_TRUE(tier.next_reclaim_candidate(&key, &epoch));
  EXPECT_EQ(key, 10u);
  EXPECT_EQ(epoch, a);  // stale now: the caller compares it with the block's current epoch
  ASSERT_TRUE(tier.next_reclaim_candidate(&key, &epoch));
  EXPECT_EQ(key, 20u);
  ASSERT_TRUE(tier.next_reclaim_candidate(&key, &epoch));
  EXPECT_EQ(epoch, a2);
  EXPECT_FALSE(tier.next_reclaim_candidate(&key, &epoch));
}

// A 5 MiB block: FP8 at the default ratio 0.5 stores 2.5 MiB; INT4 at 0.3 stores
// ceil(5,242,880 x 0.3) = 1,572,864 bytes; BF16 the whole block.
TEST(TierStore, StoredBytesFollowTheFormatsRatios) {
  HostConfig c;
  c.int4_bytes_ratio = 0.3;
  TierStore tier(1, 5u << 20, c);
  EXPECT_EQ(tier.stored_bytes(kv::Format::Bf16), 5u << 20);
  EXPECT_EQ(tier.stored_bytes(kv::Format::Fp8), 5u << 19);
  EXPECT_EQ(tier.stored_bytes(kv::Format::Int4), 1'572'864u);
  TierStore odd(1, 1001, c);
  EXPECT_EQ(odd.stored_bytes(kv::Format::Fp8), 501u);  // rounded up, never lost
}

TEST(TierStore, RecompressionNarrowsOnlyWhatIsWiderThanItsFormat) {
  HostConfig c;
  c.tier_format = TierFormat::Fp8;
  EXPECT_EQ(TierStore(1, 1000, c).copy_format(), kv::Format::Fp8);
  EXPECT_FALSE(TierStore(1, 1000, c).recompresses(kv::Format::Bf16));  // host.recompress = none
  c.recompress_format = Recompress::Fp8;
  const TierStore tier(1, 1000, c);
  EXPECT_TRUE(tier.recompresses(kv::Format::Bf16));
  EXPECT_FALSE(tier.recompresses(kv::Format::Fp8));
  EXPECT_FALSE(tier.recompresses(kv::Format::Int4));
  EXPECT_EQ(tier.recompress_format(), kv::Format::Fp8);
}

KVTIER_SC_TEST_MAIN()
