#pragma once
// Prefetch from scheduler intent, no oracle (spec §M.3.1). The prefetcher decides which
// tier-resident blocks to promote ahead of the request that will read them, with which
// deadline and priority, and gives the pins back when a prediction expires; it accounts how
// many prefetches were read and how early. Candidates:
//   - waiting requests the scheduler expects to admit within host.prefetch_horizon_steps;
//   - the next turn of a session, predicted online from the inter-turn gaps seen so far in the
//     run (NextTurnPredictor; never the workload's own future arrivals).
// It owns no block: residency (the control plane) answers what a block is and holds the pins,
// and carries the chosen promotions out through its command path.
#include <cstdint>
#include <optional>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "tlm/host/host_config.h"
#include "tlm/host/next_turn_predictor.h"
#include "workloads/request.h"

namespace kvtier {

// Execution intent the scheduler passes down every step (spec §M.3.1): the requests it expects
// to start soon, with the time it expects each to start. `step_s` is its current step time.
struct SchedulerIntent {
  struct Upcoming {
    const workload::Request* request = nullptr;
    double expected_start_s = 0.0;
    uint32_t steps_ahead = 0;  // 1 = the next step
  };
  double now_s = 0.0;
  double step_s = 0.0;
  std::vector<Upcoming> upcoming;  // in the order the scheduler expects to admit them
};

// Prefetch accounting (stats.json "prefetch"): promotions issued ahead of admission, those a
// request read, those whose prediction expired first.
struct PrefetchStats {
  uint64_t prefetched = 0, prefetch_used = 0, prefetch_expired = 0;
  // Lead time of a used prefetch: from the block being usable to the request that reads it being
  // admitted (negative: it was still arriving).
  double prefetch_lead_sum_s = 0.0, prefetch_lead_min_s = 0.0;
  uint64_t prefetch_lead_late = 0;
};

// What the prefetcher asks of residency.
class PrefetchTarget {
 public:
  virtual ~PrefetchTarget() = default;
  virtual bool is_running(uint64_t request_id) const = 0;
  // Slots the request's prompt occupies at admission, and the keys of its full prompt blocks.
  virtual uint64_t admission_slots(const workload::Request& r) const = 0;
  virtual std::vector<uint64_t> prompt_block_keys(const workload::Request& r) const = 0;
  // Slots free now or held by idle blocks.
  virtual uint64_t obtainable_slots() const = 0;
  // The layer group of block `key` when it lies in the tier only and can be promoted now (not in
  // HBM, not in flight, not streamed); nothing otherwise.
  virtual std::optional<uint32_t> promotable_group(uint64_t key) const = 0;
  // One more (one fewer) pin on block `key`, held for a prefetch.
  virtual void pin_for_prefetch(uint64_t key) = 0;
  virtual void unpin_prefetched(uint64_t key) = 0;
  // Before the request's blocks are looked at, at `now_s`: a tier shared with other replicas
  // (tier.shared) lends the request the copies of its prompt blocks it may read that this
  // replica's books hold none of, as admission would. Nothing with a private tier.
  virtual void find_in_pool(const workload::Request& /*r*/, double /*now_s*/) {}
};

class Prefetcher {
 public:
  // Priority of the promotions a starting step waits for; a prefetch `steps_ahead` steps before
  // its use gets kAdmissionPriority - 1 - steps_ahead (at least 1): the nearer, the higher.
  static constexpr uint16_t kAdmissionPriority = 0xFFFF;
  static constexpr double kNever = NextTurnPredictor::kNever;

  // One block to promote: the start of the layer group that reads it as deadline.
  struct Candidate {
    uint64_t key = 0;
    double deadline_s = 0.0;
    uint16_t priority = 0;
  };

  // `layer_groups`: blocks per token position. Counters go to `stats`.
  Prefetcher(const HostConfig& config, uint32_t layer_groups, PrefetchTarget& target,
             PrefetchStats& stats);

  uint32_t horizon_steps() const { return horizon_; }
  // Expires the prefetches whose request did not start in time (their pins go back; the blocks
  // stay as idle blocks), then chooses and pins the blocks to promote for `intent`, in order.
  // A block two upcoming requests share is listed (and pinned) for each: promote it once.
  std::vector<Candidate> choose(const SchedulerIntent& intent);
  // Pins held for request `id` by its own prefetch (admission moves them to the request).
  uint64_t pins_for(uint64_t request_id) const;
  // Request `r` was admitted and pins its blocks itself: its own and its session's prefetch end.
  void admitted(const workload::Request& r);
  // A prefetched block was read for the first time by a request admitted at `now_s`; it became
  // usable at `ready_s`.
  void used(double now_s, double ready_s);
  // One prefetch promotion was issued.
  void issued() { ++stats_.prefetched; }
  // A new turn of `session` arrived at `arrival_s`: one more observed inter-turn gap.
  void arrived(uint64_t session, double arrival_s) { next_turn_.arrived(session, arrival_s); }
  // A turn of `session` finished at `t_s`, leaving `keys` (its context) for a next turn.
  void finished(uint64_t session, double t_s, const std::vector<uint64_t>& keys);
  // When the next-turn predictor next expects a session, `lead_s` before it (kNever: none).
  double next_prediction_s(double lead_s) const;
  // Gives back every prefetch pin now (each counts as expired); false when none was held.
  bool release_all();

 private:
  static constexpr uint64_t kSessionPrefetch = 1ull << 63;  // owner bit: a session's next turn
  struct Pinned {
    std::vector<uint64_t> keys;  // blocks pinned for the owner
    double expires_s = 0.0;
  };
  bool next_turn_on() const { return horizon_ && next_turn_enabled_; }
  void end(uint64_t owner);
  // Ends every prefetch whose pins expire before `t_s` (each counts as expired); how many.
  size_t expire_before(double t_s);
  void add(uint64_t owner, const std::vector<uint64_t>& keys, double start_s, double step_s,
           uint32_t steps_ahead, std::vector<Candidate>& chosen);

  const uint32_t horizon_;
  const bool next_turn_enabled_;
  const uint32_t groups_;
  PrefetchTarget& target_;
  PrefetchStats& stats_;
  NextTurnPredictor next_turn_;
  std::unordered_map<uint64_t, Pinned> pinned_;  // owner (request id, or session | bit) -> its pins
  std::unordered_set<uint64_t> scanned_;         // requests already looked at
};

}  // namespace kvtier
