#pragma once
// The controller's SRAM block index: SETS x WAYS entries, one per tier-resident block.
// Set and tag follow the command-set rules (tools/cmdset/kvdp_cmdset.tbl): set = key mod SETS,
// tag = the next TAG_BITS bits of the key; insertion takes the lowest invalid way.
#include <cstdint>
#include <optional>
#include <vector>

#include "tlm/common/cache_hint.h"
#include "tlm/ctrl/kvdp_cmdset.h"

namespace kvtier {

struct IndexEntry {
  bool valid = false;
  uint64_t tag = 0;
  uint16_t tenant = 0;
  bool shareable = false;
  bool pinned = false;
  bool hbm_resident = false;
  uint64_t hbm_addr = 0;
  uint64_t tier_addr = 0;
  uint32_t length = 0;
  cmdset::Format format = cmdset::Format::BF16;
  uint8_t qos = 0;
  uint16_t prio = 0;
  uint64_t policy = 0;
};

class BlockIndex {
 public:
  struct Slot {
    uint32_t set = 0, way = 0;
  };

  // sets must be a power of two and log2(sets) + tag_bits <= 64 (checked by the platform loader).
  BlockIndex(uint32_t sets, uint32_t ways, uint32_t tag_bits);

  uint32_t set_of(uint64_t key) const { return static_cast<uint32_t>(key & (sets_ - 1)); }
  uint64_t tag_of(uint64_t key) const { return (key >> set_bits_) & tag_mask_; }

  std::optional<Slot> find(uint64_t key) const;
  // Starts loading the key's set (its tags and first entry), so that a find() soon after hits the
  // cache: a doorbell's batch hints every descriptor's set before the first is looked up. A
  // model-side cache hint only; the engine's timing is the lookup's cycles, unchanged.
  void prefetch(uint64_t key) const {
    const size_t first = static_cast<size_t>(set_of(key)) * ways_;
    cache_hint(&probe_[first]);
    cache_hint(&entries_[first]);
  }
  // Lowest invalid way of the key's set, or nothing when the set is full.
  std::optional<Slot> free_slot(uint64_t key) const;
  // An entry's `valid` and `tag` change only through insert() and erase(); the rest is the
  // caller's to update in place.
  IndexEntry& at(const Slot& s) { return entries_[s.set * ways_ + s.way]; }
  const IndexEntry& at(const Slot& s) const { return entries_[s.set * ways_ + s.way]; }

  void insert(const Slot& s, const IndexEntry& e) {
    at(s) = e;
    probe_[s.set * ways_ + s.way] = e.valid ? e.tag : kNoTag;
    ++valid_;
  }
  void erase(const Slot& s) {
    at(s) = IndexEntry{};
    probe_[s.set * ways_ + s.way] = kNoTag;
    --valid_;
  }
  uint64_t valid_entries() const { return valid_; }
  uint64_t capacity() const { return static_cast<uint64_t>(sets_) * ways_; }
  uint32_t sets() const { return sets_; }
  uint32_t ways() const { return ways_; }
  // Visits every valid entry in (set, way) order: the final-contents comparison of a scoreboard.
  template <typename F>
  void for_each_valid(F&& f) const {
    for (uint32_t s = 0; s < sets_; ++s)
      for (uint32_t w = 0; w < ways_; ++w)
        if (entries_[s * ways_ + w].valid) f(Slot{s, w}, entries_[s * ways_ + w]);
  }

 private:
  uint32_t sets_, ways_, set_bits_;
  uint64_t tag_mask_;
  uint64_t valid_ = 0;
  std::vector<IndexEntry> entries_;
  // Each entry's tag, kNoTag when invalid, side by side: a look-up reads one set's tags from
  // one cache line or two instead of every way's whole entry. A tag as wide as the key (one set)
  // may equal kNoTag, and find() then reads the entries themselves.
  static constexpr uint64_t kNoTag = ~uint64_t{0};
  std::vector<uint64_t> probe_;
};

}  // namespace kvtier
