// The host's flat block maps (tlm/common/key_map.h) against std::unordered_map on long random
// sequences of insertions, look-ups and erasures, with keys that collide in the table, the key
// the table reserves for free slots, and the growth of the table while entries are erased.
#include <gtest/gtest.h>

#include <map>
#include <random>
#include <stdexcept>
#include <string>
#include <unordered_map>
#include <vector>

#include "tlm/common/key_map.h"

using kvtier::KeyMap;
using kvtier::StableKeyMap;

namespace {

// Keys from a small pool, so that insertions hit existing keys and erasures find them; the pool
// holds the all-ones key (the free-slot marker) and zero.
uint64_t pick_key(std::mt19937_64& rng, uint64_t pool) {
  const uint64_t k = rng() % pool;
  if (k == 0) return ~uint64_t{0};
  if (k == 1) return 0;
  return k * 0x9e3779b97f4a7c15ULL;  // spread, but many share low bits after the table's mask
}

}  // namespace

TEST(KeyMap, AgreesWithUnorderedMapOnRandomOperations) {
  std::mt19937_64 rng(7);
  for (uint64_t pool : {8u, 300u, 5000u}) {
    KeyMap<uint64_t> map;
    std::unordered_map<uint64_t, uint64_t> ref;
    for (int step = 0; step < 200000; ++step) {
      const uint64_t key = pick_key(rng, pool);
      switch (rng() % 4) {
        case 0:
        case 1: {
          auto [v, inserted] = map.try_emplace(key);
          auto [it, ref_inserted] = ref.try_emplace(key, 0);
          ASSERT_EQ(inserted, ref_inserted) << "key " << key;
          ASSERT_EQ(*v, it->second);
          *v = it->second = static_cast<uint64_t>(step);
          break;
        }
        case 2:
          ASSERT_EQ(map.erase(key), ref.erase(key) == 1) << "key " << key;
          break;
        default: {
          const uint64_t* v = map.find(key);
          auto it = ref.find(key);
          ASSERT_EQ(v != nullptr, it != ref.end()) << "key " << key;
          if (v) {
            ASSERT_EQ(*v, it->second);
          }
        }
      }
      ASSERT_EQ(map.size(), ref.size());
    }
    // for_each visits exactly the entries, each once.
    std::map<uint64_t, uint64_t> seen;
    map.for_each(
        [&](uint64_t k, uint64_t v) { ASSERT_TRUE(seen.emplace(k, v).second) << "key " << k; });
    ASSERT_EQ(seen.size(), ref.size());
    for (const auto& [k, v] : ref) EXPECT_EQ(seen.at(k), v);
  }
}

TEST(KeyMap, ErasedEntriesLeaveNoTraceAndValuesStartValueInitialised) {
  KeyMap<int> map;
  map.reserve(1000);
  for (uint64_t k = 0; k < 1000; ++k) map[k] = static_cast<int>(k) + 1;
  for (uint64_t k = 0; k < 1000; k += 2) EXPECT_TRUE(map.erase(k));
  EXPECT_FALSE(map.erase(0));
  EXPECT_EQ(map.size(), 500u);
  for (uint64_t k = 0; k < 1000; ++k) {
    const int* v = map.find(k);
    if (k % 2) {
      ASSERT_NE(v, nullptr) << k;
      EXPECT_EQ(*v, static_cast<int>(k) + 1);
    } else {
      EXPECT_EQ(v, nullptr) << k;
    }
  }
  EXPECT_EQ(*map.try_emplace(4).first, 0);  // a re-inserted key starts afresh
  map.clear();
  EXPECT_TRUE(map.empty());
  EXPECT_EQ(map.find(5), nullptr);
}

