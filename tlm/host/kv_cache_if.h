#pragma once
// What the serving scheduler asks of the KV cache, as three interfaces, so that the scheduler
// holds no concrete control plane: the host control plane implements all three today, a test's
// fake KV cache implements them for scheduling alone (tests/tlm/scheduler_harness_test.cpp), and
// a KV cache whose tier is shared by several replicas can stand behind the same calls.
//
//   KvCacheIF            capacity, admission, growth, leaving and time: every scheduler needs it;
//   KvIntentIF           the scheduler's intent (who starts soon) for prefetch, and the slack the
//                        prefetcher leaves, which HIDING judges with;
//   StreamedResidencyIF  the decode set's KV streamed from the tier every step
//                        (host.decode_residency = streamed): present only where streaming can
//                        run, chosen once when the scheduler is built.
#include <cstdint>
#include <vector>

#include "tlm/host/prefetcher.h"
#include "workloads/request.h"

namespace kvtier {

// One transfer a request (or a step) waits for, with the deadline it was issued with: the planned
// start of the layer group that reads it in the step it is meant for (HIDING, spec §M.4.3).
struct Transfer {
  uint32_t group = 0;
  double ready_s = 0.0;     // when the block is usable in HBM
  double deadline_s = 0.0;  // when the layer group that reads it is planned to start
  uint64_t flow = 0;        // timeline flow from its descriptor to the step that reads it (0: none)
  uint64_t bytes = 0;       // payload bytes it carries from the tier (as stored)
};

// When the blocks a request is about to read are meant to be used: the step they are meant for
// starts at `step_start_s` and lasts `step_s`; layer group g starts at step_start_s + step_s*g/G.
struct LoadPlan {
  double step_start_s = 0.0;
  double step_s = 0.0;
  bool promote_from_tier = true;  // false: recompute what is not in HBM (preemption = recompute)
  // Streamed residency: at most this many tier blocks are promoted; the rest of the request's
  // tier-resident context stays in the tier and is streamed every step.
  uint64_t promote_room = UINT64_MAX;
  uint64_t keep_free = 0;  // ... and slots that must stay obtainable after the promotions
  // ... besides the slots of the positions the first prefill chunk (this many prompt tokens)
  // computes: admission counts those once it knows which positions are cached.
  uint64_t first_tokens = 0;
};

// What admitting one request found and started.
struct AdmitResult {
  uint32_t hbm_hits = 0, tier_hits = 0, misses = 0;
  uint32_t cached_tokens = 0;  // prompt tokens whose KV need not be recomputed
  uint32_t cached_hbm_tokens =
      0;  // ... of those, positions every layer group of which was resident in HBM
  uint32_t loaded_tokens = 0;   // ... and positions with a layer group from the tier (promoted,
                                // prefetched for it, or streamed): cached = hbm + loaded
  uint64_t loaded_bytes = 0;    // payload bytes of those layer groups as stored in the tier
  std::vector<double> ready_s;  // per layer group: when its promoted blocks are usable
  // Every transfer this request waits for (promotions issued now, and prefetched blocks read
  // for the first time): HIDING is judged per transfer against its deadline.
  std::vector<Transfer> transfers;
  double load_ready_s = 0.0;  // when the last of them is usable (0 with none)
};

// Blocks of the decode set streamed from the tier for one layer group of one step.
struct StreamResult {
  uint64_t blocks = 0;
  uint64_t bytes = 0;                // their payload bytes as stored
  double ready_s = 0.0;              // when the last one is usable
  std::vector<double> ready_each_s;  // per block, for HIDING
};

// What HBM and the tier hold now, and the payload moved across the boundary so far: the step
// trace's counters and the scheduler's diagnostics.
struct KvOccupancy {
  uint64_t resident_blocks = 0;   // HBM slots holding a block (staging included)
  uint64_t pinned_slots = 0;      // ... of those, pinned by a running request or a prefetch
  uint64_t tier_used_blocks = 0;  // tier slots holding a block
  uint64_t promoted_bytes = 0, demoted_bytes = 0;  // payload bytes as stored, since the start
};

// Streamed residency's counters (stats.json "serving"); zero where nothing streams.
struct StreamedResidencyStats {
  uint64_t spills = 0;      // decode-set blocks moved to the tier to make room
  uint64_t unstreamed = 0;  // streamed blocks made resident again by another reader
  uint64_t restored_streamed =
      0;  // streamed blocks whose step's promotion took a slot of their own (room again)
  uint64_t streamed_at_admission = 0;  // tier blocks a request began streaming instead of promoting
  uint64_t streamed_promotions = 0;    // per-step promotions of streamed blocks into staging
  uint64_t streamed_ahead = 0;         // ... of those, layer group 0's issued in the step before
  uint64_t streamed_ahead_unused =
      0;  // ... of those, discarded unread (their reader stopped or left)
  uint64_t peak_staging_slots = 0;
  // A streamed block's per-step re-read into staging: count, sum and maximum of its latency
  // (memory stays bounded however long the run).
  uint64_t streamed_promotion_latency_n = 0;
  double streamed_promotion_latency_sum_s = 0.0, streamed_promotion_latency_max_s = 0.0;
};

class KvCacheIF {
 public:
  virtual ~KvCacheIF() = default;

