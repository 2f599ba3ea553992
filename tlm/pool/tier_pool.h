#pragma once
// One CXL tier shared by several serving replicas (tier.shared = true): the pool's books as the
// replicas' hosts see them together. Each replica keeps its own books of the blocks it knows
// (tlm/host/block_books.h); what they share is here: the pool's slots and reclaim order (a
// TierStore), and a directory of the copies in it by content key, each with the replicas that
// hold it in their books.
//
// The rules this directory keeps across replicas:
//   - Write-once: a key is stored once. A replica evicting a block whose copy another replica
//     already stored holds that copy (no DEMOTE); one whose copy is still being written, or
//     belongs to another tenant and is not shareable, keeps no copy.
//   - Tenant rule: a replica finds a copy only when the copy's tenant is the asker's or the copy
//     is shareable (the device index's rule, tlm/ctrl/controller.cpp), and only once its DEMOTE
//     is done (a promotion never reads what is not yet written).
//   - A copy is freed (one FREE to the device) when its last holder lets it go, or reclaimed
//     when the pool fills: the copy tier-only for longest, never one a holder has in HBM, pinned,
//     moving or streamed (each holder is asked), and every holder forgets it.
#include <algorithm>
#include <cstdint>
#include <vector>

#include "tlm/common/key_map.h"
#include "tlm/host/tier_store.h"
#include "tlm/kv/block.h"

namespace kvtier {

// A replica's side of the pool: what the pool asks a holder of a copy when it reclaims it.
class PoolMemberIF {
 public:
  virtual ~PoolMemberIF() = default;
  // Whether the holder still needs the copy of `key` (its block is in HBM, pinned, moving or
  // streamed), so that the copy cannot be reclaimed now.
  virtual bool needs_copy(uint64_t key) const = 0;
  // The copy of `key` is gone (reclaimed by the pool): the holder's block, tier-only and idle,
  // leaves its books. No FREE: the replica reclaiming it sends the one FREE.
  virtual void copy_reclaimed(uint64_t key) = 0;
};

struct PoolCopy {
  uint64_t slot = 0;
  kv::Format format = kv::Format::Bf16;
  uint16_t tenant = 0;     // the tenant whose DEMOTE stored it (owns the device's entry)
  bool shareable = false;  // stored as a block of several sessions: any tenant may read it
  double ready_s = 0.0;    // when its DEMOTE is done (infinity while none is known)
  uint64_t holders = 0;    // bit m: replica m holds it in its books
  uint32_t stored_by = 0;  // the replica whose DEMOTE stored it
  uint64_t epoch = 0;      // the current entry of the reclaim order
};

struct PoolStats {
  uint64_t stored = 0;             // copies stored by a DEMOTE
  uint64_t held_again = 0;         // evictions that held a copy another replica stored (no DEMOTE)
  uint64_t found = 0;              // blocks a replica found in the pool that it did not hold
  uint64_t found_foreign = 0;      // ... stored by another replica (cross-replica hits)
  uint64_t refused_tenant = 0;     // copies not served: another tenant's, not shareable
  uint64_t refused_unwritten = 0;  // copies not served or held: their DEMOTE not yet done
  uint64_t freed = 0;              // copies whose last holder let go (one FREE each)
  uint64_t reclaimed = 0;          // copies reclaimed when the pool filled
  uint64_t reclaimed_held_elsewhere = 0;  // ... that another replica held too
  uint64_t peak_used = 0;                 // most slots in use at once
};

class TierPool {
 public:
  // `blocks` slots of `block_bytes` blocks; formats and ratios from `config` (as a private tier).
  TierPool(uint64_t blocks, uint64_t block_bytes, const HostConfig& config);

  // A replica joins; returns its member number (0, 1, ...; at most 64 members).
  uint32_t join(PoolMemberIF& member);
  TierStore& store() { return store_; }
  const TierStore& store() const { return store_; }

  // The copy of `key` that `tenant` may read at `now_s` (stored, its DEMOTE done, the tenant
  // rule), or null.
  const PoolCopy* visible(uint64_t key, uint16_t tenant, double now_s) const;
  // The same, counting a refusal when a copy is there but may not be read.
  const PoolCopy* readable(uint64_t key, uint16_t tenant, double now_s);
  const PoolCopy* find(uint64_t key) const { return copies_.find(key); }
  // `member` holds the copy of `key` (found by readable()): counted as found, and as a
  // cross-replica hit when another replica stored it.
  void hold(uint64_t key, uint32_t member);
  // `member` evicts a block of `key` with no copy of its own: true with the copy it now holds
  // when one that `tenant` may read is stored; false when it may keep none (`*refused`: a copy is
  // there, unwritten or another tenant's) or must store one (`*refused` false).
  const PoolCopy* hold_on_eviction(uint64_t key, uint16_t tenant, uint32_t member, double now_s,
                                   bool* refused);
  // `member` stores a new copy of `key` in a slot taken from store() (the caller checked that
  // the pool is not full); its DEMOTE is on its way.
  const PoolCopy& store_copy(uint64_t key, kv::Format format, uint16_t tenant, bool shareable,
                             uint32_t member);
  // The DEMOTE of `key` is done at `done_s`; or the device refused it (its index set is full):
  // the copy is gone (only its storer held it, since nobody may hold an unwritten copy).
  void written(uint64_t key, double done_s);
  void refused(uint64_t key);
  // `member` lets its copy of `key` go: true when it was the last holder (the caller sends the
  // one FREE; the slot is back in the pool).
  bool release(uint64_t key, uint32_t member);
  // A holder's block of `key` became tier-only: it joins the reclaim order (the latest holder's
  // turn counts).
  void queue_for_reclaim(uint64_t key);
  // Frees the slot of the copy tier-only longest that no holder needs; every holder but
  // `member` forgets it. Returns the copy as it was, with its key (the caller, if it holds it,
  // forgets its block, and sends the one FREE), or false when none can go.
  bool reclaim(uint32_t member, uint64_t* key, PoolCopy* copy);

  // Whether an evicting block of `key` and `tenant` may keep no copy at `now_s`: the key is
  // stored, but unwritten or another tenant's (what hold_on_eviction() refuses, uncounted).
  bool refuses(uint64_t key, uint16_t tenant, double now_s) const {
    return copies_.find(key) && !visible(key, tenant, now_s);
  }
  // Copies `member` holds (for the check that a replica's books and the pool agree; O(copies)).
  uint64_t held_by(uint32_t member) const;

  const PoolStats& stats() const { return stats_; }
  uint32_t members() const { return static_cast<uint32_t>(members_.size()); }

 private:
  static uint64_t bit(uint32_t member) { return uint64_t{1} << member; }
  void note_used() { stats_.peak_used = std::max(stats_.peak_used, store_.used()); }

  TierStore store_;
  KeyMap<PoolCopy> copies_;
  std::vector<PoolMemberIF*> members_;
  PoolStats stats_;
};

}  // namespace kvtier
