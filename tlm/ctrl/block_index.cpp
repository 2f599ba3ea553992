#include "tlm/ctrl/block_index.h"

namespace kvtier {

BlockIndex::BlockIndex(uint32_t sets, uint32_t ways, uint32_t tag_bits)
    : sets_(sets),
      ways_(ways),
      set_bits_(0),
      tag_mask_(tag_bits >= 64 ? ~0ull : (1ull << tag_bits) - 1),
      entries_(static_cast<size_t>(sets) * ways),
      probe_(static_cast<size_t>(sets) * ways, kNoTag) {
  while ((1u << set_bits_) < sets) ++set_bits_;
}

std::optional<BlockIndex::Slot> BlockIndex::find(uint64_t key) const {
  const uint32_t set = set_of(key);
  const uint64_t tag = tag_of(key);
  if (tag == kNoTag) {
    for (uint32_t w = 0; w < ways_; ++w) {
      const IndexEntry& e = entries_[set * ways_ + w];
      if (e.valid && e.tag == tag) return Slot{set, w};
    }
    return std::nullopt;
  }
  const uint64_t* tags = &probe_[static_cast<size_t>(set) * ways_];
  for (uint32_t w = 0; w < ways_; ++w)
    if (tags[w] == tag) return Slot{set, w};
  return std::nullopt;
}

std::optional<BlockIndex::Slot> BlockIndex::free_slot(uint64_t key) const {
  const uint32_t set = set_of(key);
  const uint64_t* tags = &probe_[static_cast<size_t>(set) * ways_];
  for (uint32_t w = 0; w < ways_; ++w)
    if (tags[w] == kNoTag && !entries_[set * ways_ + w].valid) return Slot{set, w};
  return std::nullopt;
}

}  // namespace kvtier
