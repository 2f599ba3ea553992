#pragma once
// Least recently used: the victim is the block that has been idle longest. A block's recency
// is the moment it last went idle (its last reader finished), which is when it was last used.
#include <cstdint>
#include <vector>

#include "tlm/common/key_map.h"
#include "tlm/host/policy/policy.h"

namespace kvtier {

class LruPolicy : public ReplacementPolicy {
 public:
  std::string name() const override { return "lru"; }
  // A block is pinned and goes idle again at every reference; with per-layer blocks that is
  // millions of times a run. A block seen before keeps its node while pinned (unlinked from the
  // idle list), so a pin / idle cycle is one look-up each and no allocation: the nodes live in
  // one array, linked by index, and a removed block's node is reused.
  void on_idle(uint64_t key, double) override {
    auto [at, fresh] = where_.try_emplace(key);
    if (fresh) {
      uint32_t n;
      if (!free_nodes_.empty()) {
        n = free_nodes_.back();
        free_nodes_.pop_back();
      } else {
        n = static_cast<uint32_t>(nodes_.size());
        nodes_.emplace_back();
      }
      *at = n;
      nodes_[n] = Node{key, kNone, kNone, false};
      append(n);
      return;
    }
    Node& node = nodes_[*at];
    if (!node.pinned) unlink(*at);
    node.pinned = false;
    append(*at);
  }
  void on_pinned(uint64_t key) override {
    const uint32_t* at = where_.find(key);
    if (!at || nodes_[*at].pinned) return;
    unlink(*at);
    nodes_[*at].pinned = true;
  }
  void on_removed(uint64_t key) override {
    const uint32_t* at = where_.find(key);
    if (!at) return;
    const uint32_t n = *at;
    if (!nodes_[n].pinned) unlink(n);
    free_nodes_.push_back(n);
    where_.erase(key);
  }
  std::optional<uint64_t> victim() override {
    if (head_ == kNone) return std::nullopt;
    return nodes_[head_].key;
  }
  size_t evictable() const override { return idle_; }

 private:
  static constexpr uint32_t kNone = UINT32_MAX;
  struct Node {
    uint64_t key = 0;
    uint32_t prev = kNone, next = kNone;  // neighbours on the idle list
    bool pinned = false;                  // off the idle list: not evictable
  };
  // Idle list: least recently used at head_, most recently at tail_.
  void append(uint32_t n) {
    nodes_[n].prev = tail_;
    nodes_[n].next = kNone;
    (tail_ == kNone ? head_ : nodes_[tail_].next) = n;
    tail_ = n;
    ++idle_;
  }
  void unlink(uint32_t n) {
    const Node& node = nodes_[n];
    (node.prev == kNone ? head_ : nodes_[node.prev].next) = node.next;
    (node.next == kNone ? tail_ : nodes_[node.next].prev) = node.prev;
    --idle_;
  }
  std::vector<Node> nodes_;
  std::vector<uint32_t> free_nodes_;
  KeyMap<uint32_t> where_;  // block -> its node
  uint32_t head_ = kNone, tail_ = kNone;
  size_t idle_ = 0;
};

}  // namespace kvtier
