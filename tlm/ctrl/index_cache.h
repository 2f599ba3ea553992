#pragma once
// The SRAM side of a `cached` index organisation (DESIGN.md §4): the full table lives in tier
// DRAM and the SRAM holds the most recently used entries. Fully associative, least recently
// used replacement; it decides hit or miss only; the entries themselves stay in BlockIndex.
#include <cstdint>
#include <list>
#include <unordered_map>

namespace kvtier {

class IndexCache {
 public:
  explicit IndexCache(uint64_t capacity) : capacity_(capacity) {}
  // Looks `key` up; on a miss the entry is fetched and installed, evicting the least recently
  // used one when full. Returns whether it hit.
  bool access(uint64_t key) {
    auto it = where_.find(key);
    if (it != where_.end()) {
      order_.splice(order_.end(), order_, it->second);
      ++hits_;
      return true;
    }
    ++misses_;
    if (capacity_ == 0) return false;
    if (where_.size() >= capacity_) {
      where_.erase(order_.front());
      order_.pop_front();
    }
    where_[key] = order_.insert(order_.end(), key);
    return false;
  }
  // The entry was dropped from the table: nothing to cache.
  void erase(uint64_t key) {
    auto it = where_.find(key);
    if (it == where_.end()) return;
    order_.erase(it->second);
    where_.erase(it);
  }
  uint64_t hits() const { return hits_; }
  uint64_t misses() const { return misses_; }
  uint64_t capacity() const { return capacity_; }

 private:
  uint64_t capacity_;
  std::list<uint64_t> order_;  // least recently used first
  std::unordered_map<uint64_t, std::list<uint64_t>::iterator> where_;
  uint64_t hits_ = 0, misses_ = 0;
};

}  // namespace kvtier
