// Replacement policies, the offline-optimal bound and the cache-curve replay, against hand-built
// reference strings and an exhaustive search over every eviction choice.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <limits>
#include <map>
#include <random>
#include <set>
#include <utility>
#include <vector>

#include "tlm/host/policy/admission.h"
#include "tlm/host/policy/cache_replay.h"
#include "tlm/host/policy/ema.h"
#include "tlm/host/policy/lfu.h"
#include "tlm/host/policy/lru.h"
#include "tlm/host/policy/priority.h"
#include "tlm/kv/distinct_keys.h"
#include "tlm/kv/offline_optimal.h"

using namespace kvtier;
using kv::BlockReference;
using kv::ReferenceKind;

namespace {

// One reference through a policy, as the control plane does it: store entry, on_reference, then
// the block is pinned and goes idle again.
void touch(ReplacementPolicy& p, kv::PolicyStore& store, uint64_t key, double t,
           uint32_t tenant = 0) {
  kv::BlockPolicy& s = store.touch(key);
  s.tenant = tenant;
  p.on_reference(key, t, s);
  p.on_pinned(key);
  p.on_idle(key, t);
}

void evict(ReplacementPolicy& p, kv::PolicyStore& store, uint64_t key) {
  p.on_removed(key);
  store.on_evict(key);
}

std::vector<ReplayReference> stream(const std::vector<uint64_t>& keys) {
  std::vector<ReplayReference> out;
  for (size_t i = 0; i < keys.size(); ++i)
    out.push_back({keys[i], static_cast<double>(i), 0, false});
  return out;
}

PolicyParams named(const std::string& name) {
  PolicyParams p;
  p.name = name;
  return p;
}

// ---- exhaustive search over every schedule of the bound's model (offline_optimal.h) ----

struct Exhaustive {
  uint64_t min_promotions = std::numeric_limits<uint64_t>::max();
  uint64_t min_demotions = std::numeric_limits<uint64_t>::max();
  uint64_t min_traffic = std::numeric_limits<uint64_t>::max();
  uint64_t max_hits = 0;
};

// Every schedule of the model, written from its statement rather than from the bound's code: a
// held block (from a reference that `holds` to its key's Release) is never a victim; a Release is
// not a reference.
void search(const std::vector<BlockReference>& refs, const std::vector<bool>& reads, size_t i,
            uint64_t capacity, std::vector<uint64_t> resident, std::set<uint64_t> held,
            std::set<uint64_t> tier, uint64_t promotions, uint64_t demotions, uint64_t hits,
            Exhaustive& best) {
  if (i == refs.size()) {
    best.min_promotions = std::min(best.min_promotions, promotions);
    best.min_demotions = std::min(best.min_demotions, demotions);
    best.min_traffic = std::min(best.min_traffic, promotions + demotions);
    best.max_hits = std::max(best.max_hits, hits);
    return;
  }
  const uint64_t key = refs[i].key;
  if (refs[i].kind == ReferenceKind::Release) {
    held.erase(key);
    return search(refs, reads, i + 1, capacity, resident, held, tier, promotions, demotions, hits,
                  best);
  }
  if (refs[i].holds) held.insert(key);
  if (std::find(resident.begin(), resident.end(), key) != resident.end())
    return search(refs, reads, i + 1, capacity, resident, held, tier, promotions, demotions,
                  hits + (reads[i] ? 1 : 0), best);
  const uint64_t promoted = promotions + (reads[i] ? 1 : 0);
  if (resident.size() < capacity) {
    resident.push_back(key);
    return search(refs, reads, i + 1, capacity, resident, held, tier, promoted, demotions, hits,
                  best);
  }
  for (size_t v = 0; v < resident.size(); ++v) {
    const uint64_t victim = resident[v];
    if (held.count(victim)) continue;
    // Demote iff the victim's next reference reads it and no tier copy exists.
    bool next_is_read = false;
    for (size_t j = i; j < refs.size(); ++j)
      if (refs[j].key == victim && refs[j].kind != ReferenceKind::Release) {
        next_is_read = reads[j];
        break;
      }
    auto next_resident = resident;
    next_resident[v] = key;
    auto next_tier = tier;
    uint64_t d = demotions;
    if (next_is_read && !tier.count(victim)) {
      ++d;
      next_tier.insert(victim);
    }
    search(refs, reads, i + 1, capacity, next_resident, held, next_tier, promoted, d, hits, best);
  }
}

Exhaustive exhaustive(const std::vector<BlockReference>& refs, uint64_t capacity) {
  std::vector<bool> reads(refs.size());
  std::set<uint64_t> seen;
  for (size_t i = 0; i < refs.size(); ++i) {
    if (refs[i].kind == ReferenceKind::Release) continue;
    reads[i] = seen.insert(refs[i].key).second ? false : refs[i].kind == ReferenceKind::Read;
  }
  Exhaustive best;
  search(refs, reads, 0, capacity, {}, {}, {}, 0, 0, 0, best);
  return best;
}

std::vector<BlockReference> random_string(std::mt19937_64& rng, size_t length, uint64_t keys,
                                          double produce_share) {
  std::uniform_int_distribution<uint64_t> key(1, keys);
  std::uniform_real_distribution<double> u(0, 1);
  std::vector<BlockReference> refs;
  for (size_t i = 0; i < length; ++i)
    refs.push_back({key(rng), u(rng) < produce_share ? ReferenceKind::Produce : ReferenceKind::Read,
                    u(rng) < 0.8});
  return refs;
}

// A string whose references sometimes hold their block (a run's pins), never more than
// capacity - 1 blocks at once so that a miss always finds a victim, and Releases of held blocks
// in between; everything held is released at the end.
std::vector<BlockReference> random_held_string(std::mt19937_64& rng, size_t length, uint64_t keys,
                                               double produce_share, uint64_t capacity) {
  std::uniform_int_distribution<uint64_t> key(1, keys);
  std::uniform_real_distribution<double> u(0, 1);
  std::vector<BlockReference> refs;
  std::vector<uint64_t> held;
  for (size_t i = 0; i < length; ++i) {
    if (!held.empty() && u(rng) < 0.3) {
      const size_t at = std::uniform_int_distribution<size_t>(0, held.size() - 1)(rng);
      refs.push_back({held[at], ReferenceKind::Release, false, false});
      held.erase(held.begin() + static_cast<std::ptrdiff_t>(at));
      continue;
    }
    const uint64_t k = key(rng);
    const bool is_held = std::find(held.begin(), held.end(), k) != held.end();
    const bool holds = !is_held && held.size() + 1 < capacity && u(rng) < 0.4;
    if (holds) held.push_back(k);
    refs.push_back({k, u(rng) < produce_share ? ReferenceKind::Produce : ReferenceKind::Read,
                    u(rng) < 0.8, holds});
  }
  for (uint64_t k : held) refs.push_back({k, ReferenceKind::Release, false, false});
  return refs;
}

// Promotions, demotions and hits of an online policy on the bound's model: it demotes every
// victim without a tier copy (it cannot know a block is dead).
struct OnlineCost {
  uint64_t promotions = 0, demotions = 0, hits = 0;
};

OnlineCost run_online(const std::vector<BlockReference>& refs, uint64_t capacity,
                      const PolicyParams& params, bool persistent) {
  kv::PolicyStore store(persistent);
  auto policy = make_replacement_policy(params, store);
  std::vector<uint64_t> resident;
  std::set<uint64_t> seen, tier;
  OnlineCost c;
  std::set<uint64_t> held;
  for (size_t i = 0; i < refs.size(); ++i) {
    const uint64_t key = refs[i].key;
    if (refs[i].kind == ReferenceKind::Release) {
      // The run's pin ends: the block may be evicted from now on.
      if (held.erase(key)) policy->on_idle(key, static_cast<double>(i));
      continue;
    }
    const bool read = !seen.insert(key).second && refs[i].kind == ReferenceKind::Read;
    kv::BlockPolicy& s = store.touch(key);
    policy->on_reference(key, static_cast<double>(i), s);
    if (std::find(resident.begin(), resident.end(), key) != resident.end()) {
      c.hits += read;
      policy->on_pinned(key);
    } else {
      if (read) ++c.promotions;
      if (resident.size() == capacity) {
        const uint64_t v = *policy->victim();
        policy->on_removed(v);
        store.on_evict(v);
        resident.erase(std::find(resident.begin(), resident.end(), v));
        if (!tier.count(v)) {
          ++c.demotions;
          tier.insert(v);
        }
      }
      resident.push_back(key);
    }
    if (refs[i].holds) held.insert(key);
    if (held.count(key)) policy->on_pinned(key);  // pinned by the run: never the victim
    else policy->on_idle(key, static_cast<double>(i));
  }
  return c;
}

// Every online policy, persistent or not, on `refs`: never fewer promotions, never less traffic,
// never more hits than the bound `opt`.
void expect_every_policy_at_or_above(const std::vector<BlockReference>& refs, uint64_t capacity,
                                     const kv::OfflineOptimalResult& opt, int n) {
  for (const std::string name : {"lru", "lfu", "ema", "priority", "admission"})
    for (bool persistent : {false, true}) {
      PolicyParams p = named(name);
      p.ema_alpha = 0.3;
      p.ema_clock = EmaClock::Reference;
      const OnlineCost c = run_online(refs, capacity, p, persistent);
      ASSERT_GE(c.promotions, opt.promotions) << name << " case " << n;
      ASSERT_GE(c.promotions + c.demotions, opt.traffic_lower_bound()) << name << " case " << n;
      ASSERT_LE(c.hits, opt.hits) << name << " case " << n;
    }
}

}  // namespace

