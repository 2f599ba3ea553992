#pragma once
// What happens to one block between the host's decisions about requests: it is pinned and let
// go, evicted from HBM to make room (demoted when it has no tier copy, discarded when it has),
// re-quantised in the tier, reclaimed when the tier fills, freed when its session is over; and
// what each of its commands' completions means for it. The commands go down the command path
// (host.dma) with the policy plane's updates beside them; every transfer's payload is reported
// to SUSTAINABILITY when it is decided.
//
// The control plane decides which blocks a request reads and grows into (admission, growth,
// release); streamed residency decides which blocks of the decode set live in the tier. Both
// act on blocks only through this part, which keeps the books (BlockBooks), the HBM slots and
// the tier's slots consistent with each other.
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "tlm/common/trace_event_log.h"
#include "tlm/constraints/sustainability.h"
#include "tlm/host/block_books.h"
#include "tlm/host/command_path.h"
#include "tlm/host/hbm_slots.h"
#include "tlm/host/host_blocks.h"
#include "tlm/host/host_config.h"
#include "tlm/host/host_stats.h"
#include "tlm/host/policy_plane.h"
#include "tlm/host/streamed_residency_books.h"
#include "tlm/host/tier_store.h"
#include "tlm/pool/tier_pool.h"

namespace kvtier {

class BlockLifecycle final : public StreamingHostIF, public PoolMemberIF, private CommandOutcomes {
 public:
  // `mmio`: where descriptors and doorbells go (host.dma = device); `tier_blocks`: the tier's
  // capacity in blocks; `staging_slots`: HBM slots streamed residency holds for staging now
  // (neither free nor pinned by a block).
  BlockLifecycle(const HostConfig& config, const KvGeometry& geometry, BlockBooks& books,
                 HbmSlots& slots, HostStats& stats, uint64_t tier_blocks,
                 tlm::tlm_initiator_socket<>& mmio, uint32_t ring_entries, double cycle_s,
                 std::function<uint64_t()> staging_slots);

  // One reference to `b` (BlockBooks::reference); the policy plane compares its word next sync.
  void reference(HostBlock& b, uint32_t tenant, double now_s, bool continues, bool counted) {
    books_.reference(b, tenant, now_s, continues, counted);
    policy_plane_.note(b);
  }
  // ---- Pins: a pinned block stays in HBM (or, streamed, in the tier for its reader) ----
  // `how`: what the pin is to the offline bound when it starts holding the block in HBM: a
  // Read of content made before, or a Produce (prefill computes the block as it takes its slot).
  void pin(HostBlock& b, kv::ReferenceKind how = kv::ReferenceKind::Read);
  void unpin(HostBlock& b, double now_s);
  // The offline bound's held blocks (kv/offline_optimal.h) are the run's pinned ones: each change
  // of pinned, in HBM and not streamed is recorded, as a holding reference or a Release.
  void note_held(HostBlock& b) override { note_held(b, kv::ReferenceKind::Read); }
  void note_held(HostBlock& b, kv::ReferenceKind how);
  void note_streamed_read(const HostBlock& b) override {
    books_.references().record(b.id.key, kv::ReferenceKind::Read, false);
  }
  // Before reading a block's ready time: a deferrable promotion of it still in flight (a
  // prefetch) is waited for from `now_s`.
  void settle(HostBlock& b, double now_s) {
    if (b.mech.in_flight) commands_.path().settle(b.id.key, now_s);
  }

  // ---- Residency (StreamingHostIF: what streamed residency asks too) ----
  // HBM slots free now or held by idle blocks.
  uint64_t available_slots() const override;
  // Evicts idle blocks until `slots` are free; returns when the freed slots are usable.
  double make_room(uint64_t slots, double now_s) override;
  void integrate(double now_s) override { slots_.integrate(now_s); }
  bool move_to_tier(HostBlock& b, double now_s) override;
  bool tier_refuses(const HostBlock& b, double now_s) const override {
    return pool_.pool && !b.mech.tier_valid && pool_.pool->refuses(b.id.key, b.owner_tenant, now_s);
  }
  // `b` takes a free HBM slot and is promoted from its tier copy: due `deadline_s` at priority
  // `prio` (`deferrable`: nothing reads it before its request is admitted).
  // `chain`: the resuming sequence's chain (host.decision = device: the device issues it).
  void promote(HostBlock& b, double deadline_s, uint16_t prio, bool deferrable, double now_s,
               ChainRef chain = {});
  // The conversation is over: its own blocks (listed in `keys`) are dead. Shared prefixes, and
  // blocks still pinned or moving, stay.
  void free_session_blocks(uint64_t session, const std::vector<uint64_t>& keys, double now_s);

  // ---- Commands ----
  cmdset::Descriptor descriptor(cmdset::Opcode op, const HostBlock& b) const override;
  void enqueue(const cmdset::Descriptor& d, cmdset::Opcode op, uint64_t key, double now_s,
               ChainRef chain = {}) override;
  // The same for a command about `b`, whose outcome finds `b` by its record.
  void enqueue(const cmdset::Descriptor& d, cmdset::Opcode op, const HostBlock& b, double now_s,
               ChainRef chain = {});
  // Writes the queued descriptors (with the policy plane's updates) and rings the doorbell at
  // `at_s`; completions come back before it returns (loosely timed: their times lie ahead).
  void flush(double at_s) override;
  uint64_t stored_bytes(kv::Format format) const override { return tier_->stored_bytes(format); }

