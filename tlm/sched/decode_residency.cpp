#include "tlm/sched/decode_residency.h"

#include <algorithm>
#include <cmath>
#include <systemc>

namespace kvtier {

namespace {

// Pinned residency: the decode set's KV stays in HBM. A prompt runs only if it and the block its
// first token opens (or the watermark) fit the whole budget; room is made by preemption alone.
class PinnedResidency final : public DecodeResidencyIF {
 public:
  PinnedResidency(const KvCacheIF& kv, uint32_t groups) : kv_(kv), groups_(groups) {}

  bool streams() const override { return false; }
  void set_stream_bandwidth(double) override {}
  void idle(double) override {}
  uint64_t pending_slots(uint64_t pending) const override { return pending; }
  AdmissionCheck check(const workload::Request& v, uint64_t watermark, uint64_t,
                       bool) const override {
    AdmissionCheck c;
    // Never runnable: its prompt (plus the block its first token opens, or the watermark)
    // exceeds the whole budget and nothing may move to the tier. The output length is never
    // consulted.
    if (kv_.prompt_slots(v) + std::max<uint64_t>(groups_, watermark) > kv_.budget_blocks())
      c.verdict = AdmissionCheck::Verdict::RejectPromptExceedsBudget;
    c.first_tokens = v.prompt_tokens;
    return c;
  }
  void limit_promotions(const AdmissionCheck&, uint64_t, uint64_t, LoadPlan&) const override {}
  void size_staging(const std::vector<uint64_t>&, const std::function<double()>&, uint64_t* staging,
                    uint64_t* lead) const override {
    *staging = *lead = 0;
  }
  uint64_t staging_slots() const override { return 0; }
  bool hold_staging(uint64_t slots, double) override { return slots == 0; }
  bool spill_within_share(double) override { return false; }
  bool spill_alone(uint64_t, double) override { return false; }
  bool begin_step(uint64_t, double) override { return false; }
  GroupStream read_group(const std::vector<uint64_t>&, uint32_t, double, double, uint64_t,
                         double) override {
    return {};
  }
  void group_done(const std::vector<uint64_t>&, uint32_t, double) override {}
  void step_done(const std::vector<uint64_t>&, double, double, uint64_t) override {}
  const StreamedResidencyStats& stats() const override { return nothing_; }

 private:
  const KvCacheIF& kv_;
  const uint32_t groups_;
  const StreamedResidencyStats nothing_{};
};

class StreamedResidency final : public DecodeResidencyIF {
 public:
  StreamedResidency(StreamedResidencyIF& tier, const KvCacheIF& kv, const DecodeSetView& running,
                    const DecodeCostModel& cost, const SchedConfig& config, uint32_t groups)
      : tier_(tier), kv_(kv), running_(running), cost_(cost), config_(config), groups_(groups) {}

  bool streams() const override { return true; }
  void set_stream_bandwidth(double bytes_per_s) override { stream_bytes_per_s_ = bytes_per_s; }

  void idle(double now_s) override {
    // Staging is held from one streamed step to the next; with nothing running it goes back.
    if (tier_.staging_slots() && !tier_.set_staging(0, now_s))
      SC_REPORT_FATAL("kvtier/sched", "staging slots could not be released");
  }
  uint64_t pending_slots(uint64_t pending) const override {
    return std::min(pending, kv_.available_slots());  // a streamed prompt may exceed the budget
  }

