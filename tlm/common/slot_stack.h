#pragma once
// Slots [0, capacity) handed out as a stack that starts with every slot free, the lowest on top:
// take() gives the slot given back last, else the lowest never used. Only slots given back are
// stored; those never used are a count. The stack of every slot, built when the books were
// made, wrote 8 bytes a slot before the run began: 32 MB for the default 256 GiB tier of
// per-layer blocks, 512 MB for a 4 TiB pool of them, once per replica with private tiers, most
// of it never taken. Hands out the same slots in the same order (test: SlotStack.*).
#include <cstdint>
#include <vector>

namespace kvtier {

class SlotStack {
 public:
  explicit SlotStack(uint64_t capacity) : capacity_(capacity) {}

  uint64_t capacity() const { return capacity_; }
  uint64_t free() const { return capacity_ - never_used_from_ + given_back_.size(); }
  bool empty() const { return never_used_from_ == capacity_ && given_back_.empty(); }
  // The caller has checked that a slot is free.
  uint64_t take() {
    if (given_back_.empty()) return never_used_from_++;
    const uint64_t s = given_back_.back();
    given_back_.pop_back();
    return s;
  }
  void give_back(uint64_t slot) { given_back_.push_back(slot); }

 private:
  uint64_t capacity_;
  uint64_t never_used_from_ = 0;      // slots [never_used_from_, capacity_) were never taken
  std::vector<uint64_t> given_back_;  // the rest of the free slots, the last given back on top
};

}  // namespace kvtier
