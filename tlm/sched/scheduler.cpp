#include "tlm/sched/scheduler.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <tlm_utils/tlm_quantumkeeper.h>

namespace kvtier {

namespace {
constexpr double kEps = 1e-12;  // simulated time has picosecond resolution
}

Scheduler::Scheduler(sc_core::sc_module_name name, const SchedConfig& config,
                     const workload::Workload& workload, const KvCacheParts& kv,
                     const DecodeCostModel& cost, uint32_t layer_groups, Constraints& constraints)
    : sc_core::sc_module(name),
      config_(config),
      workload_(workload),
      kv_(kv.cache),
      prefetch_(kv.intent),
      residency_mode_(kv.residency),
      cost_(cost),
      groups_(layer_groups),
      constraints_(constraints),
      decode_(make_decode_residency(kv.streamed, kv.cache, *this, cost, config_, layer_groups)) {
  SC_HAS_PROCESS(Scheduler);  // SystemC 2.3.4 still needs it for SC_THREAD outside SC_CTOR
  SC_THREAD(run);
  // Loosely-timed transactions nest deeply (descriptor -> link -> controller -> DMA -> link ->
  // HBM -> completion -> host); SystemC's 64 KiB default thread stack is too small for that.
  set_stack_size(8 * 1024 * 1024);
}

const workload::Request& Scheduler::view(const Seq& s) const {
  return s.resume ? *s.resume : workload_.requests[s.index];
}

void Scheduler::run() {
  tlm_utils::tlm_quantumkeeper qk;
  tlm_utils::tlm_quantumkeeper::set_global_quantum(
      sc_core::sc_time(config_.quantum_us, sc_core::SC_US));
  qk.reset();

  const auto& reqs = workload_.requests;
  register_requests();
  size_t n = reqs.size();
  for (;;) {
    if (reqs.size() != n) {
      register_requests();  // a router fed requests since the last pass
      n = reqs.size();
    }
    if (!feed_open_ && stats_.requests_completed + stats_.requests_rejected >= n) break;
    const double now = to_seconds(qk.get_current_time());
    if (config_.max_sim_s > 0 && now > config_.max_sim_s) {
      // sim.max_sim_s: no accepted input may keep a run going without bound. What ran is kept.
      stopped_at_time_limit_ = true;
      break;
    }
    // Arrivals up to now (an arrival within 1 ns of now has arrived).
    while (next_arrival_ < n && reqs[next_arrival_].arrival_s <= now + 1e-9) {
      const size_t i = next_arrival_++;
      const workload::Request& r = reqs[i];
      if (config_.max_model_len &&
          static_cast<uint64_t>(r.prompt_tokens) + r.output_tokens > config_.max_model_len) {
        // Prompt plus its maximum output beyond the context window: refused on arrival, as vLLM
        // refuses prompt + max_tokens > max_model_len. The server never sees it run.
        seqs_[i].phase = Phase::Done;
        stats_.requests[i].rejected = "context_window";
        ++stats_.requests_rejected;
        ++stats_.rejected_context_window;
        continue;
      }
      kv_.on_arrival(r, r.arrival_s);
      waiting_.push_back(i);
    }
    // Async loads that have arrived join the batch.
    for (size_t k = 0; k < loading_.size();) {
      Seq& s = seqs_[loading_[k]];
      if (s.load_ready_s <= now + kEps) {
        stats_.requests[s.index].load_wait_s += s.load_ready_s - s.load_start_s;
        stats_.load_wait_s += s.load_ready_s - s.load_start_s;
        s.phase = Phase::Prefill;
        running_.push_back(loading_[k]);
        loading_.erase(loading_.begin() + static_cast<std::ptrdiff_t>(k));
      } else {
        ++k;
      }
    }

    // vLLM schedules waiting requests only in a step that preempted nobody: admitting right after a
    // preemption would only take back the room the preemption made.
    const bool skip_admission = preempted_last_step_;
    preempted_last_step_ = false;
    if (!skip_admission) admit(now);

    Plan p;
    const uint64_t settled = stats_.requests_completed + stats_.requests_rejected;
    const bool runnable = plan(now, p);
    if (!runnable && stats_.requests_completed + stats_.requests_rejected != settled)
      continue;  // admit again
    if (!runnable && skip_admission && !waiting_.empty())
      continue;  // everything was preempted: admit now
    if (!runnable && running_.empty() && loading_.empty() && !waiting_.empty() &&
        prefetch_.release_prefetch_pins(now))
      continue;  // the queue head waited behind prefetch pins: admit again without them
    if (!runnable) {
      // Nothing can step: wait for the next arrival or the next async load to land.
      double t = std::numeric_limits<double>::infinity();
      if (next_arrival_ < n) t = reqs[next_arrival_].arrival_s;
      for (size_t i : loading_) t = std::min(t, seqs_[i].load_ready_s);
      // An idle GPU still prefetches: wake when the next-turn predictor expects a session within
      // the prefetch horizon, before the next arrival.
      const double lead = prefetch_.prefetch_horizon_steps() * std::max(step_estimate_s_, 1e-6);
      const double predicted = prefetch_.next_prediction_s(lead);
      if (predicted < KvIntentIF::kNever && predicted < t && predicted > now + kEps) {
        if (feed_open_) {
          wait_for_feed(qk, now, predicted);
          // A request fed before the predicted time is seen first; the prediction stands.
          if (to_seconds(sc_core::sc_time_stamp()) + kEps < predicted) continue;
        } else {
          qk.inc(seconds(predicted - now));
          qk.sync();
        }
        intent(predicted, step_estimate_s_);
        continue;
      }
      if (feed_open_) {
        wait_for_feed(qk, now, t);
        continue;
      }
      if (t == std::numeric_limits<double>::infinity()) {
        if (stats_.requests_completed + stats_.requests_rejected >= n) break;
        SC_REPORT_FATAL(
            "kvtier/sched",
            ("nothing runs and nothing can be admitted: KV accounting is inconsistent (" +
             std::to_string(waiting_.size()) + " waiting, " +
             std::to_string(kv_.occupancy().pinned_slots) + " slots pinned, " +
             std::to_string(kv_.available_slots()) + " available; head prompt " +
             (waiting_.empty() ? std::string("-")
                               : std::to_string(view(seqs_[waiting_.front()]).prompt_tokens)) +
             ", " + std::to_string(running_.size()) + " running, " +
             std::to_string(loading_.size()) + " loading)")
                .c_str());
      }
      qk.inc(seconds(std::max(0.0, t - now)));
      qk.sync();
      continue;
    }

    const StepOutcome o = load_and_step(now, p);
    account(p, o, now);
    emit(p, o, now);
    step_estimate_s_ = o.t_step;
    intent(o.end_s, o.t_step);

    qk.inc(seconds(o.end_s - now));
    if (config_.lockstep || qk.need_sync()) qk.sync();
  }
  qk.sync();
  stats_.end_s = to_seconds(sc_core::sc_time_stamp());
  kv_.finish(stats_.end_s);
  done_ = true;
}

void Scheduler::register_requests() {
  const auto& reqs = workload_.requests;
  const size_t had = seqs_.size();
  seqs_.resize(reqs.size());
  stats_.requests.resize(reqs.size());
  for (size_t i = had; i < reqs.size(); ++i) {
    seqs_[i].index = i;
    seqs_[i].target_tokens = reqs[i].prompt_tokens;
    RequestRecord& rec = stats_.requests[i];
    rec.id = reqs[i].id;
    rec.session = reqs[i].session;
    rec.tenant = reqs[i].tenant;
    rec.arrival_s = reqs[i].arrival_s;
    rec.prompt_tokens = reqs[i].prompt_tokens;
    rec.output_tokens = reqs[i].output_tokens;
  }
}

void Scheduler::wait_for_feed(tlm_utils::tlm_quantumkeeper& qk, double now_s, double t_s) {
  qk.sync();  // local time caught up: sc_time_stamp() is now_s
  // The sync itself waited (a delta cycle at least): a request fed, or the feed closed, while it
  // did has notified already, and is seen here instead of by the wait.
  if (workload_.requests.size() != seqs_.size() || !feed_open_) return;
  if (t_s == std::numeric_limits<double>::infinity()) wait(feed_event_);
  else wait(seconds(std::max(0.0, t_s - now_s)), feed_event_);
  qk.reset();
}

// ---- admit ----------------------------------------------------------------------------------

void Scheduler::admit(double now) {
  if (running_.empty()) decode_->idle(now);
  // vLLM's watermark: leave 1 % of the budget free at admission so that running requests can grow
  // a little before anyone has to be preempted.
  const uint64_t watermark = kv_.budget_blocks() / 100;
  // Prompts already admitted but not yet fully prefilled will take their slots first (running
  // requests are scheduled before waiting ones): a newcomer fits only beside them. The prompt is
  // known at arrival; only the output length is not.
  uint64_t pending = 0;
  for (size_t k : running_)
    if (seqs_[k].phase == Phase::Prefill)
      pending += kv_.growth_slots(view(seqs_[k]).id, seqs_[k].target_tokens);
  for (size_t k : loading_) pending += kv_.growth_slots(view(seqs_[k]).id, seqs_[k].target_tokens);
  pending = decode_->pending_slots(pending);
  while (!waiting_.empty() && running_.size() + loading_.size() < config_.max_decode_set) {
    const size_t i = waiting_.front();
    Seq& s = seqs_[i];
    const workload::Request& v = view(s);
    RequestRecord& rec = stats_.requests[i];
    // The residency decides whether the prompt can ever run, and whether it must stream.
    const AdmissionCheck check = decode_->check(v, watermark, pending, rec.preemptions > 0);
    if (check.verdict == AdmissionCheck::Verdict::RejectPromptExceedsBudget) {
      waiting_.pop_front();
      reject(i, "prompt_exceeds_kv_budget", now);
      ++stats_.rejected_prompt_too_large;
      continue;
    }
    if (check.verdict == AdmissionCheck::Verdict::WaitForRoom) {
      ++stats_.capacity_waits;
      constraints_.capacity.queue_head_waited();
      break;
    }
    if (check.verdict == AdmissionCheck::Verdict::RejectStreamStaging) {
      waiting_.pop_front();
      reject(i, "prompt_exceeds_stream_staging", now);
      ++stats_.rejected_stream_staging;
      continue;
    }
    if (!kv_.can_admit(v, check.first_tokens, watermark + pending + check.staging)) {
      ++stats_.capacity_waits;
      constraints_.capacity.queue_head_waited();
      break;
    }
    waiting_.pop_front();
    LoadPlan lp;
    lp.step_s = step_estimate_s_;
    // async: the step a load is meant for is the next one; inline modes: the one starting now.
    lp.step_start_s = config_.kv_load == KvLoad::Async ? now + step_estimate_s_ : now;
    lp.promote_from_tier = !(rec.preemptions > 0 && config_.preemption == Preemption::Recompute);
    decode_->limit_promotions(check, watermark, pending, lp);
    // A prompt that does not fit beside what is held is admitted on the premise that it streams:
    // it is the first to spill (DecodeResidencyIF::spill_within_share), within the share like
    // anyone.
    s.must_stream = check.must_stream;
    const AdmitResult a = kv_.admit(v, now, lp);
    pending += kv_.growth_slots(v.id, v.prompt_tokens);
    const bool first_admission = rec.admitted_s < 0;
    if (first_admission) {
      // An arrival within 1 ns of now has arrived (the clock rounds to its tick): it is admitted
      // no earlier than it arrived.
      rec.admitted_s = std::max(now, rec.arrival_s);
      rec.cached_tokens = a.cached_tokens;
      rec.cached_hbm_tokens = a.cached_hbm_tokens;
      rec.loaded_tokens = a.loaded_tokens;
      rec.loaded_bytes = a.loaded_bytes;
    } else {
      ++stats_.resumed;
    }
    stats_.cached_prompt_tokens += std::min<uint64_t>(a.cached_tokens, v.prompt_tokens);
    s.kv_tokens = 0;
    s.target_tokens = v.prompt_tokens;
    s.joining.clear();
    if (config_.kv_load == KvLoad::Async && !a.transfers.empty()) {
      // The request's whole load, against the start of the step it was meant to join.
      if (constraints_.hiding.async_load(a.load_ready_s, lp.step_start_s,
                                         prefetch_.prefetch_slack_s()))
        rec.load_late = true;
    }
    if (config_.kv_load == KvLoad::Async && a.load_ready_s > now + kEps) {
      // Waits outside the batch; lateness only delays this request (its TTFT or resume).
      for (const Transfer& t : a.transfers) judge(t, t.deadline_s, Lateness::DelaysRequest);
      if (trace_)
        for (const Transfer& t : a.transfers) s.flows.push_back(t.flow);
      s.phase = Phase::Loading;
      s.load_ready_s = a.load_ready_s;
      s.load_start_s = now;
      loading_.push_back(i);
    } else {
      if (config_.kv_load == KvLoad::Async) {
        for (const Transfer& t : a.transfers)
          judge(t, t.deadline_s, Lateness::DelaysRequest);  // all in time
        if (trace_)
          for (const Transfer& t : a.transfers) s.flows.push_back(t.flow);
      } else s.joining = a.transfers;  // judged by the step it joins
      s.phase = Phase::Prefill;
      running_.push_back(i);
    }
  }
}

// ---- plan -----------------------------------------------------------------------------------

Scheduler::Plan Scheduler::draft(double) const {
  Plan p;
  uint64_t budget = config_.max_batched_tokens;
  uint64_t prefill_cap = config_.max_prefill_tokens;
  // Decode tokens first: every decoding request makes one token.
  for (size_t i : running_) {
    const Seq& s = seqs_[i];
    if (s.phase != Phase::Decode) continue;
    p.decode.push_back(i);
    p.context_tokens += s.kv_tokens + 1;  // the step writes and reads the new token's KV too
    p.slots += kv_.growth_slots(view(s).id, s.kv_tokens + 1);
    budget = budget > 0 ? budget - 1 : 0;
  }
  // Then prefill chunks, in admission order, within what the token budget leaves.
  for (size_t i : running_) {
    const Seq& s = seqs_[i];
    if (s.phase != Phase::Prefill) continue;
    const uint64_t room = std::min(budget, prefill_cap);
    if (room == 0) break;
    const uint64_t id = view(s).id;
    // Positions admission found cached are loaded, not computed. A fully cached prompt still
    // computes its last token to produce the next output token.
    uint64_t computed = 0;
    const uint64_t to = kv_.prefill_reach(id, s.kv_tokens, room, s.target_tokens, &computed);
    if (to >= s.target_tokens && computed == 0) computed = 1;
    p.prefill.push_back({i, s.kv_tokens, to, computed});
    p.new_tokens += computed;
    // Attention of the chunk: each computed token attends to everything before it.
    p.attended_pairs += computed * (to - computed) + computed * (computed + 1) / 2;
    p.slots += kv_.growth_slots(id, to);
    budget -= std::min(budget, computed);
    prefill_cap -= std::min(prefill_cap, computed);
    if (budget == 0 || prefill_cap == 0) break;
  }
  for (size_t i : p.decode) p.ids.push_back(view(seqs_[i]).id);
  for (const Chunk& c : p.prefill) p.ids.push_back(view(seqs_[c.seq]).id);
  decode_->size_staging(
      p.ids,
      [&] {
        return cost_
            .step(p.decode.size(), p.context_tokens, p.new_tokens, p.attended_pairs,
                  p.prefill.size())
            .total_s();
      },
      &p.staging, &p.lead);
  return p;
}

uint64_t Scheduler::running_context_tokens() const {
  uint64_t context = 0;
  for (size_t i : running_) context += seqs_[i].kv_tokens + 1;
  return context;
}

std::vector<RunningSeqView> Scheduler::running() const {
  std::vector<RunningSeqView> v;
  v.reserve(running_.size());
  for (size_t i : running_) {
    const Seq& s = seqs_[i];
    v.push_back({view(s).id, s.kv_tokens, s.target_tokens, s.must_stream});
  }
  return v;
}

bool Scheduler::make_room(double now) {
  // Contention is resolved by preemption, the latest arrival first (vLLM). With streamed
  // residency the decode set may first outgrow the budget by what the link can stream within
  // sched.stream_share of B_tier per step; and a context that does not fit even alone streams
  // whatever it must rather than being rejected.
  if (running_.empty()) return false;
  if (decode_->spill_within_share(now)) return true;
  size_t victim = running_.front();
  auto later = [&](size_t a, size_t b) {
    const auto& x = workload_.requests[a];
    const auto& y = workload_.requests[b];
    return x.arrival_s > y.arrival_s || (x.arrival_s == y.arrival_s && x.id > y.id);
  };
  for (size_t i : running_)
    if (later(i, victim)) victim = i;
  for (size_t i : loading_)
    if (later(i, victim)) victim = i;
  if (running_.size() > 1 || !loading_.empty()) {
    preempt(victim, now);
    return true;
  }
  if (decode_->spill_alone(view(seqs_[victim]).id, now)) return true;
  // Alone and still out of room: its context can never fit.
  reject(victim, "context_outgrew_kv_budget", now);
  ++stats_.rejected_context_outgrew;
  return true;
}

bool Scheduler::plan(double now, Plan& p) {
  for (;;) {
    if (running_.empty()) return false;
    p = draft(now);
    if (p.decode.empty() && p.prefill.empty()) return false;
    // Staging already held is given back or topped up to p.staging (set_staging below), so what
    // the step needs is its growth and its staging against what is free plus what is held.
    const uint64_t have = kv_.available_slots() + decode_->staging_slots();
    if (p.slots + p.staging <= have) break;
    // Short of room: first a spill within the stream budget (a context that cannot fit alone
    // spills whatever it must), since a streamed position frees G - 1 slots net and keeps the
    // lead that hides its transfers; then a shorter lead, which costs time (less of the next
    // group arrives while one computes) but no request; only then a preemption.
    if (decode_->spill_within_share(now)) continue;
    if (p.lead > 1) {
      const uint64_t cut = std::min(p.slots + p.staging - have, p.lead - 1);
      p.lead -= cut;
      p.staging -= cut;
    }
    if (p.slots + p.staging <= have) break;
    if (!make_room(now)) return false;
  }
  if (!decode_->hold_staging(p.staging, now))
    SC_REPORT_FATAL("kvtier/sched", "staging slots checked free could not be taken");
  // KV grows on demand: the slots this step writes are taken now.
  for (size_t i : p.decode) kv_.grow(view(seqs_[i]).id, seqs_[i].kv_tokens + 1, now);
  for (const Chunk& c : p.prefill) kv_.grow(view(seqs_[c.seq]).id, c.to, now);
  kv_.step_grown(now);
  return true;
}

void Scheduler::preempt(size_t i, double now) {
  Seq& s = seqs_[i];
  RequestRecord& rec = stats_.requests[i];
  const workload::Request& base = workload_.requests[i];
  kv_.preempt(view(s).id, now);
  // Its context to rebuild on resume: what it had with KV (a decode request: prompt + generated).
  // A decoding request also feeds its last generated token, whose KV was not written yet.
  const uint64_t context = s.phase == Phase::Decode ? s.kv_tokens + 1 : base.prompt_tokens;
  auto r = std::make_unique<workload::Request>(base);
  r->prompt_tokens = static_cast<uint32_t>(std::max<uint64_t>(context, base.prompt_tokens));
  s.resume = std::move(r);
  s.kv_tokens = 0;
  s.joining.clear();
  ++rec.preemptions;
  ++stats_.preemptions;
  preempted_last_step_ = true;
  constraints_.capacity.preempted();
  auto& list = s.phase == Phase::Loading ? loading_ : running_;
  list.erase(std::find(list.begin(), list.end(), i));
  s.phase = Phase::Waiting;
  waiting_.push_front(i);  // resumes first (vLLM prepends preempted requests)
}

void Scheduler::reject(size_t i, const char* reason, double now) {
  Seq& s = seqs_[i];
  if (s.phase == Phase::Prefill || s.phase == Phase::Decode) {
    kv_.preempt(view(s).id, now);
    running_.erase(std::find(running_.begin(), running_.end(), i));
  }
  s.phase = Phase::Done;
  stats_.requests[i].rejected = reason;
  ++stats_.requests_rejected;
  constraints_.capacity.rejected();
}

void Scheduler::finish(size_t i, double now) {
  Seq& s = seqs_[i];
  kv_.release(view(s).id, workload_.requests[i], now);
  s.phase = Phase::Done;
  s.resume.reset();
  stats_.requests[i].finish_s = now;
  ++stats_.requests_completed;
}

// ---- load and step --------------------------------------------------------------------------

Scheduler::StepOutcome Scheduler::load_and_step(double now, const Plan& p) {
  StepOutcome o;
  o.time = cost_.step(p.decode.size(), p.context_tokens, p.new_tokens, p.attended_pairs,
                      p.prefill.size());
  o.t_step = o.time.total_s();
  const double tg = o.t_step / groups_;
  // HIDING per chunk: what layer group g's read waits for from the tier, against the time the
  // group would start had no transfer stalled this step (its planned start).
  // Buffers kept across steps (members): a step reuses them instead of allocating G vectors.
  std::vector<double>& chunk_ready = chunk_ready_;
  std::vector<std::vector<size_t>>& chunk_readers = chunk_readers_;
  chunk_ready.assign(groups_, -1.0);
  chunk_readers.resize(groups_);
  for (std::vector<size_t>& r : chunk_readers) r.clear();
  auto wait_in_chunk = [&](uint32_t g, double ready_s, size_t reader) {
    chunk_ready[g] = std::max(chunk_ready[g], ready_s);
    chunk_readers[g].push_back(reader);  // duplicates go below, once per chunk
  };
  double start = now;
  if (config_.kv_load == KvLoad::Blocking) {
    // The whole step waits before its first layer for every joining request's transfers: one
    // chunk, read before group 0.
    for (const Chunk& c : p.prefill)
      for (const Transfer& t : seqs_[c.seq].joining) {
        judge(t, now, Lateness::StallsStep);
        start = std::max(start, t.ready_s);
        o.tier_bytes += static_cast<double>(t.bytes);
        wait_in_chunk(0, t.ready_s, c.seq);
      }
  }
  stats_.streamed_steps += decode_->begin_step(p.staging, now);
  std::vector<double> group_end(groups_, 0.0);
  double prev_end = start;
  // What the step waited for transfers, summed as it happens rather than read off the groups'
  // accumulated ends: 80 additions of a group's compute drift by ~1e-11 s at t ~ 500 s, which
  // showed as exposed stall in steps that waited for nothing.
  double waited = start - now;
  const double tolerance = kEps * (1.0 + now);  // the step's start, in seconds, carries rounding
  for (uint32_t g = 0; g < groups_; ++g) {
    // Without any transfer of its own, group g starts when group g-1 ends (never before its
    // unstalled plan): that is the deadline each block is judged by.
    const double could_start = now + waited + g * tg;
    double ready = could_start;
    if (config_.kv_load == KvLoad::Layerwise)
      for (const Chunk& c : p.prefill)
        for (const Transfer& t : seqs_[c.seq].joining)
          if (t.group == g) {
            judge(t, could_start, Lateness::StallsStep);
            ready = std::max(ready, t.ready_s);
            o.tier_bytes += static_cast<double>(t.bytes);
            wait_in_chunk(g, t.ready_s, c.seq);
          }
    // The decode set's blocks that live in the tier (streamed residency), through the staging
    // ring: the lead of group g goes when group g-2 has released its slots, the rest when g-1
    // has. Group 0's lead was promoted during the step before (step_done() below), and the
    // slots group 1's lead takes were free at that step's end.
    const GroupStream r = decode_->read_group(p.ids, g, g >= 2 ? group_end[g - 2] : now,
                                              could_start, p.lead, g >= 1 ? group_end[g - 1] : now);
    for (size_t k : r.readers)
      chunk_readers[g].push_back(k < p.decode.size() ? p.decode[k]
                                                     : p.prefill[k - p.decode.size()].seq);
    for (double t : r.ready_each_s)
      judge(Transfer{g, t, could_start}, could_start, Lateness::StallsStep, true);
    if (r.blocks) {
      ready = std::max(ready, r.ready_s);
      o.tier_bytes += static_cast<double>(r.bytes);
      chunk_ready[g] = std::max(chunk_ready[g], r.ready_s);
    }
    // Simulated time resolves picoseconds: a block usable within that of the group's start did not
    // stall it.
    if (ready - could_start > tolerance) waited += ready - could_start;
    else ready = could_start;
    group_end[g] = ready + tg;
    prev_end = group_end[g];
    decode_->group_done(p.ids, g, group_end[g]);
  }
  const double slack = prefetch_.prefetch_slack_s();
  for (uint32_t g = 0; g < groups_; ++g) {
    if (chunk_ready[g] < 0) continue;  // the group read nothing from the tier
    const bool late = constraints_.hiding.chunk(chunk_ready[g], now + g * tg, slack);
    std::sort(chunk_readers[g].begin(), chunk_readers[g].end());
    chunk_readers[g].erase(std::unique(chunk_readers[g].begin(), chunk_readers[g].end()),
                           chunk_readers[g].end());
    for (size_t i : chunk_readers[g]) {
      ++stats_.requests[i].hiding_chunks;
      stats_.requests[i].hiding_chunks_late += late;
    }
  }
  // The pipeline runs on across steps, as layerwise loaders do: group 0 of the next step streams
  // into the slots group groups-2 has just released, while the last group computes, with this
  // step's end as its deadline (the earliest the next step can start). Without it group 0 would
  // be issued at its own deadline and late by construction. Which requests stop at this step is
  // not known before their last token, so every streaming request's group 0 goes.
  decode_->step_done(p.ids, groups_ >= 2 ? group_end[groups_ - 2] : now, prev_end, p.lead);
  o.stall_s = waited < kEps ? 0.0 : waited;
  // HBM contention: DMA bursts beyond the HBM bandwidth the step leaves free lengthen it.
  const double t_hbm = cost_.hbm_contention_s(o.time, now + o.stall_s);
  // The runtime's CPU work for the step: scheduling, preparing inputs, sampling and processing
  // outputs, a line in the step's sequences (vidur's profiles; docs/model.md). It is placed after
  // the GPU's work: overlapped, the CPU prepared this step during the one before and the GPU
  // waits only for what it could not hide; serial, the GPU idles for all of it. Either way the
  // layer groups' deadlines above keep the GPU's own timing, and the tokens leave at the end.
  if (config_.runtime_cpu != RuntimeCpu::None) {
    const double sequences = static_cast<double>(p.decode.size() + p.prefill.size());
    o.runtime_cpu_s =
        (config_.runtime_step_cpu_us + config_.runtime_sequence_cpu_us * sequences) * 1e-6;
    const double gpu_s = o.stall_s + o.t_step + t_hbm;
    o.runtime_wait_s = config_.runtime_cpu == RuntimeCpu::Serial
                           ? o.runtime_cpu_s
                           : std::max(0.0, o.runtime_cpu_s - gpu_s);
  }
  // Summed in this order so that a step the CPU does not lengthen ends where it did before.
  o.end_s = now + o.stall_s + o.t_step + t_hbm + o.runtime_wait_s;
  if (trace_) trace_step(p, o, now, group_end);
  return o;
}

void Scheduler::trace_step(const Plan& p, const StepOutcome& o, double now,
                           const std::vector<double>& group_end) {
  const TraceEventLog::Track steps = trace_->track("GPU", "steps");
  const TraceEventLog::Track groups = trace_->track("GPU", "layer groups");
  trace_->slice(steps, p.staging ? "step (streamed)" : "step", now, o.end_s,
                {{"decode_requests", p.decode.size()},
                 {"prefill_chunks", p.prefill.size()},
                 {"prefill_tokens", p.new_tokens},
                 {"stall_s", o.stall_s},
                 {"compute_s", o.t_step}});
  const double tg = o.t_step / groups_;
  for (uint32_t g = 0; g < groups_; ++g)
    trace_->slice(groups, "group " + std::to_string(g), group_end[g] - tg, group_end[g]);
  // Flows end where the transfer was waited for: at its layer group (layerwise), at the step's
  // start (blocking, or an async load joining its first step).
  for (const Chunk& c : p.prefill) {
    Seq& s = seqs_[c.seq];
    for (const Transfer& t : s.joining) {
      if (config_.kv_load == KvLoad::Layerwise)
        trace_->flow_end(groups, "promotion", t.flow, group_end[t.group] - tg);
      else trace_->flow_end(steps, "promotion", t.flow, now);
    }
    for (uint64_t f : s.flows) trace_->flow_end(steps, "promotion", f, now);
    s.flows.clear();
  }
  // Counters at the step's end: what HBM and the tier hold, and the link demand the control
  // plane decided during the step as a share of B_tier over the step.
  const TraceEventLog::Track memory = trace_->track("memory", "occupancy");
  const double gib = static_cast<double>(kv_.block_bytes()) / (1u << 30);
  const KvOccupancy h = kv_.occupancy();
  trace_->counter(memory, "HBM KV resident (GiB)", o.end_s,
                  static_cast<double>(h.resident_blocks) * gib);
  trace_->counter(memory, "tier used (GiB)", o.end_s,
                  static_cast<double>(h.tier_used_blocks) * gib);
  const double capacity = stream_bytes_per_s_ * (o.end_s - now);
  if (capacity > 0) {
    trace_->counter(memory, "link to HBM (share of B_tier)", o.end_s,
                    static_cast<double>(h.promoted_bytes - traced_promoted_bytes_) / capacity);
    trace_->counter(memory, "link to tier (share of B_tier)", o.end_s,
                    static_cast<double>(h.demoted_bytes - traced_demoted_bytes_) / capacity);
  }
  traced_promoted_bytes_ = h.promoted_bytes;
  traced_demoted_bytes_ = h.demoted_bytes;
}

void Scheduler::judge(const Transfer& t, double deadline_s, Lateness cost, bool streamed) {
  constraints_.hiding.transfer(t.ready_s, deadline_s, cost, streamed);
}

// ---- account --------------------------------------------------------------------------------

void Scheduler::account(const Plan& p, const StepOutcome& o, double now) {
  ++stats_.steps;
  constraints_.sustainability.step(now, o.t_step, o.tier_bytes);
  stats_.prefill_chunks += p.prefill.size();
  stats_.prefill_tokens += p.new_tokens;
  if (o.stall_s > 0) ++stats_.stalled_steps;
  stats_.exposed_stall_s += o.stall_s;
  stats_.runtime_cpu_s += o.runtime_cpu_s;
  stats_.runtime_wait_s += o.runtime_wait_s;
  if (o.runtime_wait_s > 0) ++stats_.runtime_bound_steps;
  stats_.busy_s += o.end_s - now;
  constraints_.hbm_bandwidth.step(o.end_s - now);
  for (size_t i : p.decode) stats_.requests[i].stall_s += o.stall_s;
  for (const Chunk& c : p.prefill) {
    stats_.requests[c.seq].stall_s += o.stall_s;
    stats_.requests[c.seq].prefilled_tokens += c.computed;
  }
  if (!p.decode.empty()) {
    // The cost model has already split this step's decode time; reuse its parts.
    const double weights_and_overhead_s = o.time.weights_s + o.time.overhead_s;
    stats_.kv_read_bytes += static_cast<double>(p.context_tokens) * cost_.kv_bytes_per_token();
    stats_.decode_kv_s += o.time.kv_s;
    stats_.decode_weights_s += weights_and_overhead_s;
    stats_.itl_samples.emplace_back(o.end_s - now, p.decode.size());
    constraints_.hbm_bandwidth.decode_step(o.time.kv_s, weights_and_overhead_s);
  }
}

// ---- emit -----------------------------------------------------------------------------------

void Scheduler::emit(const Plan& p, const StepOutcome& o, double) {
  const double end = o.end_s;
  uint64_t tokens = 0;
  std::vector<size_t> finished;
  for (size_t i : p.decode) {
    Seq& s = seqs_[i];
    const workload::Request& r = workload_.requests[i];
    RequestRecord& rec = stats_.requests[i];
    constraints_.qos.token(r.tenant, end - s.last_token_s);
    rec.max_itl_s = std::max(rec.max_itl_s, end - s.last_token_s);
    s.last_token_s = end;
    ++s.kv_tokens;
    ++s.generated;
    ++tokens;
    if (s.generated >= r.output_tokens) finished.push_back(i);
  }
  for (const Chunk& c : p.prefill) {
    Seq& s = seqs_[c.seq];
    s.kv_tokens = c.to;
    s.joining.clear();  // judged by this step
    if (s.kv_tokens < s.target_tokens) continue;
    // Prefill done: the step's last computed position produces the next token.
    const workload::Request& r = workload_.requests[c.seq];
    RequestRecord& rec = stats_.requests[c.seq];
    ++s.generated;
    ++tokens;
    if (rec.first_token_s < 0) {
      rec.first_token_s = end;
      stats_.ttft_s.push_back(end - r.arrival_s);
      constraints_.qos.first_token(r.tenant, end - r.arrival_s);
    } else {
      // The resume gap: the first token after a preemption is an inter-token time like any
      // other, so it enters the ITL percentiles and the tenant's ITL attainment too.
      const double gap = end - s.last_token_s;
      rec.max_itl_s = std::max(rec.max_itl_s, gap);
      stats_.itl_samples.emplace_back(gap, 1);
      constraints_.qos.token(r.tenant, gap);
    }
    s.last_token_s = end;
    s.phase = Phase::Decode;
    if (s.generated >= r.output_tokens) finished.push_back(c.seq);
  }
  stats_.tokens_generated += tokens;
  stats_.stall_token_s += o.stall_s * static_cast<double>(tokens);
  for (size_t i : finished) {
    running_.erase(std::find(running_.begin(), running_.end(), i));
    finish(i, end);
  }
  for (size_t i : running_) stats_.requests[i].generated_tokens = seqs_[i].generated;
  for (size_t i : finished) stats_.requests[i].generated_tokens = seqs_[i].generated;
  uint64_t decoding = 0;
  for (size_t i : running_) decoding += seqs_[i].phase == Phase::Decode;
  stats_.peak_decode_set = std::max<uint64_t>(stats_.peak_decode_set, decoding);
}

void Scheduler::intent(double end, double t_step) {
  // Execution intent for the control plane: who is expected to start within the horizon.
  // Waiting requests (preempted ones first, as they resume first), FCFS: each step admits up to
  // the free decode seats and the token budget. Next turns of sessions are the control plane's
  // own online prediction; the workload's future arrivals are never looked at.
  const uint32_t horizon = prefetch_.prefetch_horizon_steps();
  if (!horizon) {
    prefetch_.prefetch(SchedulerIntent{end, std::max(t_step, 1e-6), {}});
    return;
  }
  SchedulerIntent in;
  in.now_s = end;
  in.step_s = std::max(t_step, 1e-6);
  const size_t busy = running_.size() + loading_.size();
  const uint64_t seats = config_.max_decode_set > busy ? config_.max_decode_set - busy : 0;
  uint64_t queued_tokens = 0, position = 0;
  for (size_t i : waiting_) {
    const workload::Request& r = view(seqs_[i]);
    const uint64_t by_tokens = queued_tokens / config_.max_batched_tokens;
    const uint64_t by_seats = seats ? position / seats : position;
    const uint64_t ahead = 1 + std::max(by_tokens, by_seats);
    if (ahead > horizon) break;
    in.upcoming.push_back(
        {&r, end + static_cast<double>(ahead - 1) * in.step_s, static_cast<uint32_t>(ahead)});
    queued_tokens += r.prompt_tokens;
    ++position;
  }
  prefetch_.prefetch(in);
}

void Scheduler::declare_step_stats(StatGroup& run) const {
  run.add("exposed_stall_total_s", stats_.exposed_stall_s, "s",
          "sum over steps of the time each stalled waiting for "
          "tier transfers (HIDING)");
  run.add("stalled_steps", stats_.stalled_steps, "count",
          "steps that stalled waiting for a transfer");
  run.add("steps", stats_.steps, "count", "scheduler steps run");
  run.add(
      "capacity_waits", stats_.capacity_waits, "count",
      "steps in which the head of the waiting queue could not be admitted for lack of KV budget");
}

void Scheduler::declare_runtime_cpu_stats(StatGroup& g, double kv_cpu_s) const {
  const SchedStats& s = stats_;
  const double end_s = s.end_s;
  g.add("mode", name_of(config_.runtime_cpu), "text",
        "the runtime's own CPU work each step (sched.runtime_cpu): overlapped with the GPU's "
        "step before, serial between steps, or none (not modelled)");
  g.add("step_cpu_us", config_.runtime_step_cpu_us, "us",
        "its fixed part per step (sched.runtime_step_cpu_us)");
  g.add("sequence_cpu_us", config_.runtime_sequence_cpu_us, "us",
        "its part per sequence in the step (sched.runtime_sequence_cpu_us)");
  g.add("total_s", s.runtime_cpu_s, "s",
        "the runtime's CPU time over every step: scheduling, input preparation, sampling, output "
        "processing");
  g.add("core_utilisation", end_s > 0 ? s.runtime_cpu_s / end_s : 0.0, "fraction",
        "total_s over the run's simulated time: the share of one core the runtime kept busy");
  g.add("with_kv_core_utilisation", end_s > 0 ? (s.runtime_cpu_s + kv_cpu_s) / end_s : 0.0,
        "fraction",
        "the runtime's time and the host's KV movement (host_cpu.total_s) together, over the run's "
        "simulated time: the host's share of one core (C3)");
  g.add("kv_share_of_host",
        s.runtime_cpu_s + kv_cpu_s > 0 ? nlohmann::json(kv_cpu_s / (s.runtime_cpu_s + kv_cpu_s))
                                       : nlohmann::json(nullptr),
        "fraction",
        "of that host CPU time, the part KV movement takes; null: the host did no work");
  g.add("bound_steps", s.runtime_bound_steps, "count",
        "steps the runtime's CPU work lengthened: every step when serial; when overlapped, the "
        "steps whose CPU work outlasted the GPU's (the CPU was the bottleneck)");
  g.add("wait_s", s.runtime_wait_s, "s",
        "time those steps waited for the CPU beyond the GPU's own work (the GPU idle)");
}

void Scheduler::declare_serving_stats(StatGroup& g) const {
  const SchedStats& s = stats_;
  const StreamedResidencyStats& h = decode_->stats();
  g.add("kv_load", name_of(config_.kv_load), "text",
        "how a request whose KV is still arriving joins the batch (sched.kv_load): async, "
        "layerwise or blocking");
  g.add("preemption", name_of(config_.preemption), "text",
        "what a preempted request's KV becomes (sched.preemption): swapped to the tier or "
        "recomputed");
  g.add("decode_residency", name_of(residency_mode_), "text",
        "whether the decode set's KV stays pinned in HBM or may stream from the tier "
        "(host.decode_residency)");
  g.add("oversized_prompt", name_of(config_.oversized_prompt), "text",
        "streamed residency: a prompt whose KV exceeds the whole budget is streamed or rejected "
        "(sched.oversized_prompt)");
  g.add("max_batched_tokens", config_.max_batched_tokens, "tokens",
        "tokens per step (sched.max_batched_tokens)");
  g.add("preemptions", s.preemptions, "count", "running requests preempted because KV ran out");
  g.add("resumed", s.resumed, "count", "preempted requests that were admitted again");
  g.add("prefill_chunks", s.prefill_chunks, "count",
        "prefill pieces scheduled (a prompt split over steps counts each)");
  g.add("prefill_tokens", s.prefill_tokens, "tokens",
        "prompt tokens computed, recomputation after a preemption included");
  g.add("cached_prompt_tokens", s.cached_prompt_tokens, "tokens",
        "prompt tokens served from HBM or the tier");
  g.add("rejected_prompt_exceeds_kv_budget", s.rejected_prompt_too_large, "count",
        "requests rejected because the prompt's KV alone exceeds the whole budget");
  g.add("rejected_context_outgrew_kv_budget", s.rejected_context_outgrew, "count",
        "requests rejected because, alone in the batch, their context outgrew the budget (pinned "
        "residency)");
  g.add("rejected_context_window", s.rejected_context_window, "count",
        "requests rejected on arrival because prompt + output exceed max_model_len");
  g.add("rejected_stream_staging", s.rejected_stream_staging, "count",
        "streamed residency: requests rejected because their staging alone (2 groups a position) "
        "exceeds the budget");
  g.add("streamed_promotion_latency_mean_s",
        h.streamed_promotion_latency_n
            ? h.streamed_promotion_latency_sum_s / h.streamed_promotion_latency_n
            : 0.0,
        "s", "mean latency of the per-step re-reads of streamed blocks into staging (0: none)");
  g.add("streamed_promotion_latency_max_s", h.streamed_promotion_latency_max_s, "s",
        "largest latency of a streamed block's re-read into staging");
  g.add("max_model_len", config_.max_model_len, "tokens",
        "context window a request's prompt + output may take: sched.max_model_len, or the model's "
        "max_position_embeddings when that is 0");
  g.add("stopped_at_max_sim_s", stopped_at_time_limit_, "bool",
        "the run stopped because simulated time passed sim.max_sim_s with requests unfinished");
  g.add("load_wait_total_s", s.load_wait_s, "s",
        "sum over requests of their waits outside the batch for KV (async load)");
  g.add("streamed_steps", s.streamed_steps, "count",
        "steps that streamed decode-set blocks from the tier");
  g.add("spilled_blocks", h.spills, "blocks",
        "decode-set blocks the control plane moved to the tier to make room");
  g.add("streamed_promotions", h.streamed_promotions, "blocks",
        "per-step promotions of streamed blocks into staging");
  g.add("streamed_ahead", h.streamed_ahead, "blocks",
        "of those, layer group 0's issued in the step before");
  g.add("streamed_ahead_unused", h.streamed_ahead_unused, "blocks",
        "of those, discarded unread (their reader stopped or left)");
  g.add("unstreamed_blocks", h.unstreamed, "blocks",
        "streamed blocks made resident again by another reader");
  g.add("restored_streamed_blocks", h.restored_streamed, "blocks",
        "streamed blocks whose promotion took a slot of their own again (room again)");
  g.add("streamed_at_admission", h.streamed_at_admission, "blocks",
        "tier blocks a request began streaming instead of promoting at admission");
  g.add("peak_staging_slots", h.peak_staging_slots, "blocks",
        "most HBM staging slots for streamed blocks at once");
  g.add("peak_decode_set", s.peak_decode_set, "requests", "most requests decoding in one step");
}

}  // namespace kvtier