// ---------------------------------------------------------------- policies, hand-built cases

TEST(LfuPolicy, EvictsTheLeastCountedThenTheOldest) {
  kv::PolicyStore store(false);
  LfuPolicy lfu(store);
  touch(lfu, store, 1, 0);
  touch(lfu, store, 2, 1);
  touch(lfu, store, 3, 2);
  touch(lfu, store, 1, 3);      // 1: two references, 2 and 3: one each
  EXPECT_EQ(lfu.victim(), 2u);  // tie between 2 and 3: 2 went idle first
  touch(lfu, store, 2, 4);
  EXPECT_EQ(lfu.victim(), 3u);
  lfu.on_pinned(3);             // pinned blocks are never offered
  EXPECT_EQ(lfu.victim(), 1u);  // 1 and 2 both at two references; 1 is older
  EXPECT_EQ(lfu.evictable(), 2u);
}

TEST(LfuPolicy, PersistentCountsChangeTheVictimAfterReadmission) {
  // Block 1 is referenced three times, evicted, and comes back; block 2 has two references.
  // Counting only while cached, the returning block 1 has one reference and is the victim; with
  // persistent state it has four, and block 2 goes instead.
  for (bool persistent : {false, true}) {
    kv::PolicyStore store(persistent);
    LfuPolicy lfu(store);
    touch(lfu, store, 1, 0);
    touch(lfu, store, 1, 1);
    touch(lfu, store, 1, 2);
    evict(lfu, store, 1);
    touch(lfu, store, 2, 3);
    touch(lfu, store, 2, 4);
    touch(lfu, store, 1, 5);  // re-admitted
    EXPECT_EQ(lfu.victim(), persistent ? 2u : 1u) << "persistent=" << persistent;
  }
}

TEST(LfuPolicy, PersistentStateChangesHitsInAReplay) {
  // Capacity 2: A A A B B B B C A D A. C evicts A (3 < 4). A returns: counted only while cached
  // it has one reference and D evicts it again, so the last A misses; with persistent state it
  // has four, ties with B, and D evicts B (idle longer), so the last A hits.
  const auto refs = stream({1, 1, 1, 2, 2, 2, 2, 3, 1, 4, 1});
  EXPECT_EQ(replay(refs, named("lfu"), false, 2).hits, 5u);
  EXPECT_EQ(replay(refs, named("lfu"), true, 2).hits, 6u);
  // LRU keeps no state: persistence changes nothing.
  EXPECT_EQ(replay(refs, named("lru"), false, 2).hits, replay(refs, named("lru"), true, 2).hits);
}

