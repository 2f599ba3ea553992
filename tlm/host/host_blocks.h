#pragma once
// The host's books of blocks, shared by the parts of the host control plane: one record per
// block the host knows (its identity, mechanism state, HBM slot, policy state and the policy
// plane's marks), the table of them by key, the policy store the replacement policy reads
// through them, and what the host keeps of each running request.
#include <cstdint>
#include <vector>

#include "tlm/common/key_map.h"
#include "tlm/host/policy/policy.h"
#include "tlm/host/policy_sync.h"
#include "tlm/kv/block.h"
#include "tlm/kv/reference_log.h"
#include "workloads/request.h"

namespace kvtier {

// The KV region the host's books cover: a block's payload, the HBM KV budget in block slots,
// blocks per token position, and where the region starts in HBM.
struct KvGeometry {
  uint64_t block_bytes = 0;
  uint64_t budget_blocks = 0;
  uint32_t layer_groups = 0;  // 1 when a block spans all layers
  uint64_t hbm_kv_base = 0;
  // The key of layer group `group` of the position whose key is `position_key` (the position's
  // own key when a block spans all layers).
  uint64_t group_key(uint64_t position_key, uint32_t group) const {
    return layer_groups == 1 ? position_key : workload::decode_block_key(position_key, group);
  }
};

struct HostBlock {
  kv::BlockIdentity id;
  kv::BlockMechanism mech;
  uint64_t hbm_slot = 0;
  // (The small fields side by side: tens of millions of blocks on a per-layer trace.)
  bool multi_session = false;      // referenced by more than one session: never freed as private
  bool has_policy = false;         // `policy` below holds its state
  uint16_t owner_tenant = 0;       // tenant that created it: owns its device index entry
  bool prefetched_unused = false;  // promoted by prefetch and not yet read by any request
  bool streamed_ahead = false;     // in staging since the step before (stream_ahead), not yet read
  // The policy word its device index entry holds as far as the host knows (written by its
  // DEMOTE, then by UPDATE_POLICY), and the policy plane's marks (kPolicyNoted, ...). Two
  // bytes the record's alignment left free.
  uint8_t sent_word = 0;
  uint8_t policy_marks = 0;
  // host.persistent_policy = device: the reuse level (reuse_level(), 0..63) its policy state had
  // when the host dropped the state at its eviction; the level its entry's word keeps (its DEMOTE
  // or an update writes it there) and the one the host takes back on re-admission.
  uint8_t device_level = 0;
  uint32_t record = 0;  // its record in blocks_ (by_record), for the policy's victim
  uint32_t policy_slot = ReplacementPolicy::kNoSlot;  // the policy's word (held hooks)
  // The offline bound's open hold of it (ReferenceRecord::kNoHold: none): pinned, in HBM and
  // not streamed, as BlockLifecycle::note_held last recorded (four bytes the alignment left).
  uint32_t bound_hold = kv::ReferenceLog::kNoHold;
  uint64_t tier_epoch = 0;   // which entry of the tier's reclaim order is current (TierStore)
  uint64_t streamed_by = 0;  // 1 + id of the running request that streams it (0: none)
  uint64_t issued_by = 0;    // the last admission that promoted it (admit(): each once)
  kv::WriteOnceLedger::Counts moves;  // its promotions and demotions this lifetime (ledger_)
  // Its policy state (spec §M.2.2), kept here rather than in a table of its own so that a
  // reference reaches it through the record it has found anyway (BlockPolicyStates).
  kv::BlockPolicy policy;
};
// Every block the host knows, by key. References to a HostBlock are held across insertions
// (admission collects a prompt's blocks before pinning them): the records stay put.
using HostBlockTable = StableKeyMap<HostBlock>;
// The block a command about record `record` of key `key` is about: by the record while that
// still holds the key (a promotion or demotion in flight keeps its block), else by the key;
// null when the block is gone.
inline HostBlock* find_host_block(HostBlockTable& blocks, uint32_t record, uint64_t key) {
  if (HostBlock* b = blocks.find_record(record); b && b->id.key == key) return b;
  return blocks.find(key);
}
// The policy store the replacement policy reads: a block's state lives in its HostBlock, with the
// same lifetime as in a table of its own (from the first reference to the eviction, unless
// persistent, or the FREE). A key the host holds no block for (only a policy from outside this
// tree could touch one) keeps its state in the base class's table until its block appears.
class BlockPolicyStates final : public kv::PolicyStore {
 public:
  // `keeps_level`: host.persistent_policy = device (the state is dropped at eviction, its reuse
  // level kept where the device's word keeps it).
  BlockPolicyStates(bool persistent, bool keeps_level, HostBlockTable& blocks)
      : PolicyStore(persistent), keeps_level_(keeps_level), blocks_(blocks) {}
  kv::BlockPolicy& touch(uint64_t key) override {
    if (HostBlock* b = blocks_.find(key)) return of(*b);
    return PolicyStore::touch(key);
  }
  const kv::BlockPolicy* find(uint64_t key) const override {
    if (const HostBlock* b = blocks_.find(key)) return b->has_policy ? &b->policy : nullptr;
    return PolicyStore::find(key);
  }
  void on_evict(uint64_t key) override {
    if (HostBlock* b = blocks_.find(key)) return evicted(*b);
    PolicyStore::on_evict(key);
  }
  void on_free(uint64_t key) override {
    if (HostBlock* b = blocks_.find(key)) return freed(*b);
    PolicyStore::on_free(key);
  }
  size_t size() const override { return in_blocks_ + PolicyStore::size(); }
  // The same for a block at hand, without a look-up.
  kv::BlockPolicy& of(HostBlock& b) {
    if (!b.has_policy) {
      b.has_policy = true;
      b.policy = kv::BlockPolicy{};
      ++in_blocks_;
    }
    return b.policy;
  }
  void evicted(HostBlock& b) {
    if (persistent()) return;
    if (keeps_level_ && b.has_policy) b.device_level = reuse_level(b.policy.reuse_score);
    freed(b);
  }
  void freed(HostBlock& b) {
    if (!b.has_policy) return;
    b.has_policy = false;
    b.policy = kv::BlockPolicy{};
    --in_blocks_;
  }
  // A new block takes over a state touched before it existed.
  void adopt(HostBlock& b) {
    if (PolicyStore::size() == 0) return;
    if (const kv::BlockPolicy* early = PolicyStore::find(b.id.key)) {
      of(b) = *early;
      PolicyStore::on_free(b.id.key);
    }
  }