TEST(StableKeyMap, ValuesStayPutWhileOthersComeAndGo) {
  StableKeyMap<uint64_t> map;
  std::unordered_map<uint64_t, uint64_t*> where;
  std::mt19937_64 rng(11);
  for (int step = 0; step < 100000; ++step) {
    const uint64_t key = pick_key(rng, 20000);
    if (rng() % 3) {
      auto [v, inserted] = map.try_emplace(key);
      if (inserted) {
        ASSERT_EQ(*v, 0u);
        *v = key ^ 0x5555;
        where[key] = v;
      } else {
        ASSERT_EQ(v, where.at(key)) << "key " << key << " moved";
      }
    } else {
      ASSERT_EQ(map.erase(key), where.erase(key) == 1);
    }
  }
  ASSERT_EQ(map.size(), where.size());
  // Every surviving value is where it was put and holds what was written there.
  for (const auto& [key, v] : where) {
    ASSERT_EQ(&map.at(key), v);
    EXPECT_EQ(*v, key ^ 0x5555);
  }
  size_t visited = 0;
  map.for_each([&](uint64_t k, uint64_t v) {
    ++visited;
    EXPECT_EQ(v, k ^ 0x5555);
  });
  EXPECT_EQ(visited, where.size());
}

TEST(StableKeyMap, AtNamesAMissingKey) {
  StableKeyMap<int> map;
  map.try_emplace(3);
  EXPECT_NO_THROW(map.at(3));
  try {
    map.at(42);
    FAIL() << "at() of a missing key did not throw";
  } catch (const std::out_of_range& e) {
    EXPECT_NE(std::string(e.what()).find("42"), std::string::npos) << e.what();
  }
}

TEST(StableKeyMap, RecordsReachValuesUntilTheirKeyIsErased) {
  StableKeyMap<int> m;
  uint32_t ra = 0, rb = 0, again = 0;
  *m.try_emplace(10, ra).first = 1;
  *m.try_emplace(20, rb).first = 2;
  EXPECT_NE(ra, rb);
  EXPECT_FALSE(m.try_emplace(10, again).second);
  EXPECT_EQ(again, ra);  // an existing key reports its record
  EXPECT_EQ(m.by_record(ra), 1);
  EXPECT_EQ(&m.by_record(rb), m.find(20));
  m.erase(10);
  EXPECT_EQ(m.find_record(ra), nullptr);  // freed: no value there
  EXPECT_THROW(m.by_record(ra), std::out_of_range);
  EXPECT_THROW(m.by_record(1000), std::out_of_range);
  uint32_t rc = 0;
  *m.try_emplace(30, rc).first = 3;
  EXPECT_EQ(rc, ra);  // the freed record is reused, now for key 30
  EXPECT_EQ(m.by_record(rc), 3);
}

// A table past the huge-page threshold (HugePageAllocator: 4 MiB and more, on 2 MiB boundaries)
// holds, finds and erases as a small one does, and cache hints, for keys present or absent, in a
// table empty or full, change nothing.
TEST(KeyMap, AHugePageTableAndCacheHintsChangeNoValue) {
  KeyMap<uint32_t> big;
  StableKeyMap<uint64_t> stable;
  big.prefetch(7);  // empty: no slot to hint
  stable.prefetch_index(7);
  stable.prefetch_record(7);
  std::mt19937_64 rng(11);
  std::unordered_map<uint64_t, uint32_t> ref;
  for (uint32_t i = 0; i < 400000; ++i) {  // 1 Mi slots of 16 B: 16 MiB
    const uint64_t key = rng();
    big.prefetch(key);
    *big.try_emplace(key).first = i;
    ref[key] = i;
    stable.prefetch_index(key);
    stable.prefetch_record(key);
    *stable.try_emplace(key).first = key ^ i;
  }
  ASSERT_EQ(big.size(), ref.size());
  for (const auto& [key, value] : ref) {
    big.prefetch(key);
    ASSERT_NE(big.find(key), nullptr);
    EXPECT_EQ(*big.find(key), value);
    EXPECT_EQ(*stable.find(key), key ^ value);
  }
  EXPECT_EQ(big.find(12345), nullptr);
  uint64_t erased = 0;
  for (const auto& [key, value] : ref)
    if (value % 3 == 0) erased += big.erase(key) && stable.erase(key);
  EXPECT_EQ(big.size(), ref.size() - erased);
  EXPECT_EQ(stable.size(), ref.size() - erased);
  for (const auto& [key, value] : ref) EXPECT_EQ(big.contains(key), value % 3 != 0);
}

