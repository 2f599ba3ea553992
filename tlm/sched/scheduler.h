#pragma once
// The serving scheduler: continuous batching as vLLM does it, written as named phases that run
// once per step (docs/model.md, "The scheduler"):
//   admit    waiting requests join in arrival order while seats and KV allow; their cached
//            prompt blocks are pinned or start loading from the tier;
//   plan     the step's tokens: every decode token first, then prefill chunks, within
//            sched.max_batched_tokens; KV grows on demand, and when it runs out a running request
//            is preempted (latest arrival first) or, with streamed residency, decode-set blocks
//            move to the tier;
//   load     per layer group: the transfers the step waits for (joining requests' loads in
//            layerwise / blocking mode, streamed decode-set blocks) against its compute;
//   step     the fused step time from the cost model, stalls and HBM contention;
//   account  constraint counters, HIDING per transfer against its deadline;
//   emit     tokens, first tokens, completions, per-request records, prefetch intent.
// Admission never reads a request's output length: it is only the stopping rule.
#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <string>
#include <systemc>
#include <tlm_utils/tlm_quantumkeeper.h>
#include <utility>
#include <vector>

#include "tlm/common/config.h"
#include "tlm/common/timeline.h"
#include "tlm/common/trace_event_log.h"
#include "tlm/constraints/constraints.h"
#include "tlm/host/host_config.h"
#include "tlm/host/kv_cache_if.h"
#include "tlm/sched/decode_cost_model.h"
#include "tlm/sched/decode_residency.h"
#include "workloads/request.h"

namespace kvtier {

// One request's life, written to requests.jsonl. Times are simulated seconds; -1: did not happen.
struct RequestRecord {
  uint64_t id = 0, session = 0;
  uint32_t tenant = 0;
  double arrival_s = 0.0, admitted_s = -1.0, first_token_s = -1.0, finish_s = -1.0;
  uint32_t prompt_tokens = 0, output_tokens = 0, generated_tokens = 0;
  uint64_t cached_tokens = 0;  // prompt tokens served from HBM or the tier at first admission
  // ... of those, positions found resident in HBM, and positions loaded from the tier (promoted,
  // prefetched for it or streamed) with their payload bytes as stored: cached = hbm + loaded.
  uint64_t cached_hbm_tokens = 0, loaded_tokens = 0, loaded_bytes = 0;
  uint64_t prefilled_tokens =
      0;  // prompt tokens computed, recomputation after a preemption included
  uint32_t hiding_chunks = 0,
           hiding_chunks_late = 0;  // HIDING chunks that waited for its tier data
  bool load_late = false;           // async: its load was not done by the step it was meant to join
  uint32_t preemptions = 0;
  double load_wait_s = 0.0;  // time spent outside the batch waiting for its KV (async load)
  double stall_s = 0.0;      // stalls of the steps it was in
  double max_itl_s = 0.0;    // largest gap between two of its tokens
  std::string rejected;      // empty, or why it could not run
};

struct SchedStats {
  uint64_t requests_completed = 0;
  uint64_t requests_rejected = 0;          // could never run: see rejected_* for the reasons
  uint64_t rejected_prompt_too_large = 0;  // the prompt's KV alone exceeds the whole budget
  uint64_t rejected_context_outgrew = 0;   // alone in the batch, its context outgrew the budget
  uint64_t rejected_context_window = 0;  // prompt + output beyond sched.max_model_len (on arrival)
  uint64_t rejected_stream_staging =
      0;  // streamed, its staging alone (2 groups a position) exceeds the budget
  uint64_t tokens_generated = 0;
  uint64_t steps = 0;
  uint64_t stalled_steps = 0;
  uint64_t capacity_waits = 0;  // steps where the queue head waited for KV budget
  uint64_t prefill_tokens = 0;  // prompt tokens computed (recomputation after preemption included)
  uint64_t cached_prompt_tokens = 0;  // prompt tokens served from HBM or the tier
  uint64_t peak_decode_set = 0;
  uint64_t preemptions = 0;
  uint64_t resumed = 0;
  uint64_t prefill_chunks = 0;   // prefill pieces scheduled (a prompt split over steps counts each)
  uint64_t streamed_steps = 0;   // steps that streamed decode-set blocks from the tier
  double load_wait_s = 0.0;      // sum over requests of their async load waits
  double exposed_stall_s = 0.0;  // sum of step stalls
  double stall_token_s = 0.0;    // sum over tokens of the stall in the step that made them
  double decode_kv_s = 0.0;      // decode time spent reading KV
  double decode_weights_s = 0.0;  // decode time spent streaming weights
  double busy_s = 0.0;            // time with a step in progress
  double kv_read_bytes = 0.0;     // attention reads of KV from HBM
  double end_s = 0.0;
  // The runtime's own CPU work (sched.runtime_cpu): its time over every step, the time steps
  // waited for it beyond the GPU's own (the GPU idle), and the steps that waited.
  double runtime_cpu_s = 0.0;
  double runtime_wait_s = 0.0;
  uint64_t runtime_bound_steps = 0;
  std::vector<double> ttft_s;                            // per completed request
  std::vector<std::pair<double, uint64_t>> itl_samples;  // (inter-token time, tokens that saw it)
  std::vector<RequestRecord> requests;  // one per workload request, in arrival order
};

// The KV cache as the scheduler sees it (tlm/host/kv_cache_if.h): the host control plane in a
// platform, a fake in the scheduler's own tests.
struct KvCacheParts {
  KvCacheIF& cache;
  KvIntentIF& intent;
  StreamedResidencyIF* streamed = nullptr;              // null: the decode set stays pinned in HBM
  DecodeResidency residency = DecodeResidency::Pinned;  // as configured (stats.json "serving")
};

class Scheduler : public sc_core::sc_module, private DecodeSetView {
 public:
  Scheduler(sc_core::sc_module_name name, const SchedConfig& config,
            const workload::Workload& workload, const KvCacheParts& kv, const DecodeCostModel& cost,
            uint32_t layer_groups, Constraints& constraints);

