#pragma once
// A set of integers in [0, universe) with its least and greatest member at hand: a tree of
// 64-bit words, each bit of an upper level saying whether the word below it holds any member.
// Insert, erase, least and greatest each touch one word per level (five levels for 2^30
// members), and the lower levels are one bit per member: 3.4 MB for 27 M, where a binary heap
// of the same entries takes 8 bytes each and misses the cache at nearly every level of a pop.
//
// The offline bound's queues hold distinct integers (a reference's index, a block's id) and ask
// only for the greatest or least: a set of them gives the same answers as a heap of them, one
// entry per member (tests: IndexSet.*).
#include <cstddef>
#include <cstdint>
#include <vector>

namespace kvtier {

class IndexSet {
 public:
  explicit IndexSet(uint64_t universe) {
    uint64_t n = universe ? universe : 1;
    do {
      n = (n + 63) / 64;
      levels_.emplace_back(n, 0);
    } while (n > 1);
  }

  bool empty() const { return levels_.back()[0] == 0; }
  size_t size() const { return size_; }
  bool contains(uint64_t i) const { return (levels_[0][i >> 6] >> (i & 63)) & 1; }

  // Adds `i` (below the universe); false when it was a member already.
  bool insert(uint64_t i) {
    if (contains(i)) return false;
    ++size_;
    for (std::vector<uint64_t>& level : levels_) {
      uint64_t& word = level[i >> 6];
      const bool had_any = word != 0;
      word |= uint64_t{1} << (i & 63);
      if (had_any) break;  // the levels above already say this word holds a member
      i >>= 6;
    }
    return true;
  }

  // Removes `i`; false when it was not a member.
  bool erase(uint64_t i) {
    if (!contains(i)) return false;
    --size_;
    for (std::vector<uint64_t>& level : levels_) {
      uint64_t& word = level[i >> 6];
      word &= ~(uint64_t{1} << (i & 63));
      if (word != 0) break;  // the word still holds a member: the levels above stand
      i >>= 6;
    }
    return true;
  }

  // The greatest and the least member (the set must not be empty).
  uint64_t greatest() const {
    uint64_t i = 0;
    for (size_t l = levels_.size(); l-- > 0;)
      i = i * 64 + (63 - static_cast<uint64_t>(__builtin_clzll(levels_[l][i])));
    return i;
  }
  uint64_t least() const {
    uint64_t i = 0;
    for (size_t l = levels_.size(); l-- > 0;)
      i = i * 64 + static_cast<uint64_t>(__builtin_ctzll(levels_[l][i]));
    return i;
  }

 private:
  size_t size_ = 0;
  std::vector<std::vector<uint64_t>> levels_;  // [0]: one bit per member; the last: one word
};

}  // namespace kvtier
