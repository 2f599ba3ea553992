#pragma once
// Most recently used: the victim is the block that went idle last. It keeps the oldest blocks
// and throws away the newest, which suits a cyclic scan larger than the cache (where LRU
// evicts every block just before its next use) and little else; it is here to show the
// interface, not to recommend it.
#include <list>
#include <unordered_map>

#include "tlm/host/policy/policy.h"

class MruPolicy : public kvtier::ReplacementPolicy {
 public:
  std::string name() const override { return "mru"; }
  void on_idle(uint64_t key, double) override {
    erase(key);
    where_[key] = order_.insert(order_.end(), key);
  }
  void on_pinned(uint64_t key) override { erase(key); }
  void on_removed(uint64_t key) override { erase(key); }
  std::optional<uint64_t> victim() override {
    if (order_.empty()) return std::nullopt;
    ++victims_;
    return order_.back();
  }
  size_t evictable() const override { return order_.size(); }
  static inline uint64_t victims_ = 0;  // over every instance: what the example reports

 private:
  void erase(uint64_t key) {
    auto it = where_.find(key);
    if (it == where_.end()) return;
    order_.erase(it->second);
    where_.erase(it);
  }
  std::list<uint64_t> order_;  // most recently idle last
  std::unordered_map<uint64_t, std::list<uint64_t>::iterator> where_;
};