TEST(EmaPolicy, ScoreFollowsTheDefinition) {
  kv::PolicyStore store(false);
  EmaPolicy ema(store, 0.5, EmaPolicy::Clock::Reference);
  touch(ema, store, 1, 0);  // T=1: s1 = 0.5
  touch(ema, store, 2, 0);  // T=2: s2 = 0.5
  touch(ema, store, 1, 0);  // T=3: s1 = 0.5 + 0.25 * 0.5 = 0.625
  EXPECT_DOUBLE_EQ(store.find(1)->reuse_score, 0.625);
  EXPECT_DOUBLE_EQ(ema.score_at(*store.find(2), 3), 0.25);
  // Now s1 = 0.625 > s2 = 0.25: 2 goes first although it is not the least recent.
  EXPECT_EQ(ema.victim(), 2u);
  touch(ema, store, 2, 0);  // T=4: s2 = 0.5 + 0.5 * 0.25 = 0.625; s1 = 0.3125
  EXPECT_EQ(ema.victim(), 1u);
}

TEST(EmaPolicy, AlphaOneIsLruAndSecondsClockDecaysWithTime) {
  kv::PolicyStore store(false);
  EmaPolicy recency(store, 1.0, EmaPolicy::Clock::Reference);
  touch(recency, store, 1, 0);
  touch(recency, store, 1, 0);
  touch(recency, store, 2, 0);
  EXPECT_EQ(recency.victim(), 1u);  // frequency ignored at alpha = 1

  kv::PolicyStore timed_store(false);
  EmaPolicy timed(timed_store, 0.5, EmaPolicy::Clock::Second);
  touch(timed, timed_store, 1, 0.0);
  touch(timed, timed_store, 1, 0.0);  // same second: s1 = 0.5 + 0.5 = 1.0
  touch(timed, timed_store, 2, 2.0);  // s2 = 0.5; s1 now 1.0 * 0.25 = 0.25
  EXPECT_DOUBLE_EQ(timed_store.find(1)->reuse_score, 1.0);
  EXPECT_EQ(timed.victim(), 1u);
  touch(timed, timed_store, 1, 2.0);  // s1 = 0.5 + 0.25 = 0.75 > 0.5
  EXPECT_EQ(timed.victim(), 2u);
  EXPECT_THROW(EmaPolicy(store, 0.0), std::invalid_argument);
  EXPECT_THROW(EmaPolicy(store, 1.5), std::invalid_argument);
}

TEST(PriorityPolicy, LowestQosFirstThenLru) {
  kv::PolicyStore store(false);
  PriorityPolicy pri(store, {0, 2, 1});  // tenant 0: class 0, tenant 1: class 2, tenant 2: class 1
  touch(pri, store, 10, 0, 1);
  touch(pri, store, 20, 1, 2);
  touch(pri, store, 30, 2, 0);
  touch(pri, store, 31, 3, 0);
  EXPECT_EQ(pri.victim(), 30u);  // class 0, older of the two
  pri.on_removed(30);
  EXPECT_EQ(pri.victim(), 31u);
  pri.on_removed(31);
  EXPECT_EQ(pri.victim(), 20u);  // class 1 before class 2
  // A shared block keeps the highest class of its readers.
  touch(pri, store, 20, 4, 1);
  EXPECT_EQ(store.find(20)->qos, 2u);
  EXPECT_EQ(pri.victim(), 10u);  // both class 2: 10 went idle first
  // Tenants beyond the table are class 0; equal classes are LRU.
  kv::PolicyStore plain_store(false);
  PriorityPolicy plain(plain_store, {});
  touch(plain, plain_store, 1, 0, 7);
  touch(plain, plain_store, 2, 1, 7);
  touch(plain, plain_store, 1, 2, 7);
  EXPECT_EQ(plain.victim(), 2u);
}

TEST(AdmissionPolicy, MarginFollowsTheDefinition) {
  kv::PolicyStore store(false);
  AdmissionPolicy adm(store, 10.0, 20.0, {0, 1});
  touch(adm, store, 1, 0.0);  // seen once: no evidence of reuse, P = 0
  EXPECT_DOUBLE_EQ(adm.margin(*store.find(1)), -10.0);
  EXPECT_FALSE(adm.admitted(*store.find(1)));
  touch(adm, store, 1, 5.0);  // mean gap 5 s: E = 10/5 = 2, P = 1 - e^-2
  EXPECT_NEAR(adm.margin(*store.find(1)), 20.0 * (1 - std::exp(-2.0)) - 10.0, 1e-12);
  EXPECT_TRUE(adm.admitted(*store.find(1)));
  touch(adm, store, 1, 20.0);  // gaps 5 and 15: mean 10, E = 1
  EXPECT_NEAR(store.find(1)->reuse_score, 10.0, 1e-12);
  EXPECT_NEAR(adm.margin(*store.find(1)), 20.0 * (1 - std::exp(-1.0)) - 10.0, 1e-12);
  // Scheduler intent adds one expected reference; QoS class 1 doubles the value.
  kv::BlockPolicy intent;
  intent.continues = true;
  EXPECT_NEAR(adm.margin(intent), 20.0 * (1 - std::exp(-1.0)) - 10.0, 1e-12);
  intent.qos = 1;
  EXPECT_NEAR(adm.margin(intent), 40.0 * (1 - std::exp(-1.0)) - 10.0, 1e-12);
  // Eviction follows from admission: the one-off block 2 goes before the reused block 1.
  touch(adm, store, 2, 21.0);
  EXPECT_EQ(adm.victim(), 2u);
  EXPECT_THROW(AdmissionPolicy(store, 0.0, 1.0, {}), std::invalid_argument);
}

TEST(PolicyFactory, NamesParametersAndErrors) {
  kv::PolicyStore store(false);
  for (const auto& name : replacement_policy_names())
    EXPECT_EQ(make_replacement_policy(named(name), store)->name(), name);
  EXPECT_THROW(make_replacement_policy(named("random"), store), std::invalid_argument);
  EXPECT_EQ(parse_tenant_qos("0,3,255"), (std::vector<uint32_t>{0, 3, 255}));
  EXPECT_TRUE(parse_tenant_qos("").empty());
  EXPECT_THROW(parse_tenant_qos("1,256"), std::invalid_argument);
  EXPECT_THROW(parse_tenant_qos("1,,2"), std::invalid_argument);
  EXPECT_THROW(parse_tenant_qos("a"), std::invalid_argument);
  EXPECT_THROW(parse_tenant_qos("1,"), std::invalid_argument);
  HostConfig host;
  host.tenant_qos = "x";
  try {
    policy_params(host);
    ADD_FAILURE() << "no error";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("host.tenant_qos"), std::string::npos);
  }
}

