#pragma once
// The host's half of the policy plane (host.policy_sync, docs/model.md "Policy updates"): which
// policy word each block's device index entry should hold, which blocks' words may have
// changed, and, before each batch of commands is posted, the words its PROMOTEs and DEMOTEs
// carry and the UPDATE_POLICY descriptors the rest need. It also counts the promotions the
// device acts on with a word other than the host's (stale at posting, or raced by a change
// made before the engine looked the block up). What the word holds is policy_sync.h's; when a
// word may have changed is the control plane's to say (note()).
#include <cstdint>
#include <deque>
#include <functional>
#include <unordered_map>
#include <utility>
#include <vector>

#include "tlm/host/command_path.h"
#include "tlm/host/host_blocks.h"
#include "tlm/host/host_config.h"
#include "tlm/host/policy_sync.h"

namespace kvtier {

class PolicyPlane {
 public:
  // `tracked`: the device keeps commands' outcomes in an index (host.dma = device); `update`
  // builds a block's UPDATE_POLICY descriptor (its word is filled in here).
  using UpdateDescriptor = std::function<cmdset::Descriptor(const HostBlock&)>;
  // `entry_keeps_level`: the entry's reuse level is where the block's policy state persists
  // (host.persistent_policy = device).
  PolicyPlane(PolicySync sync, bool tracked, bool entry_keeps_level, HostBlockTable& blocks,
              PolicySyncStats& stats, UpdateDescriptor update)
      : sync_(sync),
        tracked_(tracked),
        entry_keeps_level_(entry_keeps_level),
        blocks_(blocks),
        stats_(stats),
        update_(std::move(update)) {}

  // Bits of policy state a device index entry holds (ctrl.policy_bits; 0: none, nothing to keep
  // current). Set by the platform before the run.
  void set_entry_bits(uint32_t bits) { entry_bits_ = bits; }
  // Whether the words are followed: whenever the device keeps one (a stale read is counted
  // with host.policy_sync = none too) ...
  bool tracking() const { return tracked_ && entry_bits_ > 0; }
  // ... and whether they are sent (not with none).
  bool syncing() const { return tracking() && sync_ != PolicySync::None; }
  bool per_step() const { return sync_ == PolicySync::PerStep; }

  static BlockIntent intent_of(const HostBlock& b);
  uint8_t word_of(const HostBlock& b) const {
    // host.persistent_policy = device: a block whose state the host dropped keeps the reuse
    // level its entry holds; only the intent is the host's to change.
    if (!b.has_policy && entry_keeps_level_)
      return policy_word_of_level(intent_of(b), b.device_level, entry_bits_);
    return policy_word(intent_of(b), b.has_policy ? b.policy.reuse_score : 0.0, entry_bits_);
  }
  // The block's intent or reuse score may have changed: its word is compared at the next sync.
  void note(HostBlock& b) {
    if ((b.policy_marks & kNoted) || !tracking()) return;
    b.policy_marks |= kNoted;
    noted_.push_back({b.record, b.id.key});
  }
  // host.policy_sync = per_step: the block's word is written at the next sync, changed or not.
  void force(const HostBlock& b) { forced_.push_back({b.record, b.id.key}); }
  // Blocks wait to be looked at.
  bool pending() const { return !noted_.empty() || !forced_.empty(); }
  // Promotion `p` of `b` was looked up by the engine at `looked_up_s`, after it was posted: a
  // change of the block's word before then races it (counted at the sync that sees it).
  void looked_up_later(const HostBlock& b, const Command& p, double looked_up_s);
  // Before `batch` is posted at `at_s`: the words its DEMOTEs and PROMOTEs write, and an
  // UPDATE_POLICY for every other noted block whose entry holds another word than the host's
  // (with per_step also for the forced ones), each just ahead of the batch's first command
  // about its block, else after the batch.
  void sync(std::vector<Command>& batch, double at_s);

 private:
  static constexpr uint8_t kNoted = 1;    // in noted_: its word may have changed
  static constexpr uint8_t kPosted = 2;   // an update of it is in the batch being built
  static constexpr uint8_t kCarried = 4;  // its PROMOTE or DEMOTE in that batch carries it
  struct NotedBlock {
    uint32_t record = 0;
    uint64_t key = 0;
  };
  // A promotion whose look-up lies ahead of the host's time when its completion came back (the
  // descriptor waits in the ring). By look-up time (the engine looks commands up in ring
  // order); at most one per block.
  struct LookupAhead {
    double looked_up_s = 0.0;
    uint64_t key = 0;
    uint8_t word = 0;     // the host's word when the promotion was posted
    bool current = true;  // ... and the promotion carried it (else counted stale already)
  };
  // The block `c` is about, or null when it is gone.
  HostBlock* find_block(const Command& c) const {
    return find_host_block(blocks_, c.record, c.key);
  }
  // Looks at one noted (or forced) block: an update into `updates`, or kept noted in `kept`.
  void consider(const NotedBlock& n, bool forced, double at_s, std::vector<Command>& updates,
                std::vector<NotedBlock>& kept);

  const PolicySync sync_;
  const bool tracked_;
  const bool entry_keeps_level_;
  HostBlockTable& blocks_;
  PolicySyncStats& stats_;
  const UpdateDescriptor update_;
  uint32_t entry_bits_ = 16;
  std::vector<NotedBlock> noted_, forced_;
  // sync()'s working sets, kept from call to call so that their buffers are not allocated
  // again at every flush (each is cleared where sync starts using it).
  std::vector<HostBlock*> carried_;
  std::vector<Command> updates_, merged_;
  std::vector<NotedBlock> kept_;
  std::unordered_map<uint32_t, LookupAhead> lookups_ahead_;      // by block record
  std::deque<std::pair<double, uint32_t>> lookups_ahead_order_;  // (look-up time, record)
};

}  // namespace kvtier
