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
  // A block is pinned and goes idle again at every reference; with per-layer blocks that is
  // millions of times a run. Pinned blocks therefore keep their list node on a side list
  // (splice keeps iterators valid), so a pin / idle cycle is two look-ups and no allocation.
  void on_idle(uint64_t key, double) override {
    auto [it, fresh] = where_.try_emplace(key);
    if (fresh) {
      it->second = {order_.insert(order_.end(), key), false};
      return;
    }
    Node& n = it->second;
    order_.splice(order_.end(), n.pinned ? pinned_ : order_, n.at);
    n.pinned = false;
  }
  void on_pinned(uint64_t key) override {
    auto it = where_.find(key);
    if (it == where_.end() || it->second.pinned) return;
    pinned_.splice(pinned_.end(), order_, it->second.at);
    it->second.pinned = true;
  }
  void on_removed(uint64_t key) override {
    auto it = where_.find(key);
    if (it == where_.end()) return;
    (it->second.pinned ? pinned_ : order_).erase(it->second.at);
    where_.erase(it);
  }
  std::optional<uint64_t> victim() override {
    if (order_.empty()) return std::nullopt;
    return order_.front();
  }
  size_t evictable() const override { return order_.size(); }

 private:
  struct Node {
    std::list<uint64_t>::iterator at;
    bool pinned = false;
  };
  std::list<uint64_t> order_;   // idle blocks, least recently used first
  std::list<uint64_t> pinned_;  // blocks seen before and pinned now: not evictable, in no order
  std::unordered_map<uint64_t, Node> where_;
};

}  // namespace kvtier