// ---------------------------------------------------------------- the offline-optimal bound

TEST(OfflineOptimal, HandComputedMinWithDeadBlockDiscard) {
  // Capacity 2: a b c a b, all reads after the first. MIN at c evicts b (next use 4 > 3)...
  const std::vector<BlockReference> refs = {{1, ReferenceKind::Produce, true},
                                            {2, ReferenceKind::Produce, true},
                                            {3, ReferenceKind::Produce, true},
                                            {1, ReferenceKind::Read, true},
                                            {2, ReferenceKind::Read, true}};
  const auto r = kv::offline_optimal(refs, 2);
  EXPECT_EQ(r.promotions, 1u);        // only b comes back from the tier
  EXPECT_EQ(r.hits, 1u);              // a
  EXPECT_EQ(r.belady_demotions, 1u);  // b written out once; c is dead, dropped
  EXPECT_EQ(r.demotions_lower_bound, 1u);
  EXPECT_EQ(r.traffic_lower_bound(), 2u);
  EXPECT_EQ(r.blocks, 3u);
  // A block produced anew is not read from the tier: its old copy was dead.
  const std::vector<BlockReference> produced = {{1, ReferenceKind::Produce, true},
                                                {2, ReferenceKind::Produce, true},
                                                {1, ReferenceKind::Produce, true}};
  const auto p = kv::offline_optimal(produced, 1);
  EXPECT_EQ(p.promotions, 0u);
  EXPECT_EQ(p.traffic_lower_bound(), 0u);
  EXPECT_EQ(p.belady_demotions, 0u);
  EXPECT_THROW(kv::offline_optimal(refs, 0), std::invalid_argument);
}

TEST(OfflineOptimal, MinIsNotTrafficOptimalSoTheFloorIsALowerBound) {
  // Capacity 2 with x (tier copy exists) and y (none) resident, then z, x, y. MIN evicts y at z
  // (farther), paying a demotion and a promotion; evicting the clean x costs one promotion.
  const std::vector<BlockReference> refs = {
      {1, ReferenceKind::Produce, true}, {2, ReferenceKind::Produce, true},
      {3, ReferenceKind::Produce, true}, {1, ReferenceKind::Read, true},
      {2, ReferenceKind::Read, true},    {4, ReferenceKind::Produce, true},
      {5, ReferenceKind::Produce, true}, {1, ReferenceKind::Read, true},
      {2, ReferenceKind::Read, true}};
  const auto r = kv::offline_optimal(refs, 2);
  const Exhaustive e = exhaustive(refs, 2);
  EXPECT_EQ(r.promotions, e.min_promotions);
  EXPECT_LE(r.traffic_lower_bound(), e.min_traffic);
  EXPECT_GE(r.promotions + r.belady_demotions, e.min_traffic);
}

TEST(OfflineOptimal, EqualsExhaustiveSearchOnRandomStrings) {
  std::mt19937_64 rng(20240601);
  int tight = 0, cases = 0;
  for (int n = 0; n < 400; ++n) {
    const size_t length = 4 + n % 8;
    const uint64_t keys = 2 + n % 4;
    const uint64_t capacity = 1 + n % 3;
    const auto refs = random_string(rng, length, keys, n % 2 ? 0.2 : 0.0);
    const auto r = kv::offline_optimal(refs, capacity);
    const Exhaustive e = exhaustive(refs, capacity);
    ASSERT_EQ(r.promotions, e.min_promotions) << "case " << n;
    ASSERT_EQ(r.hits, e.max_hits) << "case " << n;
    ASSERT_LE(r.demotions_lower_bound, e.min_demotions) << "case " << n;
    ASSERT_LE(r.traffic_lower_bound(), e.min_traffic) << "case " << n;
    ASSERT_GE(r.promotions + r.belady_demotions, e.min_traffic)
        << "case " << n;  // MIN's own schedule
    tight += r.traffic_lower_bound() == e.min_traffic;
    ++cases;
  }
  // The floor is a bound, and on most small strings it is the optimum itself.
  EXPECT_GT(tight, cases * 3 / 4);
}

TEST(OfflineOptimal, EveryPolicyIsAtOrAboveTheBound) {
  std::mt19937_64 rng(7);
  for (int n = 0; n < 300; ++n) {
    const uint64_t capacity = 1 + n % 4;
    const auto refs = random_string(rng, 30, 6, n % 3 == 0 ? 0.15 : 0.0);
    const auto opt = kv::offline_optimal(refs, capacity);
    expect_every_policy_at_or_above(refs, capacity, opt, n);
  }
}

TEST(OfflineOptimal, HeldBlocksLeaveTheOthersLessRoomByHand) {
  // Capacity 2. Block 1 is produced and held until entry 4; 2 and 3 are produced and read later.
  //   0 P1 (holds)  1 P2  2 P3  3 R2  4 Release 1  5 P4  6 R3
  // Unheld: at P3, 1 is dead and goes for free; at P4, 2 is dead; R2 and R3 hit: nothing moves.
  // Held: at P3 only 2 can go (read at 3, no copy: a demotion), R2 comes back (a promotion)
  // and pushes out 3 (read at 6: a demotion), and R3 comes back: 2 promotions, 2 demotions.
  std::vector<BlockReference> refs = {
      {1, ReferenceKind::Produce, true, true},   {2, ReferenceKind::Produce, true, false},
      {3, ReferenceKind::Produce, true, false},  {2, ReferenceKind::Read, true, false},
      {1, ReferenceKind::Release, false, false}, {4, ReferenceKind::Produce, true, false},
      {3, ReferenceKind::Read, true, false}};
  const auto held = kv::offline_optimal(refs, 2);
  EXPECT_EQ(held.references, 6u);
  EXPECT_EQ(held.holds, 1u);
  EXPECT_EQ(held.releases, 1u);
  EXPECT_EQ(held.counted_references, 6u);
  EXPECT_EQ(held.blocks, 4u);
  EXPECT_EQ(held.promotions, 2u);
  EXPECT_EQ(held.hits, 0u);
  EXPECT_EQ(held.belady_demotions, 2u);
  // The floor: 2's interval [1, 3] fits beside held 1; 3's [2, 6] does not (1 is held with dead
  // content from entry 1 to its Release): one key needs a demotion. Without the hold both fit.
  EXPECT_EQ(held.demotions_lower_bound, 1u);
  EXPECT_EQ(held.capacity_overruns, 0u);
  const Exhaustive e = exhaustive(refs, 2);
  EXPECT_EQ(e.min_promotions, 2u);
  EXPECT_EQ(e.min_demotions, 2u);
  for (BlockReference& r : refs) r.holds = false;
  const auto free = kv::offline_optimal(refs, 2);
  EXPECT_EQ(free.promotions, 0u);
  EXPECT_EQ(free.hits, 2u);
  EXPECT_EQ(free.demotions_lower_bound, 0u);
  // A log whose holds fill the capacity (no run records one) keeps them and says so.
  const std::vector<BlockReference> over = {{1, ReferenceKind::Produce, true, true},
                                            {2, ReferenceKind::Produce, true, true},
                                            {3, ReferenceKind::Produce, true, false}};
  EXPECT_EQ(kv::offline_optimal(over, 2).capacity_overruns, 1u);
}

