#pragma once
// Where the decode set's KV lives while it decodes (host.decode_residency), chosen once when the
// scheduler is built (make_decode_residency):
//   PinnedResidency    every running request's KV stays in HBM; when it runs out the scheduler
//                      preempts the latest arrival. Nothing streams.
//   StreamedResidency  the decode set may outgrow the budget by what the link streams back every
//                      step within sched.stream_share of B_tier: which prompts are admitted to
//                      stream, which request spills next, the staging ring's size, and each layer
//                      group's promotions of streamed blocks into it.
// The scheduler keeps batching, preemption and the step's timing; every decision that differs
// between the two residencies is here, so the scheduler has no streaming branch of its own.
#include <cstdint>
#include <functional>
#include <memory>
#include <vector>

#include "tlm/host/host_config.h"
#include "tlm/host/kv_cache_if.h"
#include "tlm/sched/decode_cost_model.h"
#include "workloads/request.h"

namespace kvtier {

// One running request as the residency sees it.
struct RunningSeqView {
  uint64_t id = 0;
  uint64_t kv_tokens = 0;      // tokens of its context with KV
  uint64_t target_tokens = 0;  // the prompt (or resumed context) prefill must cover
  bool admitted_to_stream = false;
};

// The running set, asked only when a decision needs it (the scheduler implements it).
class DecodeSetView {
 public:
  virtual ~DecodeSetView() = default;
  // Requests running and the context their decode tokens attend to (each kv_tokens + 1).
  virtual uint64_t running_requests() const = 0;
  virtual uint64_t running_context_tokens() const = 0;
  virtual std::vector<RunningSeqView> running() const = 0;  // in admission order
};

// What admission may do with the queue head.
struct AdmissionCheck {
  enum class Verdict { Admit, WaitForRoom, RejectPromptExceedsBudget, RejectStreamStaging };
  Verdict verdict = Verdict::Admit;
  uint64_t first_tokens = 0;  // prompt tokens whose slots it needs now
  bool must_stream = false;   // admitted on the premise that it streams
  uint64_t staging = 0;       // slots its streamed positions pass through, kept free beside it
};

// What one layer group of a step read from the tier: the blocks (StreamResult) and which of the
// step's requests read any, as positions in the step's id list (none when no block was read).
struct GroupStream : StreamResult {
  std::vector<size_t> readers;
};

class DecodeResidencyIF {
 public:
  virtual ~DecodeResidencyIF() = default;
  virtual bool streams() const = 0;
  // B_tier as the scheduler knows it before the run (the link's raw rate and the tier device).
  virtual void set_stream_bandwidth(double bytes_per_s) = 0;

  // ---- Admission ----
  // Nothing runs: staging held for streamed steps goes back.
  virtual void idle(double now_s) = 0;
  // Slots promised to admitted prompts not yet prefilled, as admission counts them.
  virtual uint64_t pending_slots(uint64_t pending) const = 0;
  // Whether the queue head `v` may be admitted now beside `pending` promised slots, leaving
  // `watermark` free; `preempted_before`: it ran and was preempted.
  virtual AdmissionCheck check(const workload::Request& v, uint64_t watermark, uint64_t pending,
                               bool preempted_before) const = 0;
  // An admitted prompt that streams promotes only what fits beside its first chunk.
  virtual void limit_promotions(const AdmissionCheck& c, uint64_t watermark, uint64_t pending,
                                LoadPlan& lp) const = 0;

  // ---- Planning a step ----
  // Staging slots a step over `ids` streams through (the largest streamed group plus a lead of
  // what the link moves in one group's compute), and that lead; `step_s` gives the step's length
  // (asked only when something streams).
  virtual void size_staging(const std::vector<uint64_t>& ids, const std::function<double()>& step_s,
                            uint64_t* staging, uint64_t* lead) const = 0;
  virtual uint64_t staging_slots() const = 0;
  // Holds exactly `slots` staging slots (false: they could not be had).
  virtual bool hold_staging(uint64_t slots, double now_s) = 0;
  // Short of room: moves one position of the running set to the tier while every streamed block
  // stays within the stream share (or whatever a context that cannot fit alone must). False: the
  // scheduler preempts instead.
  virtual bool spill_within_share(double now_s) = 0;
  // The last request running is out of room: its own positions go to the tier. False: none can.
  virtual bool spill_alone(uint64_t id, double now_s) = 0;

  // ---- The step ----
  // A step begins holding `staging` slots: whether it streams (pinned residency never does). A
  // step that streams nothing drops the early copies no one will read.
  virtual bool begin_step(uint64_t staging, double now_s) = 0;
  // Layer group `g` of a streaming step reads the decode set's blocks that live in the tier:
  // the group's lead issued at `issue_s`, the rest at `rest_issue_s`, each judged against
  // `deadline_s`. `ids`: the step's requests (decode, then prefill). Nothing in a step that does
  // not stream.
  virtual GroupStream read_group(const std::vector<uint64_t>& ids, uint32_t g, double issue_s,
                                 double deadline_s, uint64_t lead, double rest_issue_s) = 0;
  // Group `g` of the step ended at `done_s` (its staging slots released).
  virtual void group_done(const std::vector<uint64_t>& ids, uint32_t g, double done_s) = 0;
  // After the last group: the next step's group 0 goes now (issued at `issue_s`, due at
  // `deadline_s`, at most `lead`), and the step's staging discards are posted.
  virtual void step_done(const std::vector<uint64_t>& ids, double issue_s, double deadline_s,
                         uint64_t lead) = 0;
  virtual const StreamedResidencyStats& stats() const = 0;
};

// Streamed when the KV cache offers streaming (`streamed` not null), else pinned.
std::unique_ptr<DecodeResidencyIF> make_decode_residency(
    StreamedResidencyIF* streamed, const KvCacheIF& kv, const DecodeSetView& running,
    const DecodeCostModel& cost, const SchedConfig& config, uint32_t groups);

}  // namespace kvtier
