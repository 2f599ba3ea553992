#pragma once
// The host KV control plane (spec §M.3): owns admission of blocks into the HBM KV budget,
// residency, replacement, the persistent policy store and the descriptors it sends the data
// plane. It speaks to the device only through 64 B descriptors and doorbells over the link and
// learns outcomes from completions the device writes into host memory.
//
// This class decides about requests (admission, growth, preemption, release, the end of
// sessions, prefetch from intent) and holds the parts that act on blocks: the block books
// (block_books.h), what happens to a block (block_lifecycle.h: pins, room, tier, commands and
// their outcomes), prompt admission (prompt_admission.h), the HBM slots, streamed residency and
// the prefetcher. The scheduler sees it through KvCacheIF and KvIntentIF (kv_cache_if.h).
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
#include "tlm/host/block_books.h"
#include "tlm/host/block_lifecycle.h"
#include "tlm/host/command_path.h"
#include "tlm/host/hbm_slots.h"
#include "tlm/host/host_blocks.h"
#include "tlm/host/host_stats.h"
#include "tlm/host/tier_store.h"
#include "tlm/host/kv_cache_if.h"
#include "tlm/host/policy_plane.h"
#include "tlm/host/policy_sync.h"
#include "tlm/host/reference_record.h"
#include "tlm/host/prefetcher.h"
#include "tlm/host/prompt_admission.h"
#include "tlm/host/session_expiry.h"
#include "tlm/host/streamed_residency_books.h"
#include "tlm/ctrl/kvdp_cmdset.h"
#include "tlm/host/policy/policy.h"
#include "tlm/kv/block.h"
#include "tlm/kv/offline_optimal.h"
#include "workloads/request.h"