TEST(OfflineOptimal, ManyHoldsEndingAtOnePointFreeTheirRoomTogether) {
  // Capacity 301. Key 1 is produced and read at the very end (a live interval over everything).
  // 300 keys are produced, held with content never read, and all released at one point (a
  // request letting go of its KV); then 200 more keys are produced and read at the end. While
  // held, the 300 take 300 slots beside key 1's interval: 301, which fits. After the release they
  // take none, and 1 + 200 intervals fit too: no key needs a demotion, and nothing is promoted.
  std::vector<BlockReference> refs = {{1, ReferenceKind::Produce, true, false}};
  for (uint64_t k = 100; k < 400; ++k) refs.push_back({k, ReferenceKind::Produce, true, true});
  for (uint64_t k = 100; k < 400; ++k) refs.push_back({k, ReferenceKind::Release, false, false});
  for (uint64_t k = 1000; k < 1200; ++k) refs.push_back({k, ReferenceKind::Produce, true, false});
  for (uint64_t k = 1000; k < 1200; ++k) refs.push_back({k, ReferenceKind::Read, true, false});
  refs.push_back({1, ReferenceKind::Read, true, false});
  const auto r = kv::offline_optimal(refs, 301);
  EXPECT_EQ(r.holds, 300u);
  EXPECT_EQ(r.releases, 300u);
  EXPECT_EQ(r.references, 1u + 300u + 400u + 1u);
  EXPECT_EQ(r.promotions, 0u);
  EXPECT_EQ(r.demotions_lower_bound, 0u);
  EXPECT_EQ(r.capacity_overruns, 0u);
  // One slot less: while the 300 are held, key 1's interval no longer fits beside them.
  EXPECT_EQ(kv::offline_optimal(refs, 300).demotions_lower_bound, 1u);
}

TEST(OfflineOptimal, WithHeldBlocksEqualsExhaustiveSearchOnRandomStrings) {
  std::mt19937_64 rng(20261206);
  int tight = 0, cases = 0, holding = 0;
  for (int n = 0; n < 400; ++n) {
    const uint64_t capacity = 2 + n % 3;
    const size_t length = 4 + n % 7;
    const uint64_t keys = 2 + n % 4;
    const auto refs = random_held_string(rng, length, keys, n % 2 ? 0.2 : 0.0, capacity);
    const auto r = kv::offline_optimal(refs, capacity);
    const Exhaustive e = exhaustive(refs, capacity);
    ASSERT_EQ(r.capacity_overruns, 0u) << "case " << n;
    ASSERT_EQ(r.promotions, e.min_promotions) << "case " << n;
    ASSERT_EQ(r.hits, e.max_hits) << "case " << n;
    ASSERT_LE(r.demotions_lower_bound, e.min_demotions) << "case " << n;
    ASSERT_LE(r.traffic_lower_bound(), e.min_traffic) << "case " << n;
    ASSERT_GE(r.promotions + r.belady_demotions, e.min_traffic) << "case " << n;
    tight += r.traffic_lower_bound() == e.min_traffic;
    holding += r.holds > 0;
    ++cases;
  }
  EXPECT_GT(holding, cases / 2);  // the strings do hold blocks
  EXPECT_GT(tight, cases * 3 / 4);
}

TEST(OfflineOptimal, WithHeldBlocksEveryPolicyIsAtOrAboveTheBound) {
  // The online policies never evict a held block either (pinned for the policy as for the run).
  std::mt19937_64 rng(8);
  for (int n = 0; n < 300; ++n) {
    const uint64_t capacity = 2 + n % 4;
    const auto refs = random_held_string(rng, 40, 7, n % 3 == 0 ? 0.15 : 0.0, capacity);
    const auto opt = kv::offline_optimal(refs, capacity);
    ASSERT_EQ(opt.capacity_overruns, 0u);
    expect_every_policy_at_or_above(refs, capacity, opt, n);
  }
}

// The bound buckets a key's references by 32 bits of the key (kv::bound_group_hash); keys that
// share those bits must still be told apart. 48 keys that share them make up random strings; the
// bound splits its work into eight shares by a mix of the whole key, so at least six of them meet
// in one share, interleaved. The bound must equal the bound of the same strings with every key
// renamed to a small distinct one, which no two share.
TEST(OfflineOptimal, KeysWhoseGroupHashesCollideAreToldApart) {
  constexpr uint64_t kKeys = 48;
  std::vector<uint64_t> colliding;
  for (uint64_t high = 1; high <= kKeys; ++high) colliding.push_back(high << 32 | 0x5eedu);
  for (uint64_t k : colliding) ASSERT_EQ(kv::bound_group_hash(k), 0x5eedu) << k;
  std::mt19937_64 rng(29);
  for (int n = 0; n < 100; ++n) {
    const uint64_t capacity = 1 + n % 8;
    std::vector<BlockReference> refs = random_string(rng, 200 + n % 50, kKeys, n % 2 ? 0.2 : 0.0);
    std::vector<BlockReference> renamed = refs;
    for (BlockReference& r : refs) r.key = colliding[r.key - 1];
    for (BlockReference& r : renamed) r.key += 1000;
    const auto a = kv::offline_optimal(refs, capacity);
    const auto b = kv::offline_optimal(renamed, capacity);
    ASSERT_EQ(a.blocks, b.blocks) << "case " << n;
    ASSERT_EQ(a.promotions, b.promotions) << "case " << n;
    ASSERT_EQ(a.hits, b.hits) << "case " << n;
    ASSERT_EQ(a.belady_demotions, b.belady_demotions) << "case " << n;
    ASSERT_EQ(a.demotions_lower_bound, b.demotions_lower_bound) << "case " << n;
  }
}

