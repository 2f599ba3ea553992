#pragma once
// Least recently used: the victim is the block that has been idle longest. A block's recency
// is the moment it last went idle (its last reader finished), which is when it was last used.
#include <list>
#include <unordered_map>

#include "tlm/host/policy/policy.h"

namespace kvtier {

class LruPolicy : public ReplacementPolicy {
 public:
  std::string name() const override { return "lru"; }
  void on_idle(uint64_t key, double) override {
    erase(key);
    where_[key] = order_.insert(order_.end(), key);
  }
  void on_pinned(uint64_t key) override { erase(key); }
  void on_removed(uint64_t key) override { erase(key); }
  std::optional<uint64_t> victim() override {
    if (order_.empty()) return std::nullopt;
    return order_.front();
  }
  size_t evictable() const override { return order_.size(); }

 private:
  void erase(uint64_t key) {
    auto it = where_.find(key);
    if (it == where_.end()) return;
    order_.erase(it->second);
    where_.erase(it);
  }
  std::list<uint64_t> order_;  // least recently used first
  std::unordered_map<uint64_t, std::list<uint64_t>::iterator> where_;
};

}  // namespace kvtier
