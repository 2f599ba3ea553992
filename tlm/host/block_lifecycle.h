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

namespace kvtier {

class BlockLifecycle final : public StreamingHostIF, private CommandOutcomes {
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
  void pin(HostBlock& b);
  void unpin(HostBlock& b, double now_s);
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
  // `b` takes a free HBM slot and is promoted from its tier copy: due `deadline_s` at priority
  // `prio` (`deferrable`: nothing reads it before its request is admitted).
  void promote(HostBlock& b, double deadline_s, uint16_t prio, bool deferrable, double now_s);
  // The conversation is over: its own blocks (listed in `keys`) are dead. Shared prefixes, and
  // blocks still pinned or moving, stay.
  void free_session_blocks(uint64_t session, const std::vector<uint64_t>& keys, double now_s);

  // ---- Commands ----
  cmdset::Descriptor descriptor(cmdset::Opcode op, const HostBlock& b) const override;
  void enqueue(const cmdset::Descriptor& d, cmdset::Opcode op, uint64_t key, double now_s) override;
  // The same for a command about `b`, whose outcome finds `b` by its record.
  void enqueue(const cmdset::Descriptor& d, cmdset::Opcode op, const HostBlock& b, double now_s);
  // Writes the queued descriptors (with the policy plane's updates) and rings the doorbell at
  // `at_s`; completions come back before it returns (loosely timed: their times lie ahead).
  void flush(double at_s) override;
  uint64_t stored_bytes(kv::Format format) const override { return tier_.stored_bytes(format); }

  CommandPaths& commands() { return commands_; }
  PolicyPlane& policy_plane() { return policy_plane_; }
  const TierStore& tier() const { return tier_; }
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
  // Drops a block from the books: FREE of its tier copy (if any), ledger, policy state, entry.
  void forget(HostBlock& b, double now_s);
  void demand(DemandDirection d, double t_s, double bytes) {
    if (sustainability_) sustainability_->demand(d, t_s, bytes);
  }

  const KvGeometry& geometry_;
  BlockBooks& books_;
  HbmSlots& slots_;
  HostStats& stats_;
  TierStore tier_;  // tier slots, the reclaim order, the copies' formats
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
