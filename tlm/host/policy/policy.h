#pragma once
// Replacement policy interface. The control plane tells the policy which resident blocks are
// evictable (idle: resident and not read by the decode set) and asks it for a victim when it
// needs room; pinned blocks are never offered.
//
// A policy's per-block state (reuse score, counts, recency, QoS) lives in the kv::PolicyStore,
// keyed by block identity, not inside the policy: the store decides whether that state survives
// eviction and re-admission (spec §M.2.3, claim C4), and the policy reads it from there. The
// control plane reports every reference with on_reference(), before it pins the block.
//
// Implementations, one file pair each: lru.h, lfu, ema, priority, admission (docs/policies.md
// defines each precisely). The same objects drive `kvtier cache-curve`.
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "tlm/common/config.h"
#include "tlm/kv/block.h"

namespace kvtier {

class ReplacementPolicy {
 public:
  virtual ~ReplacementPolicy() = default;
  virtual std::string name() const = 0;
  // `key` is referenced at `now_s` (a prompt names it, or decode fills it). `state` is its entry
  // in the policy store (fresh after an eviction unless the store is persistent); the policy
  // updates its score there. Called while the block may still be evictable.
  virtual void on_reference(uint64_t key, double now_s, kv::BlockPolicy& state) {
    (void)key, (void)now_s, (void)state;
  }
  // A block whose state the host had dropped takes back a reuse score of `score` from where it
  // persisted (host.persistent_policy = device: its device index entry's word) before its next
  // reference at `now_s`: `state` is fresh. The default keeps the score alone.
  virtual void restore(kv::BlockPolicy& state, double score, double now_s) {
    (void)now_s;
    state.reuse_score = score;
  }
  // `key` is resident and no request pins it any more: it may be evicted from now on.
  virtual void on_idle(uint64_t key, double now_s) = 0;
  // `key` is pinned again by a request: not evictable until it goes idle.
  virtual void on_pinned(uint64_t key) = 0;
  // `key` left HBM (evicted or freed).
  virtual void on_removed(uint64_t key) = 0;
  // The evictable block to evict next, if any.
  virtual std::optional<uint64_t> victim() = 0;
  virtual size_t evictable() const = 0;

  // Held forms of the three hooks and of victim(), for a caller that keeps a record per block
  // (the control plane). `owner` is the caller's number for the block's record and `slot` a word
  // it keeps in that record for the policy, kNoSlot until the policy first sets it; the policy
  // may keep its own per-block index there, so that a hook is an array access instead of a look-up
  // of the key, and victim_owner() names the victim's record, so that the caller needs no look-up
  // either. A policy instance is driven through one form only (the control plane uses these,
  // `kvtier cache-curve` the key forms). The defaults forward to the key forms; a policy that
  // keeps slots says so with keeps_slots().
  static constexpr uint32_t kNoSlot = UINT32_MAX;
  virtual bool keeps_slots() const { return false; }
  virtual void idle_held(uint64_t key, uint32_t owner, uint32_t& slot, double now_s) {
    (void)owner, (void)slot;
    on_idle(key, now_s);
  }
  virtual void pinned_held(uint64_t key, uint32_t& slot) {
    (void)slot;
    on_pinned(key);
  }
  virtual void removed_held(uint64_t key, uint32_t& slot) {
    (void)slot;
    on_removed(key);
  }
  // With keeps_slots(): the owner passed with the victim's idle_held, if there is a victim.
  virtual std::optional<uint32_t> victim_owner() { return std::nullopt; }
};

// Parameters of every policy; each policy reads the ones it needs (platform keys host.*).
struct PolicyParams {
  std::string name = "lru";
  double ema_alpha = 0.01;                // ema: weight of the newest reference, (0, 1]
  EmaClock ema_clock = EmaClock::Second;  // ema: decay per second or per reference (all blocks)
  double admission_horizon_s = 30.0;      // admission: H, s
  double admission_lambda_s = 60.0;       // admission: residency seconds one avoided move is worth
  std::vector<uint32_t> tenant_qos;       // priority, admission: QoS class per tenant (missing: 0)
};

// The policy names make_replacement_policy accepts, in documentation order, then those added
// with register_replacement_policy in the order they were added.
const std::vector<std::string>& replacement_policy_names();

// A policy built outside this tree (examples/custom_policy): register it under `name` before
// the platform is loaded, and host.policy = NAME, the control plane and cache-curve's replay
// accept it like a built-in one. Throws std::invalid_argument for a name already taken.
using ReplacementPolicyFactory =
    std::function<std::unique_ptr<ReplacementPolicy>(const PolicyParams&, kv::PolicyStore&)>;
void register_replacement_policy(const std::string& name, ReplacementPolicyFactory factory);

// Throws std::invalid_argument for an unknown policy name or a parameter out of range. `store`
// holds the per-block state the policy reads and writes; it must outlive the policy.
std::unique_ptr<ReplacementPolicy> make_replacement_policy(const PolicyParams& params,
                                                           kv::PolicyStore& store);

// Parses "q0,q1,..." (QoS class per tenant, 0..255). Throws std::invalid_argument.
std::vector<uint32_t> parse_tenant_qos(const std::string& text);

// The policy parameters of a [host] section. Throws std::invalid_argument naming the key.
PolicyParams policy_params(const HostConfig& host);

}  // namespace kvtier