// Many keys in one of the grouping's buckets: 600,000 keys that share their low 32 bits (so one
// bucket of each share holds about 75,000 of them, past the 32,768 keys its table starts with,
// which must grow twice and keep every key it moved). The string produces keys 1..N, then reads
// them back in reverse. By hand, with capacity C: MIN evicts the resident key read last, the
// lowest, so the produces end with keys N-C+1..N resident; the first C reads hit and the other
// N-C each promote. The same string with small distinct keys gives the same bound.
TEST(OfflineOptimal, ABucketOfManyKeysGrowsItsTableAndKeepsEveryKey) {
  constexpr uint64_t kN = 600000, kCapacity = 5;
  std::vector<BlockReference> refs, renamed;
  const auto push = [&](uint64_t k, ReferenceKind kind) {
    refs.push_back({k << 32 | 0xbeefu, kind, true});
    renamed.push_back({k, kind, true});
  };
  for (uint64_t k = 1; k <= kN; ++k) push(k, ReferenceKind::Produce);
  for (uint64_t k = kN; k >= 1; --k) push(k, ReferenceKind::Read);
  ASSERT_EQ(kv::bound_group_hash(refs.front().key), kv::bound_group_hash(refs.back().key));
  const auto a = kv::offline_optimal(refs, kCapacity);
  EXPECT_EQ(a.blocks, kN);
  EXPECT_EQ(a.hits, kCapacity);
  EXPECT_EQ(a.promotions, kN - kCapacity);
  const auto b = kv::offline_optimal(renamed, kCapacity);
  EXPECT_EQ(a.blocks, b.blocks);
  EXPECT_EQ(a.hits, b.hits);
  EXPECT_EQ(a.promotions, b.promotions);
  EXPECT_EQ(a.belady_demotions, b.belady_demotions);
  EXPECT_EQ(a.demotions_lower_bound, b.demotions_lower_bound);
}

// MIN by its definition, one reference at a time, for strings too long for the exhaustive search:
// on a miss with every slot taken, drop the resident block whose content is read farthest ahead
// (content never read again first). Hits and promotions do not depend on which of equally far
// blocks goes. A key's first reference produces its content; a later Produce replaces it.
struct PlainMin {
  uint64_t hits = 0, promotions = 0;
};
PlainMin plain_min(const std::vector<BlockReference>& refs, uint64_t capacity) {
  const size_t n = refs.size();
  // The next reference of the same key, if that is a Read: the resident content's next use.
  std::vector<size_t> next_read(n, SIZE_MAX);
  std::map<uint64_t, size_t> later;
  for (size_t i = n; i-- > 0;) {
    const auto it = later.find(refs[i].key);
    if (it != later.end() && refs[it->second].kind == ReferenceKind::Read)
      next_read[i] = it->second;
    later[refs[i].key] = i;
  }
  PlainMin out;
  std::map<uint64_t, size_t> resident;  // key -> the next read of its content
  std::set<uint64_t> seen;
  for (size_t i = 0; i < n; ++i) {
    const uint64_t k = refs[i].key;
    const bool read = refs[i].kind == ReferenceKind::Read && seen.count(k);
    seen.insert(k);
    if (resident.count(k)) {
      out.hits += read;
    } else {
      out.promotions += read;
      if (resident.size() >= capacity) {
        auto victim = resident.begin();
        for (auto it = resident.begin(); it != resident.end(); ++it)
          if (it->second > victim->second) victim = it;
        resident.erase(victim);
      }
    }
    resident[k] = next_read[i];
  }
  return out;
}

// Strings of 64-bit keys long enough that the grouping sorts their references into shares 64
// bytes at a time and then one by one for the tail (every length from 1 to 330), against MIN as
// defined above.
TEST(OfflineOptimal, EqualsPlainMinOnStringsCrossingTheGroupingsBlocks) {
  std::mt19937_64 rng(20261207);
  for (size_t length = 1; length <= 330; ++length) {
    const uint64_t keys = 3 + length % 40, capacity = 1 + length % 9;
    std::vector<BlockReference> refs = random_string(rng, length, keys, length % 3 ? 0.2 : 0.0);
    std::vector<uint64_t> spread(keys + 1);
    for (uint64_t& k : spread) k = rng();
    for (BlockReference& r : refs) r.key = spread[r.key];
    const auto bound = kv::offline_optimal(refs, capacity);
    const PlainMin expected = plain_min(refs, capacity);
    ASSERT_EQ(bound.hits, expected.hits) << "length " << length;
    ASSERT_EQ(bound.promotions, expected.promotions) << "length " << length;
    ASSERT_EQ(bound.references, length);
  }
}

TEST(OfflineOptimal, LargeStringRunsInLinearithmicTime) {
  std::mt19937_64 rng(3);
  std::vector<BlockReference> refs;
  std::uniform_int_distribution<uint64_t> key(0, 200000);
  for (int i = 0; i < 1000000; ++i) refs.push_back({key(rng), ReferenceKind::Read, true});
  const auto r = kv::offline_optimal(refs, 1000);
  EXPECT_GT(r.hits, 0u);
  EXPECT_EQ(r.references, 1000000u);
}