 private:
  const bool keeps_level_;
  HostBlockTable& blocks_;
  size_t in_blocks_ = 0;  // blocks with a state
};
struct RunningRequest {
  uint64_t session = 0;
  uint32_t tenant = 0;
  std::vector<uint64_t> keys;  // keyed blocks the request pins, position-major
  // ... and their records (a pinned block is never forgotten, so these stay good while held).
  std::vector<HostBlock*> held;
  void hold(HostBlock& b) {
    keys.push_back(b.id.key);
    held.push_back(&b);
  }
  std::vector<uint64_t> private_ids;  // HBM slots of the partial tail block, one per layer group
  std::vector<uint64_t> prompt_pk;    // position key of each full prompt block
  std::vector<uint8_t>
      prompt_cached;  // ... 1 when admission found all its groups in HBM or the tier
  std::vector<uint32_t>
      uncached_before;      // prompt positions below p that prefill computes (prefix sum)
  uint64_t kv_tokens = 0;   // tokens of the context that have KV slots
  bool continues = false;   // not the session's last turn (scheduler intent for the policy)
  size_t spill_cursor = 0;  // next entry of `keys` spill() looks at
  std::vector<std::vector<uint64_t>> streamed;  // per layer group: blocks streamed every step
  // host.decision = device: the version of the streamed chain the device is to hold, raised
  // whenever `streamed` changes (the device is handed the chain again before it issues from it).
  uint64_t chain_version = 1;
};

// host.decision = device: the chain a command belongs to and the version of its membership;
// none (0) for a command the host issues itself.
struct ChainRef {
  uint64_t chain = 0;
  uint64_t version = 0;
};

// host.decision = device: the chains a running request `id` hands to the device (never 0): its
// streamed blocks, read back every step, and the promotions of its admission (a resuming
// sequence's prefix).
inline uint64_t streamed_chain(uint64_t id) { return 2 * id + 2; }
inline uint64_t admission_chain(uint64_t id) { return 2 * id + 3; }
inline bool is_streamed_chain(uint64_t chain) { return chain % 2 == 0; }

}  // namespace kvtier