  const SchedStats& stats() const { return stats_; }
  // The scheduler's figures in stats.json: its step counts into the run's top-level group, and the
  // `serving` group (the serving options it ran with, its counts, and the control plane's
  // streamed-residency counts it drove).
  void declare_step_stats(StatGroup& run) const;
  void declare_serving_stats(StatGroup& serving) const;
  // stats.json `runtime_cpu`: the runtime's own CPU work per step, and what it cost the steps.
  // `kv_cpu_s`: the host's CPU time on KV movement (host_cpu.total_s), for the host's whole share.
  void declare_runtime_cpu_stats(StatGroup& g, double kv_cpu_s) const;
  bool done() const { return done_; }
  // Requests handed over during the run, by a router that decides at each arrival from the
  // replicas' state then (platforms/cluster_router.h). With the feed open the workload's request
  // list grows while the scheduler runs (its owner reserves the capacity first, so references
  // into it stay valid): each request is appended at its arrival time, then fed() wakes an idle
  // scheduler; the run ends once the feed is closed and every request is settled. Without it
  // (every other run) the list is fixed before the run.
  void open_feed() { feed_open_ = true; }
  void fed() { feed_event_.notify(sc_core::SC_ZERO_TIME); }
  void close_feed() {
    feed_open_ = false;
    feed_event_.notify(sc_core::SC_ZERO_TIME);
  }
  // Requests handed to this scheduler that are not yet completed or rejected (waiting, loading or
  // running, or arrived and not yet seen): what a load-aware router reads.
  uint64_t in_flight() const {
    return workload_.requests.size() - stats_.requests_completed - stats_.requests_rejected;
  }
  // The run stopped because simulated time passed sim.max_sim_s (some requests never finished).
  bool stopped_at_time_limit() const { return stopped_at_time_limit_; }
  // What the boundary can stream per second (B_tier: min of link rate and the tier device);
  // sched.stream_share of it bounds how much decode-set KV may stream per step.
  void set_stream_bandwidth(double bytes_per_s) {
    stream_bytes_per_s_ = bytes_per_s;
    decode_->set_stream_bandwidth(bytes_per_s);
  }
  // Records every step (and its layer groups), the flows from promotions to the steps that read
  // them, and per-step counters of HBM and tier occupancy and link demand.
  void set_trace(TraceEventLog* trace) { trace_ = trace; }