  // ---- Capacity ----
  virtual uint64_t budget_blocks() const = 0;  // the HBM KV budget in slots
  virtual uint64_t block_bytes() const = 0;    // payload of one block
  virtual uint32_t block_tokens() const = 0;   // token positions per block
  // Slots the prompt's KV occupies (every position, every layer group).
  virtual uint64_t prompt_slots(const workload::Request& r) const = 0;
  // Slots a context of `tokens` tokens takes when all of it is resident.
  virtual uint64_t context_slots(uint64_t tokens) const = 0;
  // Slots free now or held by idle blocks: what the decode set may still grow into.
  virtual uint64_t available_slots() const = 0;

  // ---- Admission (on demand: only the prompt, never the output length) ----
  // A new turn of r's session arrived at `arrival_s` (before it waits for admission).
  virtual void on_arrival(const workload::Request& r, double arrival_s) = 0;
  // Whether r's first `tokens` prompt tokens fit beside the running set now, leaving `watermark`
  // slots free.
  virtual bool can_admit(const workload::Request& r, uint64_t tokens, uint64_t watermark) const = 0;
  // Pins r's cached prompt blocks, starts loading those in the tier (deadlines from `plan`), and
  // notes the rest for prefill.
  virtual AdmitResult admit(const workload::Request& r, double now_s, const LoadPlan& plan) = 0;

  // ---- Growth: prefill chunks and decode tokens ----
  // Slots running request `id` still needs so that `kv_tokens` tokens of its context have KV.
  virtual uint64_t growth_slots(uint64_t id, uint64_t kv_tokens) const = 0;
  // How far prefill of request `id` reaches from `kv_tokens` when it may compute at most `budget`
  // tokens (cached positions cost nothing), never beyond `prompt_tokens`; `computed` gets the
  // tokens it computes on the way.
  virtual uint64_t prefill_reach(uint64_t id, uint64_t kv_tokens, uint64_t budget,
                                 uint64_t prompt_tokens, uint64_t* computed) const = 0;
  // Takes those slots; the caller has made sure growth_slots() <= available_slots().
  virtual void grow(uint64_t id, uint64_t kv_tokens, double now_s) = 0;
  // Every running request has grown for the step that starts at `now_s`: per-step work goes now.
  virtual void step_grown(double /*now_s*/) {}

  // ---- Leaving ----
  // The request leaves the decode set before it finished (its KV is swapped or recomputed later).
  virtual void preempt(uint64_t id, double now_s) = 0;
  // The request finished.
  virtual void release(uint64_t id, const workload::Request& r, double now_s) = 0;

  // ---- Time ----
  // The run ended at `now_s`: integrals closed, transfers still owed settled.
  virtual void finish(double now_s) = 0;
  virtual KvOccupancy occupancy() const = 0;
};

class KvIntentIF {
 public:
  static constexpr double kNever = Prefetcher::kNever;
  virtual ~KvIntentIF() = default;
  // Who the scheduler expects to start within the prefetch horizon (tlm/host/prefetcher.h).
  virtual void prefetch(const SchedulerIntent& intent) = 0;
  // Nothing runs and the queue head waits for room: every prefetch pin is given back. False: none.
  virtual bool release_prefetch_pins(double now_s) = 0;
  virtual uint32_t prefetch_horizon_steps() const = 0;  // 0: no prefetch from intent
  // When the next-turn predictor next expects a session `lead_s` from now (kNever: none).
  virtual double next_prediction_s(double lead_s) const = 0;
  // The slack a transfer may take past its deadline and still count as hidden (HIDING).
  virtual double prefetch_slack_s() const = 0;
};

class StreamedResidencyIF {
 public:
  virtual ~StreamedResidencyIF() = default;
  // Moves one resident block of running request `id` to the tier; from now on every step streams
  // it back. False: none can go.
  virtual bool spill(uint64_t id, double now_s) = 0;
  // Blocks of layer group g that the listed requests stream each step.
  virtual uint64_t streamed_blocks(const std::vector<uint64_t>& ids, uint32_t g) const = 0;
  virtual uint64_t streamed_blocks_total(uint64_t id) const = 0;
  // Whether running request `id` streams any block of layer group g.
  virtual bool streams_in_group(uint64_t id, uint32_t g) const = 0;
  // Staging slots held for streaming (counted as resident and against the budget), and holding
  // exactly `slots` of them from now on (false when they cannot be had).
  virtual uint64_t staging_slots() const = 0;
  virtual bool set_staging(uint64_t slots, double now_s) = 0;
  // Promotes group g's streamed blocks of the listed requests into staging: the first `lead`
  // posted at `issue_s`, the rest at `rest_issue_s` (when the group before releases its slots).
  virtual StreamResult stream(const std::vector<uint64_t>& ids, uint32_t g, double issue_s,
                              double deadline_s, uint64_t lead, double rest_issue_s) = 0;
  // Layer group 0's streamed blocks for the next step, promoted now (at most `limit`).
  virtual void stream_ahead(const std::vector<uint64_t>& ids, double issue_s, double deadline_s,
                            uint64_t limit) = 0;
  virtual void drop_streamed_ahead(double now_s) = 0;
  // Group g of the step has computed at `done_s`: its staging is given back.
  virtual void stream_done(const std::vector<uint64_t>& ids, uint32_t g, double done_s) = 0;
  // Posts the step's remaining staging discards (after its last group).
  virtual void stream_finish() = 0;
  virtual const StreamedResidencyStats& streaming_stats() const = 0;
};

}  // namespace kvtier
