// The books of a tier shared by several replicas (tlm/pool/tier_pool.h) against hand counts:
// write-once across replicas, the tenant rule, unwritten copies, the last holder's FREE, and a
// reclaim that asks every holder.
#include <gtest/gtest.h>

#include <limits>
#include <set>

#include "tlm/pool/pool_demand.h"
#include "tlm/pool/tier_pool.h"

using namespace kvtier;

namespace {

// A replica as the pool sees it: the keys it still needs, and the keys it was told are gone.
struct FakeMember final : PoolMemberIF {
  std::set<uint64_t> needed, gone;
  bool needs_copy(uint64_t key) const override { return needed.count(key) > 0; }
  void copy_reclaimed(uint64_t key) override { gone.insert(key); }
};

HostConfig host() { return HostConfig{}; }

}  // namespace

// Replica 0 stores key 7 (tenant 0); until its DEMOTE is done at 2 s nobody may read or hold it.
// Replica 1 then finds it (a cross-replica hit) and, evicting its own block of key 7 later,
// holds the same copy instead of storing another: one slot for two holders.
TEST(TierPool, ACopyIsStoredOnceAndReadByAnotherReplicaOnceWritten) {
  TierPool pool(4, 1024, host());
  FakeMember a, b;
  const uint32_t ra = pool.join(a), rb = pool.join(b);
  EXPECT_EQ(ra, 0u);
  EXPECT_EQ(rb, 1u);
  const PoolCopy& c = pool.store_copy(7, kv::Format::Bf16, 0, false, ra);
  EXPECT_EQ(c.slot, 0u);  // the lowest slot first
  EXPECT_EQ(pool.store().used(), 1u);
  EXPECT_EQ(pool.readable(7, 0, 1.0), nullptr);  // DEMOTE not done: ready time unknown
  pool.written(7, 2.0);
  EXPECT_EQ(pool.readable(7, 0, 1.5), nullptr);  // done only at 2 s
  EXPECT_EQ(pool.stats().refused_unwritten, 2u);
  ASSERT_NE(pool.readable(7, 0, 2.0), nullptr);
  pool.hold(7, rb);
  EXPECT_EQ(pool.stats().found, 1u);
  EXPECT_EQ(pool.stats().found_foreign, 1u);
  bool refused = true;
  const PoolCopy* held = pool.hold_on_eviction(7, 0, rb, 3.0, &refused);
  ASSERT_NE(held, nullptr);
  EXPECT_FALSE(refused);
  EXPECT_EQ(held->slot, 0u);
  EXPECT_EQ(held->holders, 0b11u);
  EXPECT_EQ(pool.store().used(), 1u);  // still one copy
  // A key nobody stored: the evicting replica must store it.
  EXPECT_EQ(pool.hold_on_eviction(8, 0, rb, 3.0, &refused), nullptr);
  EXPECT_FALSE(refused);
}

// Tenant 0's private copy is neither read nor held by tenant 1; a shareable one is.
TEST(TierPool, AnotherTenantsPrivateCopyIsNeverServed) {
  TierPool pool(4, 1024, host());
  FakeMember a, b;
  const uint32_t ra = pool.join(a), rb = pool.join(b);
  pool.store_copy(1, kv::Format::Bf16, 0, false, ra);
  pool.store_copy(2, kv::Format::Bf16, 0, true, ra);
  pool.written(1, 0.0);
  pool.written(2, 0.0);
  EXPECT_EQ(pool.readable(1, 1, 1.0), nullptr);
  EXPECT_EQ(pool.visible(1, 1, 1.0), nullptr);
  EXPECT_NE(pool.readable(1, 0, 1.0), nullptr);  // its own tenant, on any replica
  EXPECT_NE(pool.readable(2, 1, 1.0), nullptr);  // shareable
  bool refused = false;
  EXPECT_EQ(pool.hold_on_eviction(1, 1, rb, 1.0, &refused), nullptr);
  EXPECT_TRUE(refused);  // the evicting replica keeps no copy: the key is taken
  EXPECT_EQ(pool.stats().refused_tenant, 2u);
}

// Two holders: the first to let go frees nothing; the last one's release frees the slot (its
// caller sends the one FREE).
TEST(TierPool, OnlyTheLastHolderFreesTheCopy) {
  TierPool pool(2, 1024, host());
  FakeMember a, b;
  const uint32_t ra = pool.join(a), rb = pool.join(b);
  pool.store_copy(5, kv::Format::Bf16, 0, true, ra);
  pool.written(5, 0.0);
  pool.hold(5, rb);
  EXPECT_FALSE(pool.release(5, ra));
  EXPECT_EQ(pool.store().used(), 1u);
  EXPECT_TRUE(pool.release(5, rb));
  EXPECT_EQ(pool.store().used(), 0u);
  EXPECT_EQ(pool.find(5), nullptr);
  EXPECT_EQ(pool.stats().freed, 1u);
  // A refused DEMOTE takes its copy out at once.
  pool.store_copy(6, kv::Format::Bf16, 0, false, ra);
  pool.refused(6);
  EXPECT_EQ(pool.store().used(), 0u);
}

