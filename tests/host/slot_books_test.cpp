// The host's slot books on their own: HBM slots (free list, pins, the occupancy integral) and the
// tier store (tier slots, the reclaim order, the copies' formats), each against hand counts.
#include <gtest/gtest.h>

#include <map>
#include <vector>

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
  const auto never_stale = [](uint64_t, uint64_t) { return false; };
  const uint64_t a = tier.queue_for_reclaim(10, never_stale);
  const uint64_t b = tier.queue_for_reclaim(20, never_stale);
  const uint64_t a2 = tier.queue_for_reclaim(10, never_stale);  // left HBM again: a new entry
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

// Entries only leave the reclaim order when the tier fills: a run whose tier rarely fills would
// keep one per tier-only transition. When the order has doubled since its last compaction
// (4,096 entries at first), the entries stale for good leave it and the rest keep their order.
TEST(TierStore, TheReclaimOrderDropsEntriesStaleForGoodAndKeepsTheOrderOfTheRest) {
  HostConfig c;
  TierStore tier(8, 1000, c);
  std::map<uint64_t, uint64_t> current;  // key -> its current epoch, as the books keep it
  const auto stale = [&](uint64_t key, uint64_t epoch) {
    const auto it = current.find(key);
    return it == current.end() || it->second != epoch;
  };
  // Eight keys leave HBM again and again: 4,096 entries, of which the last per key is current.
  for (uint64_t i = 0; i < 4096; ++i) current[i % 8] = tier.queue_for_reclaim(i % 8, stale);
  EXPECT_EQ(tier.reclaim_order_size(), 4096u);
  current.erase(3);  // key 3 forgotten: its entry is stale for good too
  // The next entry finds the order at its floor: 4,089 stale entries leave it first.
  current[100] = tier.queue_for_reclaim(100, stale);
  EXPECT_EQ(tier.reclaim_order_size(), 8u);  // keys 0-2 and 4-7, then 100
  // Oldest first, as queued: 4088 % 8 = 0, so keys 0, 1, 2, 4, 5, 6, 7, then 100.
  const std::vector<uint64_t> want{0, 1, 2, 4, 5, 6, 7, 100};
  for (uint64_t k : want) {
    uint64_t key = 0, epoch = 0;
    ASSERT_TRUE(tier.next_reclaim_candidate(&key, &epoch));
    EXPECT_EQ(key, k);
    EXPECT_EQ(epoch, current.at(k));
  }
  uint64_t key = 0, epoch = 0;
  EXPECT_FALSE(tier.next_reclaim_candidate(&key, &epoch));
  // The next compaction waits until the order has doubled again: 2 x 7 + 4,096 entries.
  for (uint64_t i = 0; i < 4110; ++i) current[200] = tier.queue_for_reclaim(200, stale);
  EXPECT_EQ(tier.reclaim_order_size(), 4110u);
  current[201] = tier.queue_for_reclaim(201, stale);
  EXPECT_EQ(tier.reclaim_order_size(), 2u);
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
