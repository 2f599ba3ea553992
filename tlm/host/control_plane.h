#pragma once
// The host KV control plane (spec §M.3): owns admission of blocks into the HBM KV budget,
// residency, replacement, the persistent policy store and the descriptors it sends the data
// plane. It speaks to the device only through 64 B descriptors and doorbells over the link and
// learns outcomes from completions the device writes into host memory.
//
// Residency is tracked with counters and per-block state touched only on events (admission,
// block fill, release, eviction), never by rescanning the decode set per step.
#include <cstdint>
#include <deque>
#include <vector>
#include <functional>
#include <string>
#include <memory>
#include <optional>
#include <systemc>
#include <tlm>
#include <tlm_utils/simple_initiator_socket.h>
#include <tlm_utils/simple_target_socket.h>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "tlm/common/config.h"
#include "tlm/common/key_map.h"
#include "tlm/common/stat_group.h"
#include "tlm/common/timeline.h"
#include "tlm/common/trace_event_log.h"
#include "tlm/constraints/sustainability.h"
#include "tlm/host/command_path.h"
#include "tlm/host/hbm_slots.h"
#include "tlm/host/tier_store.h"
#include "tlm/host/kv_cache_if.h"
#include "tlm/host/policy_sync.h"
#include "tlm/host/prefetcher.h"
#include "tlm/host/session_expiry.h"
#include "tlm/ctrl/kvdp_cmdset.h"
#include "tlm/host/policy/policy.h"
#include "tlm/kv/block.h"
#include "tlm/kv/offline_optimal.h"
#include "workloads/request.h"

