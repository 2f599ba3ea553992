#pragma once
// The host's books about blocks: one entry per content key it knows (HostBlockTable), the
// policy state each carries (persistent or not), the replacement policy that ranks the idle
// ones, the write-once ledger of their moves and the reference string the offline-optimal bound
// reads. These are the facts; what happens to a block (pinned, evicted, demoted, freed) is
// BlockLifecycle's (tlm/host/block_lifecycle.h), which keeps the books through this class.
#include <cstdint>
#include <memory>
#include <optional>

#include "tlm/host/host_blocks.h"
#include "tlm/host/host_config.h"
#include "tlm/host/host_stats.h"
#include "tlm/host/policy/policy.h"
#include "tlm/host/policy_sync.h"
#include "tlm/host/reference_record.h"
#include "tlm/kv/block.h"

namespace kvtier {

class BlockBooks {
 public:
  // `budget_blocks`: the HBM budget the offline-optimal bound is computed at; `stats` counts the
  // distinct blocks created.
  BlockBooks(const HostConfig& config, uint64_t budget_blocks, BlockBookStats& stats);

  // The block of `key`, created on its first reference (its identity from the rest, its policy
  // state taken over from one touched before it existed); a second session referencing it makes
  // it shared (never freed as one session's private block).
  HostBlock& keyed(uint64_t key, uint64_t session, uint64_t position, uint32_t group, uint64_t pk,
                   uint32_t tenant);
  // One reference to `b` by `tenant` at `now_s`: its policy state and the replacement policy
  // see it (`counted`: a use the reuse counters count; `continues`: the session is expected to
  // return). The caller notes the changed word for the policy plane.
  void reference(HostBlock& b, uint32_t tenant, double now_s, bool continues, bool counted);
  // Drops `b` from the books (its policy state with it); `b` is invalid afterwards.
  void forget(HostBlock& b) {
    policy_states_.freed(b);
    table_.erase(b.id.key);
  }

  HostBlockTable& table() { return table_; }
  const HostBlockTable& table() const { return table_; }
  HostBlock* find(uint64_t key) { return table_.find(key); }
  const HostBlock* find(uint64_t key) const { return table_.find(key); }
  HostBlock& at(uint64_t key) { return table_.at(key); }
  BlockPolicyStates& policy_states() { return policy_states_; }
  const BlockPolicyStates& policy_states() const { return policy_states_; }
  ReplacementPolicy& policy() { return *policy_; }
  const ReplacementPolicy& policy() const { return *policy_; }
  kv::WriteOnceLedger& ledger() { return ledger_; }
  const kv::WriteOnceLedger& ledger() const { return ledger_; }
  ReferenceRecord& references() { return references_; }
  const ReferenceRecord& references() const { return references_; }
  // Blocks held now and at most (every block with state), for kvtier bench's memory per block.
  // After release_table(), the blocks held when it was called.
  uint64_t tracked() const { return tracked_at_release_.value_or(table_.size()); }
  uint64_t peak_tracked() const { return peak_tracked_; }
  // After the run's last step, for a command that only reports what the run did: frees the
  // blocks' records and their index (GiB on a per-layer trace), so that the offline bound,
  // computed after the run, lays its arrays on pages the process already has instead of fresh
  // ones (on a virtual machine that returns freed memory to its host, a fresh page costs several
  // times a reused one: docs/model.md, "Simulation cost"). No block is found afterwards, and the
  // host must not run again.
  void release_table() {
    tracked_at_release_ = table_.size();
    table_ = HostBlockTable();
  }

 private:
  BlockBookStats& stats_;
  const bool restores_from_device_;  // host.persistent_policy = device
  HostBlockTable table_;
  uint64_t peak_tracked_ = 0;
  std::optional<uint64_t> tracked_at_release_;  // set by release_table()
  BlockPolicyStates policy_states_;             // after table_
  std::unique_ptr<ReplacementPolicy> policy_;   // after policy_states_
  kv::WriteOnceLedger ledger_;
  ReferenceRecord references_;  // for the offline-optimal bound
};

}  // namespace kvtier