namespace kvtier {

struct ControllerStats;

class HostControlPlane final : public sc_core::sc_module,
                               public KvCacheIF,
                               public KvIntentIF,
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
    return config_.decode_residency == DecodeResidency::Streamed && geometry_.layer_groups >= 3;
  }
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
    if (HostCopyEngine* c = lifecycle_.commands().copies()) c->set_copy_time(std::move(copy_time));
  }
  // SUSTAINABILITY is fed from here: every transfer's payload at the time it is decided.
  void report_demand_to(SustainabilityConstraint& sustainability) {
    lifecycle_.report_demand_to(sustainability);
  }
  // How the descriptor ring waits for a deferrable command's completion (the platform wires it
  // to the data plane; host.dma = host has none to wait for).
  void set_completion_waiter(DescriptorRing::Waiter waiter) {
    if (DescriptorRing* r = lifecycle_.commands().ring()) r->set_waiter(std::move(waiter));
  }
  // host.decision = device: how the device issues a chain's members itself (the platform wires
  // it to the data plane).
  void set_local_issuer(DescriptorRing::LocalIssuer issuer) {
    if (DescriptorRing* r = lifecycle_.commands().ring()) r->set_local_issuer(std::move(issuer));
  }
  // Records each promotion the control plane decides, from its descriptor to its block's arrival.
  void set_trace(TraceEventLog* trace) {
    if (!trace) return;
    admission_.set_trace(trace, trace->track("host", "admission promotions"));
    lifecycle_.set_trace(trace, trace->track("host", "prefetch promotions"));
  }
  // tier.shared: this replica's tier copies live in `pool`, shared with the other replicas that
  // join it (before the run).
  void join_pool(TierPool& pool) { lifecycle_.join_pool(pool); }
  // Tier slots holding a block (of the tier's whole block capacity; a pool's, shared).
  uint64_t tier_used_blocks() const { return lifecycle_.tier().used(); }
  uint64_t tier_blocks() const { return lifecycle_.tier().blocks(); }

  // The request's longest prompt prefix this cache holds now, in whole blocks of positions, with
  // no side effect (nothing referenced, created or moved): positions every layer group of which
  // is in HBM, and positions every layer group of which is in HBM or a valid tier copy (what
  // admission would serve without recomputing). What a prefix-aware router scores replicas by.
  using CachedPrefix = PromptAdmission::CachedPrefix;
  CachedPrefix cached_prefix(const workload::Request& r) const {
    return admission_.cached_prefix(r);
  }
  const HostStats& stats() const { return stats_; }
  KvOccupancy occupancy() const override {
    return {slots_.resident(), slots_.pinned(), tier_used_blocks(), stats_.promoted_bytes,
            stats_.demoted_bytes};
  }
  // The decode set's streamed residency, or null where nothing can stream (pinned residency, or
  // fewer than three layer groups): the scheduler asks once, when it is built.
  StreamedResidencyIF* streamed_residency() { return streaming_possible() ? &streamed_ : nullptr; }
  const HostConfig& config() const { return config_; }
  // The control plane's figures in stats.json (tlm/host/host_stats.h).
  HostStatsReport stats_report() const {
    return HostStatsReport(
        stats_, {config_, geometry_.block_bytes, geometry_.layer_groups, geometry_.budget_blocks,
                 &books_.ledger(), lifecycle_.pooled(), &books_.references()});
  }
  // U of spec §M.5.1: the distinct block keys the run's computation required.
  uint64_t unique_keys() const { return books_.references().distinct_keys(); }
  // The policy state of block `key` (null: none), for tests and reports.
  const kv::BlockPolicy* policy_state(uint64_t key) const {
    return books_.policy_states().find(key);
  }
  // Scheduler intent for the replacement policy: whether a later turn of r's session is
  // expected to read its blocks. Only the last-turn oracle knows; a server judging by idle time
  // (host.session_end = idle) must expect every session to return until it has expired.
  bool expects_next_turn(const workload::Request& r) const {
    return config_.session_end == SessionEnd::LastTurn ? !r.last_turn : true;
  }
  // Recounts residency from the blocks themselves (O(blocks): for tests and end-of-run checks)
  // and returns what disagrees with the event-maintained counters, and with a shared tier what
  // its books and the pool disagree on; empty when all agree.
  std::string verify_accounting() const;
  uint64_t resident_blocks() const { return slots_.resident(); }
  uint64_t pinned_slots() const { return slots_.pinned(); }
  uint64_t reserved_slots() const { return 0; }  // admission reserves nothing ahead (KV on demand)
  uint64_t budget_blocks() const override { return geometry_.budget_blocks; }
  uint64_t block_bytes() const override { return geometry_.block_bytes; }
  uint32_t block_tokens() const override { return config_.block_tokens; }
  double prefetch_slack_s() const override { return config_.prefetch_slack_us * 1e-6; }
  const kv::WriteOnceLedger& ledger() const { return books_.ledger(); }
  const ReplacementPolicy& policy() const { return books_.policy(); }
  // Blocks the host's books hold now and at most (every block with state: in HBM, in the tier,
  // or keyed and not yet freed), for the memory a run needs per tracked block (kvtier bench).
  uint64_t tracked_blocks() const { return books_.tracked(); }
  // For a command that only reports after the run: BlockBooks::release_table().
  void release_block_table() { books_.release_table(); }
  uint64_t peak_tracked_blocks() const { return books_.peak_tracked(); }
  // Whether the reference string is kept (it is unless the platform says its bound is not
  // wanted: sim.offline_bound = false). Set before the run.
  void keep_reference_string(bool keep) { books_.references().keep(keep); }
  bool keeps_reference_string() const { return books_.references().kept(); }
  // The offline-optimal bound over the reference string at the same budget (computed once, from
  // the string, which it consumes: tlm/host/reference_record.h);
  // nothing when the reference string was not kept.
  const kv::OfflineOptimalResult* offline_optimal() const { return books_.references().bound(); }
  // Every running request's KV has grown for this step: the policy words that changed go to the
  // device now (host.policy_sync; with per_step, every word the decode set reads).
  void step_grown(double now_s) override;
  // Bits of policy state a device index entry holds (ctrl.policy_bits; 0: none, nothing to keep
  // current). Set by the platform before the run.
  void set_policy_entry_bits(uint32_t bits) { lifecycle_.policy_plane().set_entry_bits(bits); }
  // Closes the HBM byte-time integral at the end of the run.
  void finish(double now_s) override {
    streamed_.drop_streamed_ahead(now_s);
    // Prefetches never read: their transfers still happened.
    lifecycle_.commands().path().settle_all();
    integrate(now_s);
  }

 private:
  using Block = HostBlock;
  using Running = RunningRequest;

  void integrate(double now_s) { slots_.integrate(now_s); }
  // What the prefetcher asks of residency (PrefetchTarget).
  bool is_running(uint64_t request_id) const override { return running_.count(request_id) != 0; }
  uint64_t admission_slots(const workload::Request& r) const override { return prompt_slots(r); }
  std::vector<uint64_t> prompt_block_keys(const workload::Request& r) const override;
  uint64_t obtainable_slots() const override { return available_slots(); }
  std::optional<uint32_t> promotable_group(uint64_t key) const override;
  void pin_for_prefetch(uint64_t key) override { lifecycle_.pin(books_.at(key)); }
  void find_in_pool(const workload::Request& r, double now_s) override;
  void unpin_prefetched(uint64_t key) override {
    lifecycle_.unpin(books_.at(key), slots_.integrated_to_s());
  }
  void completion_write(tlm::tlm_generic_payload& trans, sc_core::sc_time& delay);
  StreamedResidencyBooks::Geometry streaming_geometry() const {
    return {geometry_, config_.restore_streamed, streaming_possible()};
  }
  // host.free_dead_blocks: the sessions that have ended by `now_s` lose their private blocks.
  void free_ended_sessions(double now_s);
  // A request stops reading its blocks: pins released, its partial last block's slots freed.
  void let_go(Running& run, double now_s);
  // Request `id` leaves the running set: the device stops holding its chains (host.decision =
  // device; the device drops a chain whose sequence has gone, and the host's books follow).
  void forget_chains(uint64_t id) {
    if (DescriptorRing* r = lifecycle_.commands().ring()) {
      r->chain_ended(streamed_chain(id));
      r->chain_ended(admission_chain(id));
    }
  }

  const HostConfig config_;
  const KvGeometry geometry_;
  HostStats stats_;
  // Every block the host knows, its policy state, the replacement policy, the write-once ledger
  // and the reference string: after config_, geometry_ and stats_.
  BlockBooks books_{config_, geometry_.budget_blocks, stats_};
  // HBM's KV budget as slots: after geometry_, config_ and stats_.
  HbmSlots slots_{geometry_.budget_blocks, config_.sustain_window_s, stats_};
  // What happens to a block (pins, eviction, demotion, reclaim, frees, its commands and their
  // outcomes), with the tier's slots, the command path and the policy plane.
  BlockLifecycle lifecycle_;
  std::unordered_map<uint64_t, Running> running_;
  SessionExpiry session_expiry_;  // host.session_end = idle
  // The decode set's streamed residency: after lifecycle_, books_, running_, slots_ and stats_.
  StreamedResidencyBooks streamed_{lifecycle_, books_.table(), running_,
                                   slots_,     stats_,         streaming_geometry()};
  // After config_, geometry_ and stats_.
  Prefetcher prefetcher_{config_, geometry_.layer_groups, *this, stats_};
  // A prompt's blocks looked up, pinned and promoted: after every part above.
  PromptAdmission admission_{config_, geometry_, books_,      lifecycle_,          slots_,
                             stats_,  stats_,    prefetcher_, streaming_possible()};
};

}  // namespace kvtier
