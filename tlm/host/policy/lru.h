#pragma once
// Least recently used: the victim is the block that has been idle longest. A block's recency
// is the moment it last went idle (its last reader finished), which is when it was last used.
#include <cstdint>
#include <stdexcept>
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
      *at = new_node(key, kNone);
      append(*at);
      return;
    }
    back_to_idle(*at);
  }
  void on_pinned(uint64_t key) override {
    if (const uint32_t* at = where_.find(key)) pin(*at);
  }
  void on_removed(uint64_t key) override {
    const uint32_t* at = where_.find(key);
    if (!at) return;
    release(*at);
    where_.erase(key);
  }
  std::optional<uint64_t> victim() override {
    if (head_ == kNone) return std::nullopt;
    return nodes_[head_].key;
  }

  // Held forms (policy.h): the node's index lives in the caller's slot, so a pin / idle cycle
  // and an eviction touch the node alone, with no look-up of the key (per-layer runs make tens of
  // millions of them), and the victim is named by the caller's record.
  bool keeps_slots() const override { return true; }
  void idle_held(uint64_t key, uint32_t owner, uint32_t& slot, double) override {
    if (slot == kNoSlot) {
      slot = new_node(key, owner);
      append(slot);
      return;
    }
    check(key, slot);
    back_to_idle(slot);
  }
  void pinned_held(uint64_t key, uint32_t& slot) override {
    if (slot == kNoSlot) return;
    check(key, slot);
    pin(slot);
  }
  void removed_held(uint64_t key, uint32_t& slot) override {
    if (slot == kNoSlot) return;
    check(key, slot);
    release(slot);
    slot = kNoSlot;
  }
  std::optional<uint32_t> victim_owner() override {
    if (head_ == kNone) return std::nullopt;
    return nodes_[head_].owner;
  }
  size_t evictable() const override { return idle_; }

 private:
  static constexpr uint32_t kNone = UINT32_MAX;
  struct Node {
    uint64_t key = 0;
    uint32_t owner = kNone;               // the caller's record (held forms)
    uint32_t prev = kNone, next = kNone;  // neighbours on the idle list
    bool pinned = false;                  // off the idle list: not evictable
  };
  uint32_t new_node(uint64_t key, uint32_t owner) {
    uint32_t n;
    if (!free_nodes_.empty()) {
      n = free_nodes_.back();
      free_nodes_.pop_back();
    } else {
      n = static_cast<uint32_t>(nodes_.size());
      nodes_.emplace_back();
    }
    nodes_[n] = Node{key, owner, kNone, kNone, false};
    return n;
  }
  void back_to_idle(uint32_t n) {
    if (!nodes_[n].pinned) unlink(n);
    nodes_[n].pinned = false;
    append(n);
  }
  void pin(uint32_t n) {
    if (nodes_[n].pinned) return;
    unlink(n);
    nodes_[n].pinned = true;
  }
  void release(uint32_t n) {
    if (!nodes_[n].pinned) unlink(n);
    free_nodes_.push_back(n);
  }
  // A slot that names another block's node is the caller's bug (a record reused before its
  // block was removed): stop there rather than reorder someone else's block.
  void check(uint64_t key, uint32_t n) const {
    if (n >= nodes_.size() || nodes_[n].key != key)
      throw std::logic_error("lru: a held slot names another block's node");
  }
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