 private:
  enum class Phase { Waiting, Loading, Prefill, Decode, Done };
  struct Seq {
    size_t index = 0;  // into workload_.requests
    Phase phase = Phase::Waiting;
    std::unique_ptr<workload::Request> resume;  // after a preemption: the context to rebuild
    uint64_t kv_tokens = 0;      // tokens of the context with KV (prefill progress, then context)
    uint64_t target_tokens = 0;  // the prompt (or resumed context) prefill must cover
    uint32_t generated = 0;
    double load_start_s = 0.0, load_ready_s = 0.0;
    double last_token_s = 0.0;
    std::vector<Transfer> joining;  // transfers judged in the step it joins (layerwise, blocking)
    std::vector<uint64_t> flows;    // timeline flows of an async load, ended by the step it joins
    bool must_stream = false;       // admitted (streamed residency) with a prompt that did not fit
  };
  struct Chunk {
    size_t seq;
    uint64_t from, to;  // kv_tokens before and after the chunk
    uint64_t computed;  // tokens the chunk computes
  };
  struct Plan {
    std::vector<size_t> decode;   // seqs decoding one token
    std::vector<Chunk> prefill;   // prefill chunks, admission order
    std::vector<uint64_t> ids;    // request ids in the batch (streaming)
    uint64_t context_tokens = 0;  // KV the decode tokens attend to
    uint64_t new_tokens = 0, attended_pairs = 0;
    uint64_t slots = 0;    // KV growth the step needs
    uint64_t staging = 0;  // staging slots the step streams through: the largest group's
                           // streamed blocks plus `lead`
    uint64_t lead = 0;     // blocks of group g+1 that may arrive while group g computes
  };
  struct StepOutcome {
    double end_s = 0.0, stall_s = 0.0, t_step = 0.0;
    double tier_bytes = 0.0;      // what the step's layer groups needed from the tier
    double runtime_cpu_s = 0.0;   // the runtime's CPU work for the step (sched.runtime_cpu)
    double runtime_wait_s = 0.0;  // of it, what lengthened the step beyond the GPU's own time
    StepTime time;
  };

  void run();
  const workload::Request& view(const Seq& s) const;
  // The phases, in the order they run each step.
  void admit(double now_s);
  bool plan(double now_s, Plan& p);
  StepOutcome load_and_step(double now_s, const Plan& p);
  void account(const Plan& p, const StepOutcome& o, double now_s);
  void emit(const Plan& p, const StepOutcome& o, double now_s);
  void intent(double end_s, double step_s);
  // Helpers of the phases.
  Plan draft(double now_s) const;
  bool make_room(double now_s);
  // The running set as the decode residency sees it (DecodeSetView).
  uint64_t running_requests() const override { return running_.size(); }
  uint64_t running_context_tokens() const override;
  std::vector<RunningSeqView> running() const override;
  void preempt(size_t seq, double now_s);
  void reject(size_t seq, const char* reason, double now_s);
  void finish(size_t seq, double now_s);
  void judge(const Transfer& t, double deadline_s, Lateness cost, bool streamed = false);

  const SchedConfig config_;
  const workload::Workload& workload_;
  KvCacheIF& kv_;
  KvIntentIF& prefetch_;
  const DecodeResidency residency_mode_;  // host.decode_residency as configured (for stats.json)
  const DecodeCostModel& cost_;
  const uint32_t groups_;
  Constraints& constraints_;
  // Pinned or streamed, chosen once from what the KV cache offers (after config_, kv_, cost_).
  std::unique_ptr<DecodeResidencyIF> decode_;
  SchedStats stats_;
  bool done_ = false;
  bool stopped_at_time_limit_ = false;

  std::vector<Seq> seqs_;
  std::deque<size_t> waiting_;
  std::vector<size_t> loading_;
  std::vector<size_t> running_;  // prefill and decode phases, in admission order
  size_t next_arrival_ = 0;
  bool feed_open_ = false;
  sc_core::sc_event feed_event_{"feed"};
  // Seqs and records for requests the list holds that have none yet (all of them at the start).
  void register_requests();
  // Feed open: waits (in sync) until `t` or until a request is fed, whichever comes first.
  void wait_for_feed(tlm_utils::tlm_quantumkeeper& qk, double now_s, double t_s);
  double step_estimate_s_ = 0.0;  // the last step's length: when the next step will start
  bool preempted_last_step_ = false;
  double stream_bytes_per_s_ = 0.0;
  // load_and_step's per-group HIDING chunk state, kept to reuse its storage from step to step.
  std::vector<double> chunk_ready_;
  std::vector<std::vector<size_t>> chunk_readers_;
  TraceEventLog* trace_ = nullptr;
  uint64_t traced_promoted_bytes_ = 0, traced_demoted_bytes_ = 0;
  void trace_step(const Plan& p, const StepOutcome& o, double now,
                  const std::vector<double>& group_end);
};

}  // namespace kvtier