// The allocator's two paths: below the threshold the plain allocator, above it memory on a
// 2 MiB boundary (mapped from the kernel); both hold what is written and free what they took.
TEST(HugePageAllocator, LargeArraysLieOnHugePageBoundariesSmallOnesAsUsual) {
  std::vector<uint64_t, kvtier::HugePageAllocator<uint64_t>> small(1000, 3), large(1u << 20, 5);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(large.data()) % (2u << 20), 0u);
  EXPECT_EQ(small[999], 3u);
  EXPECT_EQ(large[(1u << 20) - 1], 5u);
  large.resize(3u << 20, 7);  // grows through a second huge allocation
  EXPECT_EQ(large[0], 5u);
  EXPECT_EQ(large.back(), 7u);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(large.data()) % (2u << 20), 0u);
}

// A stable map's records lie in fixed chunks of 8 MiB (tens of thousands of records each):
// values stay put across chunk boundaries, a record number reaches its value in any chunk, and
// moving the map moves its records, not copies of them. Values that own memory (strings longer
// than the small-string buffer) are destroyed with the map and on reuse (ASan's leak check).
TEST(StableKeyMap, RecordsSpanSeveralChunksAndMoveWithTheMap) {
  const auto text = [](uint64_t k) { return std::string(40, static_cast<char>('a' + k % 26)); };
  StableKeyMap<std::string> map;
  std::vector<std::string*> where;
  std::vector<uint32_t> record;
  const uint64_t n = 400000;  // at 48-byte records, 174,762 to a chunk: three chunks
  for (uint64_t k = 0; k < n; ++k) {
    uint32_t at = 0;
    auto [v, inserted] = map.try_emplace(k * 7919 + 1, at);
    ASSERT_TRUE(inserted);
    *v = text(k);
    where.push_back(v);
    record.push_back(at);
  }
  for (uint64_t k = 0; k < n; k += 997) {
    ASSERT_EQ(map.find(k * 7919 + 1), where[k]) << "value " << k << " moved";
    ASSERT_EQ(&map.by_record(record[k]), where[k]);
    EXPECT_EQ(*where[k], text(k));
  }
  EXPECT_EQ(record.back(), n - 1);  // records handed out in order while none was freed
  // A record freed in the last chunk is the next one handed out.
  ASSERT_TRUE(map.erase((n - 5) * 7919 + 1));
  uint32_t again = 0;
  *map.try_emplace(12345678901ull, again).first = "reused";
  EXPECT_EQ(again, record[n - 5]);

  StableKeyMap<std::string> moved(std::move(map));
  EXPECT_EQ(moved.size(), n);
  EXPECT_EQ(moved.find(1), where[0]);  // the same records, now the new map's
  EXPECT_EQ(moved.find((n - 1) * 7919 + 1), where[n - 1]);
  EXPECT_EQ(map.size(), 0u);  // NOLINT(bugprone-use-after-move): a moved-from map is empty
  EXPECT_EQ(map.find(1), nullptr);
  EXPECT_EQ(map.find_record(0), nullptr);

  StableKeyMap<std::string> other;
  *other.try_emplace(5).first = text(99);
  other = std::move(moved);  // other's own record is destroyed
  EXPECT_EQ(other.find(5), nullptr);
  EXPECT_EQ(*other.find(7919 * 3 + 1), text(3));
  EXPECT_EQ(other.by_record(again), "reused");
}

// Uninitialised chunk storage: on a 2 MiB boundary from the threshold up, plain below it; a
// moved-from buffer holds nothing and frees nothing.
TEST(HugeBuffer, LargeChunksLieOnHugePageBoundariesAndMoveOnce) {
  kvtier::HugeBuffer<uint64_t> large(size_t{1} << 19), small(16);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(large.get()) % (2u << 20), 0u);
  large[(size_t{1} << 19) - 1] = 9;
  small[15] = 4;
  kvtier::HugeBuffer<uint64_t> taken(std::move(large));
  EXPECT_EQ(large.get(), nullptr);  // NOLINT(bugprone-use-after-move)
  EXPECT_EQ(taken[(size_t{1} << 19) - 1], 9u);
  taken = std::move(small);  // the large chunk is freed here
  EXPECT_EQ(taken[15], 4u);
}