// The run's reference log (9 bytes a reference, in fixed chunks) gives back every reference as
// pushed, across chunk boundaries, and the bound reads it as it reads the plain vector.
TEST(OfflineOptimal, ReferenceLogKeepsEveryReferenceAndGivesTheSameBound) {
  std::mt19937_64 rng(11);
  // One entry takes a whole key chunk (8 bytes an entry) and a whole flag chunk (one byte).
  const size_t chunk = kv::ReferenceLog::kKeyChunk;
  {
    kv::ReferenceLog one;
    one.push_back(1, ReferenceKind::Read, true);
    ASSERT_EQ(one.bytes(), chunk * 8 + kv::ReferenceLog::kFlagChunk);
    ASSERT_GE(chunk, 1024u);
    ASSERT_GT(kv::ReferenceLog::kFlagChunk, 3 * chunk + 17);  // the flags below: one chunk
  }
  const std::vector<BlockReference> refs = random_string(rng, 3 * chunk + 17, 40000, 0.3);
  kv::ReferenceLog log;
  for (const BlockReference& r : refs) log.push_back(r.key, r.kind, r.counted);
  ASSERT_EQ(log.size(), refs.size());
  for (size_t i : {size_t{0}, chunk - 1, chunk, 2 * chunk - 1, 2 * chunk, refs.size() - 1}) {
    EXPECT_EQ(log.key(i), refs[i].key) << i;
    EXPECT_EQ(log.kind(i), refs[i].kind) << i;
    EXPECT_EQ(log.counted(i), refs[i].counted) << i;
  }
  size_t differing = 0;
  for (size_t i = 0; i < refs.size(); ++i) {
    const BlockReference r = log[i];
    differing += r.key != refs[i].key || r.kind != refs[i].kind || r.counted != refs[i].counted;
  }
  EXPECT_EQ(differing, 0u);
  // Four key chunks, the last partly filled, and one flag chunk.
  EXPECT_EQ(log.bytes(), 4 * chunk * 8 + kv::ReferenceLog::kFlagChunk);
  // The bound read from the log, against counts made here without it (the vector overload
  // reads a log too, so comparing the two would prove nothing): every reference, the counted
  // ones, the distinct keys; each effective read (a Read of a key referenced before) either hits
  // or is promoted; more room never hits less; with room for every key nothing is promoted.
  std::set<uint64_t> keys;
  uint64_t counted = 0, effective_reads = 0;
  for (const BlockReference& r : refs) {
    counted += r.counted;
    effective_reads += r.kind == ReferenceKind::Read && keys.count(r.key);
    keys.insert(r.key);
  }
  uint64_t hits_before = 0;
  for (uint64_t capacity : {1u, 100u, 5000u, 40000u}) {
    const auto a = kv::offline_optimal(log, capacity);
    EXPECT_EQ(a.references, refs.size());
    EXPECT_EQ(a.counted_references, counted);
    EXPECT_EQ(a.blocks, keys.size());
    EXPECT_EQ(a.hits + a.promotions, effective_reads) << capacity;
    EXPECT_LE(a.counted_hits, a.hits);
    EXPECT_GE(a.hits, hits_before) << capacity;
    hits_before = a.hits;
    if (capacity >= keys.size()) {
      EXPECT_EQ(a.promotions, 0u);
      EXPECT_EQ(a.belady_demotions, 0u);
    }
  }
}

// The flags keep their own chunks (4 Mi entries, not the keys' 512 Ki): every entry's kind,
// counted and holding read back as pushed on both sides of a flag chunk's boundary.
TEST(OfflineOptimal, ReferenceLogFlagsCrossTheirChunks) {
  const size_t n = kv::ReferenceLog::kFlagChunk + 5;
  kv::ReferenceLog log;
  const auto kind_of = [](size_t i) {
    return i % 3 == 0 ? ReferenceKind::Produce : ReferenceKind::Read;
  };
  for (size_t i = 0; i < n; ++i) log.push_back(i * 7919, kind_of(i), i % 5 != 0, i % 2 == 0);
  size_t differing = 0;
  for (size_t i = 0; i < n; ++i)
    differing += log.key(i) != i * 7919 || log.kind(i) != kind_of(i) ||
                 log.counted(i) != (i % 5 != 0) || log.holds(i) != (i % 2 == 0);
  EXPECT_EQ(differing, 0u);
  EXPECT_EQ(log.hold_count(), (n + 1) / 2);
}

// The releases are kept as a stream of differences (a hold's start from the last release's, its
// end from the last end): read back in order they are exactly the (start, end) pairs the run
// ended, with starts before and after the last one, jumps of any size, several releases at one
// end, and the stream crossing its chunks (about three bytes a release here, where the starts are
// drawn at random over the whole log).
TEST(OfflineOptimal, ReferenceLogReleasesReadBackInOrder) {
  std::mt19937_64 rng(17);
  kv::ReferenceLog log;
  std::vector<uint32_t> open;
  std::vector<std::pair<uint32_t, uint32_t>> ended;  // (start, end)
  for (uint32_t i = 0; i < 3000000; ++i) {
    open.push_back(log.push_back(rng(), ReferenceKind::Read, true, true));
    // Now and then, several holds end at this point, drawn from anywhere among the open ones.
    for (uint32_t k = rng() % 4 == 0 ? rng() % 3 + 1 : 0; k > 0 && !open.empty(); --k) {
      const size_t at = rng() % open.size();
      const uint32_t hold = open[at];
      open[at] = open.back();
      open.pop_back();
      log.end_hold(hold);
      ended.push_back({hold, static_cast<uint32_t>(log.size())});
    }
  }
  ASSERT_EQ(log.release_count(), ended.size());
  ASSERT_GT(log.release_stream_bytes(), kv::ReferenceLog::kReleaseChunk);  // crosses a chunk
  size_t r = 0, differing = 0;
  for (kv::ReferenceLog::ReleaseReader it(log); !it.done(); it.next(), ++r)
    differing += r >= ended.size() || it.start() != ended[r].first || it.end() != ended[r].second;
  EXPECT_EQ(r, ended.size());
  EXPECT_EQ(differing, 0u);
  // A run's releases come in bulk from nearby holds: one or two bytes each.
  kv::ReferenceLog bulk;
  for (uint32_t i = 0; i < 10000; ++i) bulk.push_back(i, ReferenceKind::Read, true, true);
  for (uint32_t i = 0; i < 10000; ++i) bulk.end_hold(i);
  EXPECT_LE(bulk.release_stream_bytes(), 10000u + 8);
}

// U without the reference string: distinct keys counted exactly across chunk boundaries, with
// repeats within and across chunks, against a count made with a set; counting in between and
// pushing on gives the same answers as counting once.
TEST(DistinctKeys, CountsEachKeyOnceAcrossChunks) {
  kv::DistinctKeys keys;
  EXPECT_EQ(keys.count(), 0u);
  std::mt19937_64 rng(5);
  std::uniform_int_distribution<uint64_t> key(0, 1500000);
  std::set<uint64_t> seen;
  for (int i = 0; i < 2500000; ++i) {
    const uint64_t k = i % 3 == 0 ? std::numeric_limits<uint64_t>::max() - key(rng) : key(rng);
    keys.push(k);
    seen.insert(k);
    if (i == 1000 || i == (1 << 20) || i == 1800000) {
      EXPECT_EQ(keys.count(), seen.size()) << i;
    }
  }
  EXPECT_EQ(keys.pushed(), 2500000u);
  EXPECT_EQ(keys.count(), seen.size());
  EXPECT_LT(seen.size(), 2500000u);  // there were repeats to fold
}

