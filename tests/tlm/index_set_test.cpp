// IndexSet against std::set: membership, size, least and greatest after every insert and erase of
// random interleavings, over universes of one, two and five levels; and the offline bound's use,
// a greatest-first queue with entries skipped as they come up, against a heap of the same
// entries.
#include "tlm/common/index_set.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <queue>
#include <random>
#include <set>
#include <vector>

namespace kvtier {
namespace {

void compare_with_std_set(uint64_t universe, uint64_t seed, size_t operations) {
  std::mt19937_64 rng(seed);
  IndexSet set(universe);
  std::set<uint64_t> reference;
  for (size_t op = 0; op < operations; ++op) {
    // Near the ends of the universe as often as anywhere: the words at the edges are where an
    // off-by-one would show.
    uint64_t i = rng() % universe;
    if (rng() % 4 == 0)
      i = rng() % 2 ? rng() % std::min<uint64_t>(universe, 130)
                    : universe - 1 - rng() % std::min<uint64_t>(universe, 130);
    if (rng() % 5 < 3) {
      EXPECT_EQ(set.insert(i), reference.insert(i).second);
    } else {
      EXPECT_EQ(set.erase(i), reference.erase(i) == 1);
    }
    ASSERT_EQ(set.size(), reference.size()) << "operation " << op;
    ASSERT_EQ(set.empty(), reference.empty());
    ASSERT_EQ(set.contains(i), reference.count(i) == 1);
    if (!reference.empty()) {
      ASSERT_EQ(set.least(), *reference.begin()) << "operation " << op;
      ASSERT_EQ(set.greatest(), *reference.rbegin()) << "operation " << op;
    }
  }
}

TEST(IndexSet, MatchesStdSetOnOneLevel) { compare_with_std_set(64, 1, 5000); }
TEST(IndexSet, MatchesStdSetOnTwoLevels) { compare_with_std_set(1000, 2, 20000); }
TEST(IndexSet, MatchesStdSetOnFiveLevels) {
  compare_with_std_set(uint64_t{27} << 20, 3, 20000);
  compare_with_std_set((uint64_t{1} << 24) + 1, 4, 20000);  // one past a level's boundary
}

TEST(IndexSet, ByHand) {
  IndexSet s(200);
  EXPECT_TRUE(s.empty());
  EXPECT_TRUE(s.insert(130));
  EXPECT_TRUE(s.insert(3));
  EXPECT_TRUE(s.insert(199));
  EXPECT_FALSE(s.insert(3));
  EXPECT_EQ(s.size(), 3u);
  EXPECT_EQ(s.least(), 3u);
  EXPECT_EQ(s.greatest(), 199u);
  EXPECT_TRUE(s.erase(199));
  EXPECT_FALSE(s.erase(199));
  EXPECT_EQ(s.greatest(), 130u);
  EXPECT_TRUE(s.erase(3));
  EXPECT_EQ(s.least(), 130u);
  EXPECT_TRUE(s.erase(130));
  EXPECT_TRUE(s.empty());
  IndexSet none(0);  // an empty universe holds nothing
  EXPECT_TRUE(none.empty());
}

// The bound's victim queue: candidates offered (again and again), the greatest taken, one that
// has changed since skipped. A heap of the same offers, duplicates kept, takes the same victims.
TEST(IndexSet, TakesTheSameVictimsAsAHeapWithStaleEntries) {
  std::mt19937_64 rng(7);
  const uint64_t universe = 5000;
  std::vector<uint8_t> valid(universe, 0);
  IndexSet set(universe);
  std::priority_queue<uint64_t> heap;
  std::vector<uint64_t> from_set;
  for (int step = 0; step < 100000; ++step) {
    const uint64_t i = rng() % universe;
    if (rng() % 3) {
      valid[i] = 1;  // offered: a candidate now
      set.insert(i);
      heap.push(i);
    } else if (rng() % 2) {
      valid[i] = 0;  // changed: its entries are stale
    } else {
      // Take a victim through each, skipping stale entries; then the victim is no candidate.
      uint64_t a = universe, b = universe;
      while (!set.empty()) {
        const uint64_t g = set.greatest();
        set.erase(g);
        if (valid[g]) {
          a = g;
          break;
        }
      }
      while (!heap.empty()) {
        const uint64_t g = heap.top();
        heap.pop();
        if (valid[g]) {
          b = g;
          break;
        }
      }
      ASSERT_EQ(a, b) << "step " << step;
      if (a < universe) valid[a] = 0;
      from_set.push_back(a);
    }
  }
  EXPECT_GT(from_set.size(), 10000u);
}

}  // namespace
}  // namespace kvtier