  AdmissionCheck check(const workload::Request& v, uint64_t watermark, uint64_t pending,
                       bool preempted_before) const override {
    AdmissionCheck c;
    // With streamed residency a prompt beyond the whole budget streams, unless
    // sched.oversized_prompt = reject.
    if (config_.oversized_prompt == OversizedPrompt::Reject &&
        kv_.prompt_slots(v) + std::max<uint64_t>(groups_, watermark) > kv_.budget_blocks()) {
      c.verdict = AdmissionCheck::Verdict::RejectPromptExceedsBudget;
      return c;
    }
    c.first_tokens = std::min<uint64_t>(v.prompt_tokens, config_.max_batched_tokens);
    // A prompt that does not fit streams: beside its first chunk it needs the staging its
    // streamed positions pass through, at most two layer groups' worth of every prompt position.
    const uint64_t prompt_slots = kv_.prompt_slots(v);
    c.must_stream = prompt_slots + watermark + pending > kv_.available_slots();
    if (c.must_stream && fits_alone(prompt_slots) &&
        (preempted_before || prompt_slots + watermark + pending - kv_.available_slots() >
                                 stream_budget_blocks(decode_step_s(v.prompt_tokens)))) {
      // It would fit alone: it waits for room, as on pinned residency, unless what it lacks
      // streams within sched.stream_share of the link over the decode steps it will stream in
      // (beside the running set), not over the last step, which may have been a long prefill
      // chunk. A preempted request waits for room in any case: it was preempted because the
      // decode set's streaming outgrew the share, and admitted to stream again it would be
      // preempted again a few steps later, over and over.
      c.verdict = AdmissionCheck::Verdict::WaitForRoom;
      return c;
    }
    // Staging for a prompt that streams: one layer group of every position (the group that
    // computes) and a lead of at least one block (size_staging(): the ring).
    c.staging =
        c.must_stream ? (v.prompt_tokens + kv_.block_tokens() - 1) / kv_.block_tokens() + 1 : 0;
    if (c.must_stream &&
        kv_.context_slots(c.first_tokens) + c.staging + watermark > kv_.budget_blocks()) {
      // Even on an empty GPU it could not stream: the computing group holds one layer group of
      // every position, so a context of G budgets or more (G groups) cannot run. Refused with
      // that reason rather than waiting for room that never comes.
      c.verdict = AdmissionCheck::Verdict::RejectStreamStaging;
    }
    return c;
  }

  void limit_promotions(const AdmissionCheck& c, uint64_t watermark, uint64_t pending,
                        LoadPlan& lp) const override {
    if (!c.must_stream) return;
    // Promote only what fits beside the first chunk and the prompts ahead; the rest streams.
    // A prompt that fits (checked above) promotes all its tier hits: limiting it too would
    // count its first chunk's cached positions twice and stream tier hits that have room.
    const uint64_t held = watermark + pending;
    lp.promote_room = kv_.available_slots() > held ? kv_.available_slots() - held : 0;
    lp.keep_free = watermark;
    lp.first_tokens = c.first_tokens;
  }

  void size_staging(const std::vector<uint64_t>& ids, const std::function<double()>& step_s,
                    uint64_t* staging, uint64_t* lead) const override {
    // Staging is a ring: the group that computes holds its streamed blocks, and the next group's
    // first blocks land in the rest while it computes (the lead); the others follow when the
    // computing group releases its slots. A lead of what the link moves in one group's compute
    // keeps the link busy, so a link-bound step takes its streamed bytes over B_tier; more would
    // only hold slots. At most a whole group: then it is double buffering. (Two whole groups of
    // every streamed position could never stream a context of more than G/2 budgets.)
    *staging = *lead = 0;
    uint64_t largest = 0;
    for (uint32_t g = 0; g < groups_; ++g)
      largest = std::max(largest, tier_.streamed_blocks(ids, g));
    if (largest) {
      *lead = std::min(largest, stream_lead_blocks(step_s()));
      *staging = largest + *lead;
    }
  }
  uint64_t staging_slots() const override { return tier_.staging_slots(); }
  bool hold_staging(uint64_t slots, double now_s) override {
    return tier_.set_staging(slots, now_s);
  }

  bool spill_within_share(double now_s) override {
    // The decode set's KV may exceed the budget by what the link can stream back every step: one
    // more position moves to the tier only while all streamed blocks together stay within
    // sched.stream_share of B_tier over a decode step of the running set. The request that
    // already streams goes first (its positions are the oldest), else the one with the longest
    // context.
    const double step_s = decode_step_s();
    const std::vector<RunningSeqView> running = running_.running();
    uint64_t streamed = 0;
    size_t pick = running.size();
    int pick_rank = -1;
    for (size_t k = 0; k < running.size(); ++k) {
      const RunningSeqView& s = running[k];
      const uint64_t n = tier_.streamed_blocks_total(s.id);
      streamed += n;
      // Preference: admitted to stream, then already streaming, then the longest context.
      const int rank = s.admitted_to_stream ? 2 : n > 0 ? 1 : 0;
      if (rank > pick_rank || (rank == pick_rank && s.kv_tokens > running[pick].kv_tokens)) {
        pick = k;
        pick_rank = rank;
      }
    }
    if (pick == running.size()) return false;
    // Every spill stays within the share; beyond it the latest arrival is preempted, as on
    // pinned residency. Only a context that does not fit the budget even alone streams whatever
    // it must: nothing else could run it. (A request admitted to stream whose context would fit
    // alone gets no such pass: it would become the sink of every running request's growth,
    // streaming far more than the share and far more than it lacked when it was admitted.)
    const RunningSeqView& ps = running[pick];
    if (fits_alone(kv_.context_slots(std::max(ps.kv_tokens, ps.target_tokens))) &&
        streamed + groups_ > stream_budget_blocks(step_s))
      return false;
    return spill_alone(ps.id, now_s);
  }
  bool spill_alone(uint64_t id, double now_s) override {
    uint32_t spilled = 0;
    while (spilled < groups_ && tier_.spill(id, now_s)) ++spilled;
    return spilled > 0;
  }

