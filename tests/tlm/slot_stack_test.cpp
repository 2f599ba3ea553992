// SlotStack against the stack of every slot it replaced (built whole at construction, the
// lowest slot on top): the same slots in the same order, and the same free counts, over random
// takes and give-backs; and nothing stored for slots never taken.
#include <gtest/gtest.h>

#include <cstdint>
#include <random>
#include <vector>

#include "tlm/common/slot_stack.h"

namespace kvtier {
namespace {

// The reference: every slot pushed at construction, highest first.
class WholeStack {
 public:
  explicit WholeStack(uint64_t capacity) {
    for (uint64_t s = capacity; s-- > 0;) free_.push_back(s);
  }
  uint64_t free() const { return free_.size(); }
  bool empty() const { return free_.empty(); }
  uint64_t take() {
    const uint64_t s = free_.back();
    free_.pop_back();
    return s;
  }
  void give_back(uint64_t s) { free_.push_back(s); }

 private:
  std::vector<uint64_t> free_;
};

TEST(SlotStack, HandsOutTheSameSlotsAsTheWholeStackItReplaced) {
  std::mt19937_64 rng(7);
  for (uint64_t capacity : {1u, 2u, 5u, 64u, 1000u}) {
    SlotStack fast(capacity);
    WholeStack reference(capacity);
    std::vector<uint64_t> taken;
    for (int step = 0; step < 20000; ++step) {
      ASSERT_EQ(fast.free(), reference.free()) << "capacity " << capacity << " step " << step;
      ASSERT_EQ(fast.empty(), reference.empty());
      // Mostly takes while the stack fills, mostly give-backs once it is nearly full.
      const bool take =
          !reference.empty() && (taken.empty() || rng() % capacity >= taken.size() / 2);
      if (take) {
        const uint64_t s = fast.take();
        ASSERT_EQ(s, reference.take()) << "capacity " << capacity << " step " << step;
        ASSERT_LT(s, capacity);
        taken.push_back(s);
      } else if (!taken.empty()) {
        const size_t i = rng() % taken.size();
        fast.give_back(taken[i]);
        reference.give_back(taken[i]);
        taken[i] = taken.back();
        taken.pop_back();
      }
    }
    EXPECT_EQ(fast.capacity(), capacity);
  }
}

// By hand: 0, 1, 2 taken; 1 given back is taken again before 3; then 3.
TEST(SlotStack, TheLastGivenBackComesBeforeTheLowestNeverUsed) {
  SlotStack s(4);
  EXPECT_EQ(s.free(), 4u);
  EXPECT_EQ(s.take(), 0u);
  EXPECT_EQ(s.take(), 1u);
  EXPECT_EQ(s.take(), 2u);
  s.give_back(1);
  EXPECT_EQ(s.free(), 2u);
  EXPECT_EQ(s.take(), 1u);
  EXPECT_EQ(s.take(), 3u);
  EXPECT_TRUE(s.empty());
  EXPECT_EQ(s.free(), 0u);
}

// A stack of 2^40 slots (a 64 PiB tier of 64 KiB blocks) is made at once and hands out its
// lowest: nothing is written for the slots never taken.
TEST(SlotStack, AHugeCapacityCostsNothingUntilUsed) {
  SlotStack s(uint64_t{1} << 40);
  EXPECT_EQ(s.free(), uint64_t{1} << 40);
  EXPECT_EQ(s.take(), 0u);
  EXPECT_EQ(s.free(), (uint64_t{1} << 40) - 1);
}

}  // namespace
}  // namespace kvtier