// A full pool of two copies: key 1 went tier-only first, then key 2. Replica 1 needs key 1 (it
// has it in HBM), so a reclaim by replica 0 passes it over and frees key 2, which both held:
// replica 1 is told, replica 0 (the reclaimer) is not. Key 1, queued again when replica 1 lets
// it become tier-only, is the next to go.
TEST(TierPool, AReclaimAsksEveryHolderAndTellsTheOthers) {
  TierPool pool(2, 1024, host());
  FakeMember a, b;
  const uint32_t ra = pool.join(a), rb = pool.join(b);
  pool.store_copy(1, kv::Format::Bf16, 0, true, ra);
  pool.store_copy(2, kv::Format::Bf16, 0, true, ra);
  pool.written(1, 0.0);
  pool.written(2, 0.0);
  pool.hold(1, rb);
  pool.hold(2, rb);
  pool.queue_for_reclaim(1);
  pool.queue_for_reclaim(2);
  EXPECT_TRUE(pool.store().full());
  b.needed.insert(1);
  uint64_t key = 0;
  PoolCopy copy;
  ASSERT_TRUE(pool.reclaim(ra, &key, &copy));
  EXPECT_EQ(key, 2u);
  EXPECT_EQ(copy.slot, 1u);
  EXPECT_EQ(copy.holders, 0b11u);
  EXPECT_EQ(b.gone, (std::set<uint64_t>{2}));
  EXPECT_TRUE(a.gone.empty());
  EXPECT_EQ(pool.stats().reclaimed, 1u);
  EXPECT_EQ(pool.stats().reclaimed_held_elsewhere, 1u);
  // Key 1's entry was consumed while replica 1 needed it: nothing else can go now.
  EXPECT_FALSE(pool.reclaim(ra, &key, &copy));
  b.needed.clear();
  pool.queue_for_reclaim(1);
  ASSERT_TRUE(pool.reclaim(rb, &key, &copy));
  EXPECT_EQ(key, 1u);
  EXPECT_EQ(pool.store().used(), 0u);
}

// The pool's reclaim order sheds entries stale for good, as a private tier's does: eight shared
// copies, held by both replicas, each queued 512 times (4,096 entries, the
// order's floor; the last per key is current). Key 3's copy is then let go by both holders (its
// slot freed), so its entries are stale for good too. The next entry compacts the order to the
// seven live keys' current entries and the new one, oldest first; reclaims then take them in
// that order, each once, and never key 3.
TEST(TierPool, TheReclaimOrderDropsEntriesStaleForGoodAndKeepsTheOrderOfTheRest) {
  TierPool pool(16, 1024, host());
  FakeMember a, b;
  const uint32_t ra = pool.join(a), rb = pool.join(b);
  for (uint64_t k = 0; k < 9; ++k) {
    pool.store_copy(k, kv::Format::Bf16, 0, true, ra);
    pool.written(k, 0.0);
    pool.hold(k, rb);
  }
  for (uint64_t i = 0; i < 4096; ++i) pool.queue_for_reclaim(i % 8);
  EXPECT_EQ(pool.store().reclaim_order_size(), 4096u);
  EXPECT_FALSE(pool.release(3, ra));
  EXPECT_TRUE(pool.release(3, rb));  // the last holder: the slot is back
  pool.queue_for_reclaim(8);
  EXPECT_EQ(pool.store().reclaim_order_size(), 8u);  // keys 0-2 and 4-7, then 8
  const std::vector<uint64_t> want{0, 1, 2, 4, 5, 6, 7, 8};
  for (uint64_t k : want) {
    uint64_t key = 99;
    PoolCopy copy;
    ASSERT_TRUE(pool.reclaim(ra, &key, &copy));
    EXPECT_EQ(key, k);
    EXPECT_EQ(copy.holders, 0b11u);
  }
  uint64_t key = 0;
  PoolCopy copy;
  EXPECT_FALSE(pool.reclaim(ra, &key, &copy));
  EXPECT_EQ(pool.store().used(), 0u);
  EXPECT_EQ(pool.stats().reclaimed, 8u);
  EXPECT_EQ(b.gone.size(), 8u);  // the other holder is told of each
  EXPECT_EQ(b.gone.count(3), 0u);
}

// The shared device's SUSTAINABILITY (tlm/pool/pool_demand.h), 1 s windows. Replica 0's steps
// need 40 GB/s of tier reads in window 0 (20 GB over 0.5 s of compute) and 10 GB/s in window 1;
// replica 1's 30 GB/s and 20 GB/s. Summed: 70 and 30 GB/s. Against a 64 GB/s device window 0 is
// over (each replica alone is within it); against 80 GB/s none is. Carried: replica 0 decided
// 16 GB of promotions and 8 GB of demotions in window 1, replica 1 nothing: 24 GB/s at most.
TEST(PoolDemand, TheReplicasDemandIsSummedPerWindowAgainstTheDevice) {
  SustainabilityConstraint a(1.0), b(1.0);
  a.step(0.2, 0.5, 20e9);
  a.step(1.1, 1.0, 10e9);
  b.step(0.7, 1.0, 30e9);
  b.step(1.5, 0.5, 10e9);
  a.demand(DemandDirection::ToHbm, 1.3, 16e9);
  a.demand(DemandDirection::ToTier, 1.9, 8e9);
  const PoolDemand over = sum_pool_demand({&a, &b}, 64e9);
  EXPECT_EQ(over.windows, 2u);
  EXPECT_EQ(over.windows_over, 1u);
  EXPECT_DOUBLE_EQ(over.peak_demanded, 70e9);
  EXPECT_DOUBLE_EQ(over.peak_carried, 24e9);
  const PoolDemand within = sum_pool_demand({&a, &b}, 80e9);
  EXPECT_EQ(within.windows_over, 0u);
  // One replica alone is within the smaller device in every window.
  EXPECT_EQ(sum_pool_demand({&a}, 64e9).windows_over, 0u);
}