// ---------------------------------------------------------------- cache-curve replay

TEST(CacheReplay, SemanticsOnHandBuiltStrings) {
  // LRU, capacity 2: a b a c b -> hit a; c evicts b (LRU); b misses.
  const auto refs = stream({1, 2, 1, 3, 2});
  EXPECT_EQ(replay(refs, named("lru"), false, 2).hits, 1u);
  // Belady, capacity 2: at c, evict a (never used again), keep b: two hits.
  EXPECT_EQ(replay(refs, named("belady"), false, 2).hits, 2u);
  // LFU: a twice, b once at c: b is evicted, then b misses.
  EXPECT_EQ(replay(refs, named("lfu"), false, 2).hits, 1u);
  EXPECT_EQ(replay_infinite(refs).hits, 2u);
  // Capacity one: only immediate repeats hit.
  EXPECT_EQ(replay(stream({1, 1, 2, 1, 1}), named("lru"), false, 1).hits, 2u);
  EXPECT_THROW(replay(refs, named("lru"), false, 0), std::invalid_argument);
  EXPECT_THROW(replay(refs, named("nope"), false, 2), std::invalid_argument);
}

TEST(CacheReplay, BeladyReachesTheReuseFractionOnceLiveBlocksFitAndBoundsEveryPolicy) {
  std::mt19937_64 rng(11);
  std::vector<uint64_t> keys;
  std::geometric_distribution<uint64_t> g(0.01);
  for (int i = 0; i < 20000; ++i) keys.push_back(g(rng));
  const auto refs = stream(keys);
  const ReplayResult infinite = replay_infinite(refs);
  EXPECT_EQ(replay(refs, named("belady"), false, 100000).hits, infinite.hits);
  for (uint64_t size : {4u, 16u, 64u, 256u}) {
    const uint64_t best = replay(refs, named("belady"), false, size).hits;
    for (const auto& name : replacement_policy_names())
      for (bool persistent : {false, true})
        EXPECT_LE(replay(refs, named(name), persistent, size).hits, best) << name;
  }
}

TEST(CacheReplay, DeterministicAcrossRuns) {
  std::mt19937_64 rng(5);
  std::vector<uint64_t> keys;
  for (int i = 0; i < 5000; ++i) keys.push_back(rng() % 700);
  const auto refs = stream(keys);
  for (const auto& name : replacement_policy_names())
    EXPECT_EQ(replay(refs, named(name), true, 50).hits, replay(refs, named(name), true, 50).hits);
}

// The held forms of the hooks (policy.h) against the key forms: the same random history of
// idle, pin and removal on two LRU instances, one driven by key and one by slot, names the same
// victims in the same order, and the held victim's owner is the record its block was given.
TEST(LruHeld, SameVictimsAsTheKeyedForms) {
  LruPolicy keyed, held;
  ASSERT_TRUE(held.keeps_slots());
  constexpr uint32_t kBlocks = 64;
  std::vector<uint32_t> slot(kBlocks, ReplacementPolicy::kNoSlot);
  std::vector<bool> resident(kBlocks, false), pinned(kBlocks, false);
  std::mt19937_64 rng(5);
  uint64_t evictions = 0;
  for (int step = 0; step < 20000; ++step) {
    const uint32_t b = static_cast<uint32_t>(rng() % kBlocks);
    const uint64_t key = 1000 + b;  // record b holds key 1000 + b
    switch (rng() % 4) {
      case 0:  // referenced: pinned, then idle again later
        keyed.on_pinned(key), held.pinned_held(key, slot[b]);
        pinned[b] = resident[b];
        break;
      case 1:
      case 2:
        if (!resident[b] || pinned[b]) {
          resident[b] = true, pinned[b] = false;
          keyed.on_idle(key, step), held.idle_held(key, b, slot[b], step);
        }
        break;
      default: {  // make room: the victims must agree
        const auto k = keyed.victim();
        const auto owner = held.victim_owner();
        ASSERT_EQ(k.has_value(), owner.has_value());
        if (!k) break;
        ASSERT_EQ(*k, 1000 + *owner);
        keyed.on_removed(*k), held.removed_held(*k, slot[*owner]);
        EXPECT_EQ(slot[*owner], ReplacementPolicy::kNoSlot);
        resident[*owner] = pinned[*owner] = false;
        ++evictions;
      }
    }
    ASSERT_EQ(keyed.evictable(), held.evictable());
  }
  EXPECT_GT(evictions, 1000u);  // the comparison saw many victims
}

TEST(LruHeld, ASlotThatNamesAnotherBlockIsRefused) {
  LruPolicy lru;
  uint32_t a = ReplacementPolicy::kNoSlot, b = ReplacementPolicy::kNoSlot;
  lru.idle_held(1, 0, a, 0.0);
  lru.idle_held(2, 1, b, 0.0);
  EXPECT_THROW(lru.pinned_held(2, a), std::logic_error);  // block 2 with block 1's slot
  EXPECT_THROW(lru.removed_held(1, b), std::logic_error);
}

TEST(PolicyHeld, APolicyWithoutSlotsIsDrivenByKey) {
  // LFU keeps no slots: the held hooks reach its key forms and leave the slot alone.
  kv::PolicyStore store(false);
  auto lfu = make_replacement_policy(named("lfu"), store);
  ASSERT_FALSE(lfu->keeps_slots());
  uint32_t slot = ReplacementPolicy::kNoSlot;
  lfu->on_reference(7, 0.0, store.touch(7));
  lfu->idle_held(7, 3, slot, 0.0);
  EXPECT_EQ(slot, ReplacementPolicy::kNoSlot);
  EXPECT_EQ(lfu->evictable(), 1u);
  EXPECT_EQ(lfu->victim(), std::optional<uint64_t>(7));
  EXPECT_FALSE(lfu->victim_owner().has_value());
  lfu->removed_held(7, slot);
  EXPECT_EQ(lfu->evictable(), 0u);
}
