// The controller's SRAM block index: set/tag split, lowest-free-way insertion, look-up after
// erasure, and a tag as wide as the key (one set), whose all-ones value is also the look-up
// table's free marker.
#include <gtest/gtest.h>

#include "tlm/ctrl/block_index.h"

using kvtier::BlockIndex;
using kvtier::IndexEntry;

namespace {
IndexEntry entry_for(const BlockIndex& index, uint64_t key, uint32_t length) {
  IndexEntry e;
  e.valid = true;
  e.tag = index.tag_of(key);
  e.length = length;
  return e;
}
}  // namespace

TEST(BlockIndex, FindsWhatWasInsertedInTheLowestFreeWayAndForgetsWhatWasErased) {
  BlockIndex index(16, 4, 12);
  // Keys 0x105, 0x205, 0x305, 0x405, 0x505 all map to set 5 (key mod 16) with tags 0x10..0x50.
  for (uint64_t i = 1; i <= 4; ++i) {
    const uint64_t key = (i << 8) | 5;
    EXPECT_FALSE(index.find(key).has_value());
    const auto slot = index.free_slot(key);
    ASSERT_TRUE(slot.has_value());
    EXPECT_EQ(slot->set, 5u);
    EXPECT_EQ(slot->way, i - 1);
    index.insert(*slot, entry_for(index, key, static_cast<uint32_t>(i)));
  }
  EXPECT_FALSE(index.free_slot(0x505).has_value());  // the set is full
  EXPECT_EQ(index.valid_entries(), 4u);
  for (uint64_t i = 1; i <= 4; ++i) {
    const auto slot = index.find((i << 8) | 5);
    ASSERT_TRUE(slot.has_value());
    EXPECT_EQ(slot->way, i - 1);
    EXPECT_EQ(index.at(*slot).length, i);
  }
  EXPECT_FALSE(index.find(0x505).has_value());
  EXPECT_FALSE(index.find(0x106).has_value());  // same tag, other set
  index.erase(*index.find(0x205));
  EXPECT_FALSE(index.find(0x205).has_value());
  EXPECT_TRUE(index.find(0x305).has_value());
  const auto reuse = index.free_slot(0x505);
  ASSERT_TRUE(reuse.has_value());
  EXPECT_EQ(reuse->way, 1u);  // the erased way
  EXPECT_EQ(index.valid_entries(), 3u);
}

TEST(BlockIndex, FullWidthTagsIncludingAllOnesAreFound) {
  BlockIndex index(1, 2, 64);
  const uint64_t all_ones = ~uint64_t{0};
  EXPECT_EQ(index.tag_of(all_ones), all_ones);
  EXPECT_FALSE(index.find(all_ones).has_value());
  index.insert(*index.free_slot(all_ones), entry_for(index, all_ones, 7));
  index.insert(*index.free_slot(42), entry_for(index, 42, 9));
  EXPECT_FALSE(index.free_slot(1).has_value());
  ASSERT_TRUE(index.find(all_ones).has_value());
  EXPECT_EQ(index.at(*index.find(all_ones)).length, 7u);
  EXPECT_EQ(index.at(*index.find(42)).length, 9u);
  index.erase(*index.find(all_ones));
  EXPECT_FALSE(index.find(all_ones).has_value());
  EXPECT_EQ(index.free_slot(1)->way, 0u);
}
