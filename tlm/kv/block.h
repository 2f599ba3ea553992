#pragma once
// The KV block object of spec §M.2: identity (immutable, travels with the payload), policy
// (mutable in place, kept in a PolicyStore keyed by identity) and mechanism (local to the
// plane that holds the block). Plain C++: usable without a SystemC kernel.
#include <cstdint>

#include "tlm/common/key_map.h"

namespace kvtier::kv {

// Immutable: the block's name. `key` is the 64-bit reduction the index and descriptors use;
// shared prefixes hash to the same key (content addressing).
struct BlockIdentity {
  uint64_t key = 0;
  uint64_t session = 0;         // sequence the block was first produced for
  uint32_t position_block = 0;  // position range = [position_block * block_tokens, +block_tokens)
  uint16_t layer_group = 0;     // 0 when a block spans all layers
  uint64_t prefix_hash = 0;     // content hash of the token prefix (the workload's key)
};

// Mutable without moving a byte (spec §M.2.2). With `persistent` policy state it survives
// eviction and re-admission (spec §M.2.3, claim C4).
// (The small fields first, side by side: a host keeps one state in each of tens of millions of
// block records, and two lone bools between the eight-byte fields padded it by 8 bytes.)
struct BlockPolicy {
  uint32_t tenant = 0;
  uint8_t qos = 0;
  bool shareable = false;  // readable by other tenants (shared prefix)
  uint16_t priority = 0;
  // Scheduler intent, set by the control plane: the last request that read the block is not its
  // session's last turn, so the session's next turn is expected to read it again.
  bool continues = false;
  double reuse_score = 0.0;  // policy-defined (LFU count, EMA value, ...)
  double last_use_s = 0.0;   // recency
  uint64_t uses = 0;         // references while the policy state has existed
  // Kept by the replacement policy (tlm/host/policy, docs/policies.md):
  uint64_t references = 0;        // references the policy counted while this state existed
  uint64_t last_reference = 0;    // the policy's reference clock at the last one
  double last_reference_s = 0.0;  // its time
};
static_assert(sizeof(BlockPolicy) <= 64, "a policy state fits in 64 bytes");

enum class Format : uint8_t { Bf16 = 0, Fp8 = 1, Int4 = 2 };

// Owned by the plane that holds the block; regenerated per location.
// (The format beside the flags, not after the pin count: 24 bytes instead of 32.)
struct BlockMechanism {
  bool in_hbm = false;
  bool tier_valid = false;  // a tier copy exists; write-once keeps it valid
  bool in_flight = false;   // a promotion or demotion is outstanding
  Format format = Format::Bf16;
  uint32_t pins = 0;     // decode-set requests that read the block every step
  double ready_s = 0.0;  // when the HBM copy is usable (promotion completion seen)
  uint64_t tier_slot = 0;
};
static_assert(sizeof(BlockMechanism) <= 24, "a block's mechanism state fits in 24 bytes");

// The policy state of every block, keyed by identity. This class keeps the states in a table of
// its own; a plane that keeps a record per block anyway may keep each state in its block's record
// instead (a subclass, e.g. the host control plane's), so that a reference finds the state without
// a second look-up. Either way a state exists from a block's first reference until its eviction
// (unless persistent) or its FREE.
class PolicyStore {
 public:
  explicit PolicyStore(bool persistent) : persistent_(persistent) {}
  virtual ~PolicyStore() = default;
  PolicyStore(const PolicyStore&) = delete;
  PolicyStore& operator=(const PolicyStore&) = delete;
  // The policy state of `key`, created on first reference. The reference (and find()'s pointer)
  // is good until that state is forgotten (on_evict() when not persistent, on_free()).
  virtual BlockPolicy& touch(uint64_t key) { return states_[key]; }
  virtual const BlockPolicy* find(uint64_t key) const { return states_.find(key); }
  // The block left HBM: non-persistent state is forgotten, so a re-admitted block starts anew.
  virtual void on_evict(uint64_t key) {
    if (!persistent_) states_.erase(key);
  }
  virtual void on_free(uint64_t key) { states_.erase(key); }
  bool persistent() const { return persistent_; }
  virtual size_t size() const { return states_.size(); }

 private:
  bool persistent_;
  StableKeyMap<BlockPolicy> states_;
};

// Per-block promotion (n_b) and demotion (delta_b) counts of spec §M.5.1. Write-once bounds
// delta_b by one; a tier rewrite (re-quantisation) is the only way past it, and is counted.
class WriteOnceLedger {
 public:
  // One block's counts over its lifetime.
  struct Counts {
    uint32_t promotions = 0, demotions = 0;
  };
  // Keyed: the ledger holds each block's counts until retire().
  void promotion(uint64_t key) { promotion(entries_[key]); }
  void demotion(uint64_t key) { demotion(entries_[key]); }
  void rewrite(uint64_t key) { rewrite(entries_[key]); }
  // The block's lifetime ended (FREE): a later block with the same identity is a new block
  // with counts of its own. The maxima seen so far are kept.
  void retire(uint64_t key) { entries_.erase(key); }
  // Held: the caller keeps the counts with its own record of the block, which lives exactly as
  // long as the block (the host control plane), and so needs no look-up; a new record is a new
  // lifetime. The ledger keeps the maxima and totals.
  void promotion(Counts& c) { ++c.promotions; }
  void demotion(Counts& c) {
    ++c.demotions;
    if (c.demotions > max_demotions_) max_demotions_ = c.demotions;
    if (c.demotions == 2) ++blocks_over_bound_;
  }
  void rewrite(Counts& c) { demotion(c), ++rewrites_; }
  uint32_t max_demotions_per_block() const { return max_demotions_; }
  uint64_t blocks_over_bound() const { return blocks_over_bound_; }
  uint64_t rewrites() const { return rewrites_; }
  // Blocks with keyed counts.
  uint64_t blocks() const { return entries_.size(); }

 private:
  KeyMap<Counts> entries_;
  uint32_t max_demotions_ = 0;
  uint64_t blocks_over_bound_ = 0;
  uint64_t rewrites_ = 0;
};

}  // namespace kvtier::kv
