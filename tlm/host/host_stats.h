#pragma once
// The host control plane's counters, and how they are written into stats.json: each figure
// with its unit and meaning (the `blocks`, `prefetch`, `host_cpu` and `representation` groups
// and the control plane's top-level keys).
#include <cstdint>
#include <vector>

#include "tlm/common/stat_group.h"
#include "tlm/host/hbm_slots.h"
#include "tlm/host/host_config.h"
#include "tlm/host/kv_cache_if.h"
#include "tlm/host/policy_sync.h"
#include "tlm/host/prefetcher.h"
#include "tlm/host/reference_record.h"
#include "tlm/kv/block.h"

namespace kvtier {

struct ControllerStats;

// Each part of the control plane counts into a struct of its own (DRAMSys's controller parts
// each keep their own statistics): the part holds a reference to that struct alone, and
// HostStats is their sum, the one view stats.json is written from (HostStatsReport), with every
// figure's old name.

// PromptAdmission: what a prompt's block references found.
struct AdmissionStats {
  uint64_t references = 0;  // block references by admitted requests' prompts
  uint64_t hbm_hits = 0;    // found resident in HBM
  uint64_t tier_hits = 0;   // found in the tier and promoted
  uint64_t misses = 0;      // nowhere: recomputed by prefill
};

// BlockLifecycle: what happened to blocks: their moves across the boundary, drops, frees, and
// the shared tier's part in them.
struct BlockMoveStats {
  uint64_t promotions = 0;
  uint64_t demotions = 0;
  uint64_t discards = 0;  // clean evictions of blocks with a valid tier copy
  uint64_t frees = 0;     // dead blocks released
  uint64_t dropped_no_tier_space = 0;
  uint64_t tier_evictions =
      0;  // tier-only blocks FREEd, least recently evicted first, to make tier room
  uint64_t dropped_index_full = 0;
  // A tier shared by several replicas (tier.shared): blocks found in the pool that another
  // replica stored, evictions that held another replica's copy instead of storing one, and
  // evictions that kept no copy (the pool's copy of the key unwritten or another tenant's).
  uint64_t pool_foreign_hits = 0;
  uint64_t pool_held_again = 0;
  uint64_t pool_no_copy = 0;
  // Representation: payload bytes that actually crossed the boundary (compressed copies count
  // their stored bytes), and the RECOMPRESS policy's tier rewrites.
  uint64_t promoted_bytes = 0, demoted_bytes = 0;
  uint64_t recompressions = 0, recompressed_bytes = 0;
  // Promotion latency per promotion, from the control plane's decision to the block being usable:
  // admission, prefetch and restored promotions one by one (a streamed block's per-step re-read
  // into staging is counted in StreamedResidencyStats).
  std::vector<double> promotion_latency_s;
  double promotion_latency_max_s = 0.0;
};

// The command path (descriptor ring or host copies) and its queues: commands, doorbells and the
// host CPU they cost (C3), and where a promotion's latency went.
struct CommandStats {
  uint64_t descriptors = 0;
  uint64_t doorbells = 0;
  double host_cpu_kv_s = 0.0;  // host CPU time spent building and posting descriptors (C3)
  double promotion_queue_s = 0.0, promotion_lookup_s = 0.0, promotion_transfer_s = 0.0;
  // C3: host CPU time by activity (host_cpu_kv_s is their sum).
  double cpu_descriptor_s = 0.0, cpu_doorbell_s = 0.0, cpu_completion_s = 0.0,
         cpu_copy_issue_s = 0.0;
  uint64_t host_copies = 0;  // host.dma = host: copies the host issued itself
  // C3: the queues that carried commands (host.submission_queues) and how completions were
  // noticed (host.completion): interrupts raised, completion-queue polls, and their CPU time
  // (in host_cpu_kv_s too).
  uint64_t command_queues = 0;
  uint64_t interrupts = 0, completion_polls = 0;
  double cpu_interrupt_s = 0.0, cpu_poll_s = 0.0;
  // C1, host.decision = device: CHAIN descriptors that handed a sequence's chain to the device,
  // and the commands of chains the device then issued itself (promotions, and staging discards),
  // each a descriptor and a completion the host did not post or handle.
  uint64_t chain_descriptors = 0;
  uint64_t device_issued = 0, device_issued_promotions = 0;
  uint64_t step_clocks = 0;  // the step clock's writes (one per step with a streamed chain held)
};

// BlockBooks: policy state.
struct BlockBookStats {
  // host.persistent_policy = device: blocks whose policy state the host took back from their
  // device index entry's word on re-admission.
  uint64_t policy_states_restored = 0;
};

// The control plane's counters: every part's, and the serving loop's own two. The prefetch
// counters are the prefetcher's (tlm/host/prefetcher.h), the streamed residency's its books'.
struct HostStats : PrefetchStats,
                   StreamedResidencyStats,
                   HbmOccupancyStats,
                   PolicySyncStats,
                   AdmissionStats,
                   BlockMoveStats,
                   CommandStats,
                   BlockBookStats {
  uint64_t sessions_ended = 0;  // sessions judged over (host.session_end) whose blocks were freed
  // Serving dynamics: preemptions (the streamed residency's counts are StreamedResidencyStats).
  uint64_t preemptions = 0;
};

// A run's control-plane figures as stats.json reports them. Holds references: made when the
// report is written (HostControlPlane::stats_report()), not kept.
class HostStatsReport {
 public:
  struct Context {
    const HostConfig& config;
    uint64_t block_bytes = 0;  // payload of one block
    uint32_t layer_groups = 0;
    uint64_t budget_blocks = 0;                   // the HBM KV budget in blocks
    const kv::WriteOnceLedger* ledger = nullptr;  // demotions per block (spec §M.1)
    bool pooled = false;                          // the tier is shared (tier.shared)
    const ReferenceRecord* references = nullptr;  // U: the distinct keys; the blocks created
  };
  HostStatsReport(const HostStats& stats, const Context& context) : h_(stats), c_(context) {}
  // Into the run's top-level group: the reference outcomes (tier_hit_rate, miss_rate) ...
  void declare_reference_stats(StatGroup& run) const;
  // ... and the totals (host_cpu_kv_s, promotion_latency_max_s).
  void declare_total_stats(StatGroup& run) const;
  void declare_block_stats(StatGroup& blocks) const;
  // `representation` also takes the engine's counts.
  void declare_representation_stats(StatGroup& representation, const ControllerStats& engine) const;
  // The prefetcher's part of `prefetch` (the engine's transfer order is the controller's).
  void declare_prefetch_stats(StatGroup& prefetch) const;
  // `end_s`: the run's simulated time (the scheduler's last token).
  void declare_cpu_stats(StatGroup& host_cpu, double end_s) const;

 private:
  const HostStats& h_;
  const Context c_;
};

}  // namespace kvtier