namespace kvtier {

struct ControllerStats;

// The control plane's counters; the prefetch counters are the prefetcher's (tlm/host/prefetcher.h).
struct HostStats : PrefetchStats, StreamedResidencyStats, HbmOccupancyStats, PolicySyncStats {
  uint64_t references = 0;  // block references by admitted requests' prompts
  uint64_t hbm_hits = 0;    // found resident in HBM
  uint64_t tier_hits = 0;   // found in the tier and promoted
  uint64_t misses = 0;      // nowhere: recomputed by prefill
  uint64_t promotions = 0;
  uint64_t demotions = 0;
  uint64_t discards = 0;        // clean evictions of blocks with a valid tier copy
  uint64_t frees = 0;           // dead blocks released
  uint64_t sessions_ended = 0;  // sessions judged over (host.session_end) whose blocks were freed
  uint64_t dropped_no_tier_space = 0;
  uint64_t tier_evictions =
      0;  // tier-only blocks FREEd, least recently evicted first, to make tier room
  uint64_t dropped_index_full = 0;
  uint64_t descriptors = 0;
  uint64_t doorbells = 0;
  uint64_t unique_blocks = 0;  // distinct blocks the computation required (U / M_b)
  double host_cpu_kv_s = 0.0;  // host CPU time spent building and posting descriptors (C3)
  double promotion_queue_s = 0.0, promotion_lookup_s = 0.0, promotion_transfer_s = 0.0;
  double promotion_latency_max_s = 0.0;
  // C3: host CPU time by activity (host_cpu_kv_s is their sum).
  double cpu_descriptor_s = 0.0, cpu_doorbell_s = 0.0, cpu_completion_s = 0.0,
         cpu_copy_issue_s = 0.0;
  uint64_t host_copies = 0;  // host.dma = host: copies the host issued itself
  // Representation: payload bytes that actually crossed the boundary (compressed copies count
  // their stored bytes), and the RECOMPRESS policy's tier rewrites.
  uint64_t promoted_bytes = 0, demoted_bytes = 0;
  uint64_t recompressions = 0, recompressed_bytes = 0;
  // Serving dynamics: preemptions (the streamed residency's counts are StreamedResidencyStats).
  uint64_t preemptions = 0;
  // Promotion latency per promotion, from the control plane's decision to the block being usable:
  // admission, prefetch and restored promotions one by one (a streamed block's per-step re-read
  // into staging is counted in StreamedResidencyStats).
  std::vector<double> promotion_latency_s;
};

class HostControlPlane : public sc_core::sc_module,
                         public KvCacheIF,
                         public KvIntentIF,
                         public StreamedResidencyIF,
                         private CommandOutcomes,
                         private PrefetchTarget {
 public:
  tlm_utils::simple_initiator_socket<HostControlPlane> mmio_out{"mmio_out"};
  tlm_utils::simple_target_socket<HostControlPlane> completion_in{"completion_in"};

  // `block_bytes`: payload of one block; `budget_blocks`: HBM KV budget in blocks;
  // `layer_groups`: blocks per token position (1 when a block spans all layers);
  // `hbm_kv_base`: HBM address of the KV region; `tier_blocks`: tier capacity in blocks.
  HostControlPlane(sc_core::sc_module_name name, const HostConfig& config, uint32_t ring_entries,
                   uint64_t block_bytes, uint64_t budget_blocks, uint32_t layer_groups,
                   uint64_t hbm_kv_base, uint64_t tier_blocks, double cycle_s);

  // ---- Admission (on demand: only the prompt, never the output length) ----
  // Slots the prompt's KV occupies (every position, every layer group).
  uint64_t prompt_slots(const workload::Request& r) const override;
  // Slots a context of `tokens` tokens takes when all of it is resident: a slot per layer group
  // of every position it has begun.
  uint64_t context_slots(uint64_t tokens) const override;
  // Slots free now or held by idle blocks: what the decode set may still grow into.
  uint64_t available_slots() const override;
  // Whether the request's first `tokens` prompt tokens fit beside the running set now, leaving
  // `watermark` slots free.
  bool can_admit(const workload::Request& r, uint64_t tokens,
                 uint64_t watermark = 0) const override;
  // Pins the prompt's blocks found in HBM, promotes those found in the tier (layer-major issue
  // order, deadlines from `plan`), and notes the rest for prefill. No slot is taken for blocks
  // prefill computes until grow() reaches them.
  AdmitResult admit(const workload::Request& r, double now_s, const LoadPlan& plan) override;
  // ---- Growth: prefill chunks and decode tokens ----
  // Slots running request `id` needs so that `kv_tokens` tokens of its context have KV.
  uint64_t growth_slots(uint64_t id, uint64_t kv_tokens) const override;
  // How far prefill of request `id` reaches from `kv_tokens` when it may compute at most `budget`
  // tokens: positions admission found cached cost nothing. Never beyond `prompt_tokens`.
  uint64_t prefill_reach(uint64_t id, uint64_t kv_tokens, uint64_t budget, uint64_t prompt_tokens,
                         uint64_t* computed) const override;
  // Takes those slots (evicting idle blocks); a block that fills becomes a keyed block a later
  // turn can reuse. The caller has made sure growth_slots() <= available_slots().
  void grow(uint64_t id, uint64_t kv_tokens, double now_s) override;
  // ---- Preemption and release ----
  // The request leaves HBM's decode set: its blocks go idle (the policy demotes or discards them
  // when room is needed) and its partial last block is dropped (recomputed on resume).
  void preempt(uint64_t id, double now_s) override;
  // The request finished: its blocks go idle; once its session has ended (host.session_end) its
  // private blocks are freed.
  void release(uint64_t id, const workload::Request& r, double now_s) override;
  // ---- Streamed decode residency (host.decode_residency = streamed) ----
  bool streaming_possible() const {
    return config_.decode_residency == DecodeResidency::Streamed && groups_ >= 3;
  }
  // Moves one resident block of running request `id` to the tier (write-once: a block with a
  // valid tier copy is a clean discard); from now on every step streams it back. False: none can
  // go.
  bool spill(uint64_t id, double now_s) override;
  // Blocks of layer group g that the listed requests stream each step.
  uint64_t streamed_blocks(const std::vector<uint64_t>& ids, uint32_t g) const override;
  uint64_t streamed_blocks_total(uint64_t id) const override;
  // Whether running request `id` streams any block of layer group g (O(1)).
  bool streams_in_group(uint64_t id, uint32_t g) const override {
    auto it = running_.find(id);
    return it != running_.end() && !it->second.streamed.empty() && !it->second.streamed[g].empty();
  }
  // Staging slots held for streaming (counted as resident and against the budget).
  uint64_t staging_slots() const override { return staging_.size(); }
  // Holds exactly `slots` staging slots from now on (evicting idle blocks for more). False when
  // they cannot be had.
  bool set_staging(uint64_t slots, double now_s) override;
  // Promotes group g's streamed blocks of the listed requests into staging slots, posted at
  // `issue_s`, each with `deadline_s`; then, at `done_s` from stream_done(), discards them.
  StreamResult stream(const std::vector<uint64_t>& ids, uint32_t g, double issue_s,
                      double deadline_s);
  // The same with staging smaller than two whole groups (a ring of one group plus a lead): only
  // the first `lead` blocks sent to staging are posted at `issue_s`, the rest at `rest_issue_s`,
  // when the group before has computed and released its slots.
  StreamResult stream(const std::vector<uint64_t>& ids, uint32_t g, double issue_s,
                      double deadline_s, uint64_t lead, double rest_issue_s) override;
  // Layer group 0's streamed blocks for the next step, promoted now into the staging slots group
  // groups-2 has just released: the next step's stream(ids, 0, ...) reads them instead of issuing
  // them at its own start, where their deadline is. Any the next step does not read are
  // discarded unread.
  void stream_ahead(const std::vector<uint64_t>& ids, double issue_s, double deadline_s,
                    uint64_t limit = UINT64_MAX) override;
  void drop_streamed_ahead(double now_s) override;
  void stream_done(const std::vector<uint64_t>& ids, uint32_t g, double done_s) override;
  // Posts the step's remaining staging discards (after its last group).
  void stream_finish() override;
  // ---- Prefetch (the choice is the Prefetcher's, tlm/host/prefetcher.h) ----
  // Prefetch with deadlines: promotes the tier-resident prompt blocks of requests expected to
  // start within host.prefetch_horizon_steps, with their expected start as deadline, and the
  // context of sessions whose next turn the online predictor expects within the horizon. A
  // prefetched block is pinned until its request is admitted or the prefetch expires.
  void prefetch(const SchedulerIntent& intent) override;
  // Nothing runs and the queue head waits for room: prefetch pins (for requests behind it, or
  // sessions that may return) must not hold it back, so all are given back now. False: none.
  bool release_prefetch_pins(double now_s) override {
    integrate(now_s);
    return prefetcher_.release_all();
  }
  uint32_t prefetch_horizon_steps() const override { return prefetcher_.horizon_steps(); }
  // When the next-turn predictor next expects a session `lead_s` from now (kNever: none): an idle
  // scheduler wakes then to let prefetch run.
  double next_prediction_s(double lead_s) const override {
    return prefetcher_.next_prediction_s(lead_s);
  }
  // A new turn of `session` arrived at `arrival_s`: one more observed inter-turn gap, and the
  // session has not ended (host.session_end = idle).
  void on_arrival(const workload::Request& r, double arrival_s) override;
  // host.dma = host: the time of one host-issued copy of `bytes` (the host copy model).
  void set_host_copy_time(std::function<double(uint64_t bytes, bool batched)> copy_time) {
    if (copies_) copies_->set_copy_time(std::move(copy_time));
  }
  // SUSTAINABILITY is fed from here: every transfer's payload at the time it is decided.
  void report_demand_to(SustainabilityConstraint& sustainability) {
    sustainability_ = &sustainability;
  }
  // How the descriptor ring waits for a deferrable command's completion (the platform wires it
  // to the data plane; host.dma = host has none to wait for).
  void set_completion_waiter(DescriptorRing::Waiter waiter) {
    if (ring_) ring_->set_waiter(std::move(waiter));
  }
  // Records each promotion the control plane decides, from its descriptor to its block's arrival.
  void set_trace(TraceEventLog* trace) {
    trace_ = trace;
    if (!trace_) return;
    admission_track_ = trace_->track("host", "admission promotions");
    prefetch_track_ = trace_->track("host", "prefetch promotions");
  }
  // Tier slots holding a block (of the tier's whole block capacity).
  uint64_t tier_used_blocks() const { return tier_.used(); }
  uint64_t tier_blocks() const { return tier_.blocks(); }
  // Payload bytes of one tier copy in `format`.
  uint64_t stored_bytes(kv::Format format) const { return tier_.stored_bytes(format); }

  // The request's longest prompt prefix this cache holds now, in whole blocks of positions, with
  // no side effect (nothing referenced, created or moved): positions every layer group of which
  // is in HBM, and positions every layer group of which is in HBM or a valid tier copy (what
  // admission would serve without recomputing). What a prefix-aware router scores replicas by.
  struct CachedPrefix {
    uint64_t hbm_positions = 0, cached_positions = 0;
  };
  CachedPrefix cached_prefix(const workload::Request& r) const;
  const HostStats& stats() const { return stats_; }
  KvOccupancy occupancy() const override {
    return {slots_.resident(), slots_.pinned(), tier_used_blocks(), stats_.promoted_bytes,
            stats_.demoted_bytes};
  }
  const StreamedResidencyStats& streaming_stats() const override { return stats_; }
  // The decode set's streamed residency, or null where nothing can stream (pinned residency, or
  // fewer than three layer groups): the scheduler asks once, when it is built.
  StreamedResidencyIF* streamed_residency() { return streaming_possible() ? this : nullptr; }
  const HostConfig& config() const { return config_; }
  // The control plane's figures in stats.json, each with its unit and meaning: into the run's
  // top-level group the reference outcomes (tier_hit_rate, miss_rate) and the totals
  // (host_cpu_kv_s, promotion_latency_max_s); the `blocks`, `prefetch` (its control-plane part)
  // and `host_cpu` groups; and `representation`, which also takes the engine's counts.
  // `end_s`: the run's simulated time (the scheduler's last token).
  void declare_reference_stats(StatGroup& run) const;
  void declare_total_stats(StatGroup& run) const;
  void declare_block_stats(StatGroup& blocks) const;
  void declare_representation_stats(StatGroup& representation, const ControllerStats& engine) const;
  void declare_prefetch_stats(StatGroup& prefetch) const;
  void declare_cpu_stats(StatGroup& host_cpu, double end_s) const;
  // The policy state of block `key` (null: none), for tests and reports.
  const kv::BlockPolicy* policy_state(uint64_t key) const { return policy_store_.find(key); }
  // Scheduler intent for the replacement policy: whether a later turn of r's session is
  // expected to read its blocks. Only the last-turn oracle knows; a server judging by idle time
  // (host.session_end = idle) must expect every session to return until it has expired.
  bool expects_next_turn(const workload::Request& r) const {
    return config_.session_end == SessionEnd::LastTurn ? !r.last_turn : true;
  }
  // Recounts residency from the blocks themselves (O(blocks): for tests and end-of-run checks)
  // and returns what disagrees with the event-maintained counters; empty when all agree.
  std::string verify_accounting() const;
  uint64_t resident_blocks() const { return slots_.resident(); }
  uint64_t pinned_slots() const { return slots_.pinned(); }
  uint64_t reserved_slots() const { return 0; }  // admission reserves nothing ahead (KV on demand)
  uint64_t budget_blocks() const override { return budget_; }
  uint64_t block_bytes() const override { return block_bytes_; }
  uint32_t block_tokens() const override { return config_.block_tokens; }
  double prefetch_slack_s() const override { return config_.prefetch_slack_us * 1e-6; }
  const kv::WriteOnceLedger& ledger() const { return ledger_; }
  const ReplacementPolicy& policy() const { return *policy_; }
  // Every block reference in order: prompt blocks at admission (Read when the block was in HBM
  // or the tier, Produce when prefill computes it) and blocks decode fills (Produce).
  const kv::ReferenceLog& reference_string() const { return references_; }
  // Blocks the host's books hold now and at most (every block with state: in HBM, in the tier,
  // or keyed and not yet freed), for the memory a run needs per tracked block (kvtier bench).
  uint64_t tracked_blocks() const { return blocks_.size(); }
  uint64_t peak_tracked_blocks() const { return peak_tracked_blocks_; }
  // Whether the reference string is kept (it is unless the platform says its bound is not
  // wanted: sim.offline_bound = false). Set before the run.
  void keep_reference_string(bool keep) { keep_references_ = keep; }
  bool keeps_reference_string() const { return keep_references_; }
  // The offline-optimal bound over reference_string() at the same budget (computed once);
  // nothing when the reference string was not kept.
  const kv::OfflineOptimalResult* offline_optimal() const {
    if (!keep_references_) return nullptr;
    if (!optimal_) optimal_ = kv::offline_optimal(references_, budget_);
    return &*optimal_;
  }
  // Every running request's KV has grown for this step: the policy words that changed go to the
  // device now (host.policy_sync; with per_step, every word the decode set reads).
  void step_grown(double now_s) override;
  // Bits of policy state a device index entry holds (ctrl.policy_bits; 0: none, nothing to keep
  // current). Set by the platform before the run.
  void set_policy_entry_bits(uint32_t bits) { policy_entry_bits_ = bits; }
  // Closes the HBM byte-time integral at the end of the run.
  void finish(double now_s) override {
    drop_streamed_ahead(now_s);
    path_->settle_all();  // prefetches never read: their transfers still happened
    integrate(now_s);
  }

 private:
  struct Block {
    kv::BlockIdentity id;
    kv::BlockMechanism mech;
    uint64_t hbm_slot = 0;
    // (The small fields side by side: tens of millions of blocks on a per-layer trace.)
    bool multi_session = false;      // referenced by more than one session: never freed as private
    bool has_policy = false;         // `policy` below holds its state
    uint16_t owner_tenant = 0;       // tenant that created it: owns its device index entry
    bool prefetched_unused = false;  // promoted by prefetch and not yet read by any request
    bool streamed_ahead = false;  // in staging since the step before (stream_ahead), not yet read
    // The policy word its device index entry holds as far as the host knows (written by its
    // DEMOTE, then by UPDATE_POLICY), and the policy plane's marks (kPolicyNoted, ...). Two
    // bytes the record's alignment left free.
    uint8_t sent_word = 0;
    uint8_t policy_marks = 0;
    uint32_t record = 0;  // its record in blocks_ (by_record), for the policy's victim
    uint32_t policy_slot = ReplacementPolicy::kNoSlot;  // the policy's word (held hooks)
    uint64_t tier_epoch = 0;   // which entry of the tier's reclaim order is current (TierStore)
    uint64_t streamed_by = 0;  // 1 + id of the running request that streams it (0: none)
    uint64_t issued_by = 0;    // the last admission that promoted it (admit(): each once)
    kv::WriteOnceLedger::Counts moves;  // its promotions and demotions this lifetime (ledger_)
    // Its policy state (spec §M.2.2), kept here rather than in a table of its own so that a
    // reference reaches it through the record it has found anyway (BlockPolicyStates).
    kv::BlockPolicy policy;
  };
  // Every block the host knows, by key. References to a Block are held across insertions
  // (admission collects a prompt's blocks before pinning them): the records stay put.
  using BlockTable = StableKeyMap<Block>;
  // The policy store the replacement policy reads: a block's state lives in its Block, with the
  // same lifetime as in a table of its own (from the first reference to the eviction, unless
  // persistent, or the FREE). A key the host holds no block for (only a policy from outside this
  // tree could touch one) keeps its state in the base class's table until its block appears.
  class BlockPolicyStates final : public kv::PolicyStore {
   public:
    BlockPolicyStates(bool persistent, BlockTable& blocks)
        : PolicyStore(persistent), blocks_(blocks) {}
    kv::BlockPolicy& touch(uint64_t key) override {
      if (Block* b = blocks_.find(key)) return of(*b);
      return PolicyStore::touch(key);
    }
    const kv::BlockPolicy* find(uint64_t key) const override {
      if (const Block* b = blocks_.find(key)) return b->has_policy ? &b->policy : nullptr;
      return PolicyStore::find(key);
    }
    void on_evict(uint64_t key) override {
      if (Block* b = blocks_.find(key)) return evicted(*b);
      PolicyStore::on_evict(key);
    }
    void on_free(uint64_t key) override {
      if (Block* b = blocks_.find(key)) return freed(*b);
      PolicyStore::on_free(key);
    }
    size_t size() const override { return in_blocks_ + PolicyStore::size(); }
    // The same for a block at hand, without a look-up.
    kv::BlockPolicy& of(Block& b) {
      if (!b.has_policy) {
        b.has_policy = true;
        b.policy = kv::BlockPolicy{};
        ++in_blocks_;
      }
      return b.policy;
    }
    void evicted(Block& b) {
      if (!persistent()) freed(b);
    }
    void freed(Block& b) {
      if (!b.has_policy) return;
      b.has_policy = false;
      b.policy = kv::BlockPolicy{};
      --in_blocks_;
    }
    // A new block takes over a state touched before it existed.
    void adopt(Block& b) {
      if (PolicyStore::size() == 0) return;
      if (const kv::BlockPolicy* early = PolicyStore::find(b.id.key)) {
        of(b) = *early;
        PolicyStore::on_free(b.id.key);
      }
    }

   private:
    BlockTable& blocks_;
    size_t in_blocks_ = 0;  // blocks with a state
  };
  struct Running {
    uint64_t session = 0;
    uint32_t tenant = 0;
    std::vector<uint64_t> keys;  // keyed blocks the request pins, position-major
    // ... and their records (a pinned block is never forgotten, so these stay good while held).
    std::vector<Block*> held;
    void hold(Block& b) {
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
  };

  uint64_t group_key(uint64_t position_key, uint32_t group) const;

  void integrate(double now_s) { slots_.integrate(now_s); }
  // ---- The policy plane (host.policy_sync; tlm/host/policy_sync.h) ----
  static constexpr uint8_t kPolicyNoted = 1;    // in noted_: its word may have changed
  static constexpr uint8_t kPolicyPosted = 2;   // an update of it is in the batch being built
  static constexpr uint8_t kPolicyCarried = 4;  // its PROMOTE or DEMOTE in that batch carries it
  BlockIntent intent_of(const Block& b) const;
  uint8_t word_of(const Block& b) const {
    return policy_word(intent_of(b), b.has_policy ? b.policy.reuse_score : 0.0, policy_entry_bits_);
  }
  // The block's intent or reuse score may have changed: its word is compared at the next flush.
  // The words are followed whenever the device keeps one (a stale read is counted with
  // host.policy_sync = none too), and sent unless the policy is none.
  bool tracking_policy() const { return ring_ && policy_entry_bits_ > 0; }
  bool syncing_policy() const {
    return tracking_policy() && config_.policy_sync != PolicySync::None;
  }
  void note_policy(Block& b) {
    if ((b.policy_marks & kPolicyNoted) || !tracking_policy()) return;
    b.policy_marks |= kPolicyNoted;
    noted_.push_back({b.record, b.id.key});
  }
  // Before a batch is posted: the words its DEMOTEs and PROMOTEs write, and an UPDATE_POLICY for
  // every other noted block whose entry holds another word than the host's (with per_step also
  // for the blocks forced_ names).
  // `at_s`: when the batch is posted.
  void sync_policy_words(double at_s);
  struct NotedBlock {
    uint32_t record = 0;
    uint64_t key = 0;
  };
  std::vector<NotedBlock> noted_, forced_;
  // Promotions whose look-up lies ahead of the host's time when their completion came back
  // (the descriptor waits in the ring): a change of the block's word before the look-up is
  // written behind the promotion, so the look-up reads the word the promotion was posted
  // with. By look-up time (the engine looks commands up in ring order); at most one per block.
  struct LookupAhead {
    double looked_up_s = 0.0;
    uint64_t key = 0;
    uint8_t word = 0;     // the host's word when the promotion was posted
    bool current = true;  // ... and the promotion carried it (else counted stale already)
  };
  std::unordered_map<uint32_t, LookupAhead> lookups_ahead_;      // by block record
  std::deque<std::pair<double, uint32_t>> lookups_ahead_order_;  // (look-up time, record)
  uint32_t policy_entry_bits_ = 16;
  void pin(Block& b);
  void unpin(Block& b, double now_s);
  // Evicts idle blocks until `slots` are free; returns when the freed slots are usable.
  double make_room(uint64_t slots, double now_s);
  void enqueue(const cmdset::Descriptor& d, cmdset::Opcode op, uint64_t key, double now_s);
  // The same for a command about `b`, whose outcome finds `b` by its record.
  void enqueue(const cmdset::Descriptor& d, cmdset::Opcode op, const Block& b, double now_s);
  // The block a command's outcome is about: by the command's record while that still holds the
  // key (a promotion or demotion is in flight, so its block is never forgotten meanwhile), else
  // by the key (throws std::out_of_range when the block is gone).
  Block& block_of(const Command& c);
  // The same, or null when the block is gone (a FREE's, say).
  Block* find_block(const Command& c);
  // What the command path reports (CommandOutcomes).
  void promoted(const Command& c, double usable_s, double looked_up_s) override;
  void demoted(const Command& c, double done_s) override;
  void demotion_refused(const Command& c) override;
  void recompressed(const Command& c) override;
  void failed(const Command& c, cmdset::Status status) override;
  // What the prefetcher asks of residency (PrefetchTarget).
  bool is_running(uint64_t request_id) const override { return running_.count(request_id) != 0; }
  uint64_t admission_slots(const workload::Request& r) const override { return prompt_slots(r); }
  std::vector<uint64_t> prompt_block_keys(const workload::Request& r) const override;
  uint64_t obtainable_slots() const override { return available_slots(); }
  std::optional<uint32_t> promotable_group(uint64_t key) const override;
  void pin_for_prefetch(uint64_t key) override { pin(blocks_.at(key)); }
  void unpin_prefetched(uint64_t key) override { unpin(blocks_.at(key), slots_.integrated_to_s()); }
  // Writes the queued descriptors and rings the doorbell at `at_s`; completions come back
  // before it returns (loosely timed: their timestamps lie in the future).
  void flush(double at_s);
  void completion_write(tlm::tlm_generic_payload& trans, sc_core::sc_time& delay);
  cmdset::Descriptor descriptor(cmdset::Opcode op, const Block& b) const;

  const HostConfig config_;
  const uint32_t ring_entries_;
  const uint64_t block_bytes_;
  const uint64_t budget_;
  const uint32_t groups_;
  const uint64_t hbm_kv_base_;
  TierStore tier_;  // tier slots, the reclaim order, the copies' formats
  const double cycle_s_;
  std::unique_ptr<ReplacementPolicy> policy_;
  BlockTable blocks_;
  uint64_t peak_tracked_blocks_ = 0;
  BlockPolicyStates policy_store_{config_.persistent_policy, blocks_};
  kv::WriteOnceLedger ledger_;
  kv::ReferenceLog references_;  // for the offline-optimal bound
  bool keep_references_ = true;
  mutable std::optional<kv::OfflineOptimalResult> optimal_;
  std::unordered_map<uint64_t, Running> running_;
  // Frees the tier copy of the tier-only block that left HBM longest ago; false if none can go.
  bool reclaim_tier_slot(double now_s);
  std::vector<uint64_t> staging_;                             // HBM slots held for streamed blocks
  std::vector<std::pair<uint64_t, double>> staged_discards_;  // (block, when its group computed)
  std::vector<uint64_t> streamed_ahead_;  // group-0 blocks stream_ahead() promoted, in issue order
  // Promotes group g's streamed blocks of the listed requests into staging (those streamed ahead
  // are read where they are), or, with room in the budget (host.restore_streamed), into slots of
  // their own, where they stop streaming; returns the ones it promoted into staging.
  // At most `limit` blocks go to staging (the rest are left for later: stream_ahead's lead); of
  // those, the first `lead` are posted at issue_s and the others at rest_issue_s.
  std::vector<Block*> promote_streamed(const std::vector<uint64_t>& ids, uint32_t g, double issue_s,
                                       double deadline_s, StreamResult& res,
                                       uint64_t lead = UINT64_MAX, double rest_issue_s = 0.0,
                                       uint64_t limit = UINT64_MAX);
  // Before reading a block's ready time: a deferrable promotion of it still in flight (a
  // prefetch) is waited for from `now_s`.
  void settle(Block& b, double now_s) {
    if (b.mech.in_flight) path_->settle(b.id.key, now_s);
  }
  void post_staged_discards(double upto_s);
  // The DEMOTE of a block leaving HBM to make room, due now.
  cmdset::Descriptor room_demotion(const Block& b, double now_s) const;
  size_t staging_next_ = 0;
  SessionExpiry session_expiry_;  // host.session_end = idle
  // host.free_dead_blocks: the sessions that have ended by `now_s` lose their private blocks.
  void free_ended_sessions(double now_s);
  void free_session_blocks(uint64_t session, const std::vector<uint64_t>& keys, double now_s);
  // Drops a block from the books: FREE of its tier copy (if any), ledger, policy state, entry.
  void forget_block(Block& b, double now_s);
  Block& keyed_block(uint64_t key, uint64_t session, uint64_t position, uint32_t group, uint64_t pk,
                     uint32_t tenant);
  void reference(Block& b, uint32_t tenant, double now_s, bool continues, bool counted);
  void unstream(Block& b);
  // A request stops reading its blocks: pins released, its partial last block's slots freed.
  void let_go(Running& run, double now_s);
  uint64_t admissions_ = 0;

  // The command path (host.dma): descriptors through the device's ring, or host-issued copies.
  Timeline cpu_;  // the host CPU that builds descriptors or issues copies
  std::unique_ptr<CommandPath> path_;
  DescriptorRing* ring_ = nullptr;    // path_ when host.dma = device
  HostCopyEngine* copies_ = nullptr;  // path_ when host.dma = host
  double last_demotion_done_s_ = 0.0;
  HostStats stats_;
  HbmSlots slots_{budget_, config_.sustain_window_s, stats_};  // after budget_, config_, stats_
  TraceEventLog* trace_ = nullptr;
  TraceEventLog::Track admission_track_, prefetch_track_;  // looked up once

  Prefetcher prefetcher_{config_, groups_, *this, stats_};  // after config_, groups_ and stats_
  SustainabilityConstraint* sustainability_ = nullptr;
  void demand(DemandDirection d, double t_s, double bytes) {
    if (sustainability_) sustainability_->demand(d, t_s, bytes);
  }
};

}  // namespace kvtier