  // ---- A tier shared by several replicas (tier.shared; tlm/pool/tier_pool.h) ----
  // This replica's blocks keep their tier copies in `pool` from now on (before the run).
  void join_pool(TierPool& pool);
  bool pooled() const { return pool_.pool != nullptr; }
  // A block the admission reads with no copy of its own takes the pool's copy that `tenant`
  // may read, if one is there; true when it did.
  bool attach_pool_copy(HostBlock& b, uint16_t tenant, double now_s);
  // Whether the pool holds a copy of `key` that `tenant` may read at `now_s` (no pool: false).
  bool pool_serves(uint64_t key, uint16_t tenant, double now_s) const {
    return pool_.pool && pool_.pool->visible(key, tenant, now_s);
  }
  // With a pool: what its books and the pool disagree on (every tier-valid block holds the pool's
  // copy of its key, in the same slot, and the pool counts no other copy as this replica's);
  // empty when they agree or there is no pool. O(blocks + copies), for tests and checks.
  std::string verify_pool_holdings() const;
  // PoolMemberIF: what the pool asks a holder when it reclaims a copy.
  bool needs_copy(uint64_t key) const override;
  void copy_reclaimed(uint64_t key) override;

  CommandPaths& commands() { return commands_; }
  PolicyPlane& policy_plane() { return policy_plane_; }
  const TierStore& tier() const { return *tier_; }
  // SUSTAINABILITY is fed from here: every transfer's payload at the time it is decided.
  void report_demand_to(SustainabilityConstraint& sustainability) {
    sustainability_ = &sustainability;
  }
  // Prefetch promotions are drawn on `track` of `log` when their completion comes.
  void set_trace(TraceEventLog* log, TraceEventLog::Track track) {
    trace_ = log;
    prefetch_track_ = track;
  }

 private:
  // What the command path reports (CommandOutcomes).
  void promoted(const Command& c, double usable_s, double looked_up_s) override;
  void demoted(const Command& c, double done_s) override;
  void demotion_refused(const Command& c) override;
  void recompressed(const Command& c) override;
  void failed(const Command& c, cmdset::Status status) override;
  // The block a command's outcome is about: by the command's record while that still holds the
  // key (a promotion or demotion is in flight, so its block is never forgotten meanwhile), else
  // by the key (throws std::out_of_range when the block is gone).
  HostBlock& block_of(const Command& c);
  // The DEMOTE of a block leaving HBM to make room, due now.
  cmdset::Descriptor room_demotion(const HostBlock& b, double now_s) const;
  // Frees the tier copy of the tier-only block that left HBM longest ago; false if none can go.
  bool reclaim_tier_slot(double now_s);
  // Drops a block from the books: FREE of its tier copy (if any, and with a pool if it was the
  // copy's last holder), ledger, policy state, entry.
  void forget(HostBlock& b, double now_s);
  // A block leaving HBM with no copy of its own, in a pool: it holds the copy another replica
  // stored (Held), may keep none (Refused: that copy is unwritten or another tenant's), or must
  // store one (Absent).
  enum class PoolHold { Held, Refused, Absent };
  PoolHold hold_pool_copy(HostBlock& b, double now_s);
  // A new tier copy's slot: the private tier's, or a copy entered in the pool.
  void take_tier_slot(HostBlock& b);
  // `b` is tier-only now: it joins the tier's (or the pool's) reclaim order.
  void queue_tier_only(HostBlock& b);
  void demand(DemandDirection d, double t_s, double bytes) {
    if (sustainability_) sustainability_->demand(d, t_s, bytes);
  }

  const KvGeometry& geometry_;
  BlockBooks& books_;
  HbmSlots& slots_;
  BlockMoveStats& stats_;
  StreamedResidencyStats& streaming_stats_;  // a streamed block's promotion latency
  // Tier slots, the reclaim order, the copies' formats: a private tier's, given up on joining a
  // pool (its free list is a word per tier block: 27 MB a replica on the 16-replica pool preset).
  std::unique_ptr<TierStore> own_tier_;
  TierStore* tier_;  // own_tier_, or the pool's
  struct PoolSeat {
    TierPool* pool = nullptr;  // tier.shared: the pool, and this replica's member number in it
    uint32_t member = 0;
  } pool_;
  std::function<uint64_t()> staging_slots_;
  // The command path (host.dma), its CPU and queues; the paths report back here.
  CommandPaths commands_;
  // The policy plane: every command path but host copies keeps an index whose words it follows.
  PolicyPlane policy_plane_;
  // When the demotions posted so far are done (the slots they free usable).
  double last_demotion_done_s_ = 0.0;
  SustainabilityConstraint* sustainability_ = nullptr;
  TraceEventLog* trace_ = nullptr;
  TraceEventLog::Track prefetch_track_;
};

}  // namespace kvtier
