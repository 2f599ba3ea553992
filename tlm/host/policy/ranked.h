#pragma once
// Shared machinery of the policies that rank evictable blocks by a score read from the policy
// store: an ordered set of (rank, idle order, key), lowest first. The victim is the lowest rank;
// among equal ranks, the block that went idle earliest (the oldest). Every operation is
// O(log n) in the evictable blocks, and the order never depends on hash-table iteration.
#include <cstdint>
#include <set>
#include <tuple>

#include "tlm/common/key_map.h"
#include "tlm/host/policy/policy.h"

namespace kvtier {

class RankedPolicy : public ReplacementPolicy {
 public:
  explicit RankedPolicy(kv::PolicyStore& store) : store_(store) {}

  void on_reference(uint64_t key, double now_s, kv::BlockPolicy& state) final {
    ++clock_;
    update(state, now_s);
    state.last_reference = clock_;
    state.last_reference_s = now_s;
    ++state.references;
    // A reference normally pins the block right after; re-rank anyway so that the order stays
    // consistent if the caller does not.
    if (auto* at = where_.find(key)) {
      const uint64_t order = std::get<1>(**at);
      order_.erase(*at);
      *at = order_.insert({rank(state), order, key}).first;
    }
  }
  // The restored score counts as one earlier reference, made now: the word holds a level, not
  // its age, so a decaying score (ema) decays from the re-admission on.
  void restore(kv::BlockPolicy& state, double score, double now_s) final {
    state.reuse_score = score;
    if (!(score > 0.0)) return;
    state.references = 1;
    state.last_reference = clock_;
    state.last_reference_s = now_s;
  }
  void on_idle(uint64_t key, double) final {
    erase(key);
    const kv::BlockPolicy* state = store_.find(key);
    where_[key] =
        order_.insert({rank(state ? *state : kv::BlockPolicy{}), ++idle_order_, key}).first;
  }
  void on_pinned(uint64_t key) final { erase(key); }
  void on_removed(uint64_t key) final { erase(key); }
  std::optional<uint64_t> victim() final {
    if (order_.empty()) return std::nullopt;
    return std::get<2>(*order_.begin());
  }
  size_t evictable() const final { return order_.size(); }

  // References this policy has seen (its clock).
  uint64_t clock() const { return clock_; }

 protected:
  // Updates the policy's score in `state` for a reference at `now_s`. `state.last_reference`,
  // `last_reference_s` and `references` still describe the previous reference (zero if none);
  // the base class advances them afterwards. clock() is already this reference's number.
  virtual void update(kv::BlockPolicy& state, double now_s) = 0;
  // Eviction rank: lower goes first. A pure function of the state.
  virtual double rank(const kv::BlockPolicy& state) const = 0;

 private:
  using Entry = std::tuple<double, uint64_t, uint64_t>;  // rank, idle order, key
  void erase(uint64_t key) {
    auto* at = where_.find(key);
    if (!at) return;
    order_.erase(*at);
    where_.erase(key);
  }
  kv::PolicyStore& store_;
  std::set<Entry> order_;
  KeyMap<std::set<Entry>::iterator> where_;
  uint64_t clock_ = 0;
  uint64_t idle_order_ = 0;
};

}  // namespace kvtier