  bool begin_step(uint64_t staging, double now_s) override {
    streaming_step_ = staging > 0;
    if (!streaming_step_) tier_.drop_streamed_ahead(now_s);
    return streaming_step_;
  }
  GroupStream read_group(const std::vector<uint64_t>& ids, uint32_t g, double issue_s,
                         double deadline_s, uint64_t lead, double rest_issue_s) override {
    GroupStream r;
    if (!streaming_step_) return r;
    // Who reads streamed blocks of this group (asked before stream() restores any).
    for (size_t k = 0; k < ids.size(); ++k)
      if (tier_.streams_in_group(ids[k], g)) r.readers.push_back(k);
    static_cast<StreamResult&>(r) = tier_.stream(ids, g, issue_s, deadline_s, lead, rest_issue_s);
    if (!r.blocks) r.readers.clear();
    return r;
  }
  void group_done(const std::vector<uint64_t>& ids, uint32_t g, double done_s) override {
    if (streaming_step_) tier_.stream_done(ids, g, done_s);
  }
  void step_done(const std::vector<uint64_t>& ids, double issue_s, double deadline_s,
                 uint64_t lead) override {
    if (!streaming_step_) return;
    tier_.stream_ahead(ids, issue_s, deadline_s, lead);
    tier_.stream_finish();
  }
  const StreamedResidencyStats& stats() const override { return tier_.streaming_stats(); }

 private:
  // A context of `slots` slots fits the budget alone, with the block its next token opens.
  bool fits_alone(uint64_t slots) const { return slots + groups_ <= kv_.budget_blocks(); }
  // A decode step of every running request (and of a newcomer with that many tokens of KV): the
  // step streamed positions are read in for as long as they stream. Not the planned step: one
  // with a prefill chunk is compute-bound and many times longer, and a share judged against it
  // spills positions that the decode steps after it (the rest of those requests' lives) then
  // stream at several times B_tier. No prefill token is in it: each request makes its one decode
  // token (a prefill of n tokens beside them would lengthen the step and so the share).
  double decode_step_s(uint64_t newcomer_tokens = 0) const {
    const uint64_t context = running_.running_context_tokens();
    const uint64_t n = running_.running_requests() + (newcomer_tokens > 0);
    return cost_.step(n, context + newcomer_tokens, 0, 0, 0).total_s();
  }
  // Blocks that may stream per step within sched.stream_share of B_tier over a step of step_s.
  uint64_t stream_budget_blocks(double step_s) const {
    return static_cast<uint64_t>(config_.stream_share * stream_bytes_per_s_ * step_s /
                                 static_cast<double>(kv_.block_bytes()));
  }
  // Streamed blocks the link moves during one layer group's compute in a step of step_s (at
  // least one): the lead that keeps the link busy while a group computes.
  uint64_t stream_lead_blocks(double step_s) const {
    const double per_group =
        stream_bytes_per_s_ * step_s / groups_ / static_cast<double>(kv_.block_bytes());
    return 1 + static_cast<uint64_t>(std::ceil(per_group));
  }

  StreamedResidencyIF& tier_;
  bool streaming_step_ = false;  // the current step holds staging (begin_step())
  const KvCacheIF& kv_;
  const DecodeSetView& running_;
  const DecodeCostModel& cost_;
  const SchedConfig& config_;
  const uint32_t groups_;
  double stream_bytes_per_s_ = 0.0;
};

}  // namespace

std::unique_ptr<DecodeResidencyIF> make_decode_residency(
    StreamedResidencyIF* streamed, const KvCacheIF& kv, const DecodeSetView& running,
    const DecodeCostModel& cost, const SchedConfig& config, uint32_t groups) {
  if (streamed)
    return std::make_unique<StreamedResidency>(*streamed, kv, running, cost, config, groups);
  return std::make_unique<PinnedResidency>(kv, groups);
}

}  // namespace kvtier
