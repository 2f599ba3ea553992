#include "tlm/sched/scheduler.h"

#include <algorithm>
#include <deque>
#include <tlm_utils/tlm_quantumkeeper.h>

namespace kvtier {

Scheduler::Scheduler(sc_core::sc_module_name name, const SchedConfig& config, const workload::Workload& workload,
                     HostControlPlane& host, const DecodeCostModel& cost, uint32_t layer_groups)
    : sc_core::sc_module(name),
      config_(config),
      workload_(workload),
      host_(host),
      cost_(cost),
      groups_(layer_groups),
      qos_targets_(kv::parse_qos_targets(config.tenant_qos, {config.ttft_target_s, config.itl_target_s})) {
  SC_HAS_PROCESS(Scheduler);  // SystemC 2.3.4 still needs it for SC_THREAD outside SC_CTOR
  SC_THREAD(run);
  // Loosely-timed transactions nest deeply (descriptor -> link -> controller -> DMA -> link ->
  // HBM -> completion -> host); SystemC's 64 KiB default thread stack is too small for that.
  set_stack_size(8 * 1024 * 1024);
}

void Scheduler::run() {
  struct Active {
    size_t index;          // into workload_.requests
    uint64_t context;      // tokens whose KV exists
    uint32_t generated;
  };
  tlm_utils::tlm_quantumkeeper qk;
  tlm_utils::tlm_quantumkeeper::set_global_quantum(sc_core::sc_time(config_.quantum_us, sc_core::SC_US));
  qk.reset();

  const auto& reqs = workload_.requests;
  const size_t n = reqs.size();
  size_t next = 0;
  std::deque<size_t> waiting;
  std::vector<Active> running;
  uint64_t context_total = 0;  // sum of running contexts: the KV the next decode step reads

  struct Joining {
    size_t index;
    AdmitResult admit;
  };
  std::vector<Joining> joining;

  while (stats_.requests_completed + stats_.requests_rejected < n) {
    const double now = qk.get_current_time().to_seconds();
    // Simulated time has picosecond resolution: an arrival within 1 ns of now has arrived.
    while (next < n && reqs[next].arrival_s <= now + 1e-9) waiting.push_back(next++);
    if (running.empty() && waiting.empty()) {
      qk.inc(seconds(reqs[next].arrival_s - now));
      qk.sync();
      continue;
    }

    // Admission: FCFS while the decode set, the prefill budget and the KV budget allow.
    joining.clear();
    uint64_t new_tokens = 0, attended_pairs = 0;
    while (!waiting.empty() && running.size() + joining.size() < config_.max_decode_set) {
      const workload::Request& r = reqs[waiting.front()];
      if (host_.slots_needed(r) > host_.budget_blocks()) {
        ++stats_.requests_rejected;
        waiting.pop_front();
        continue;
      }
      if (!host_.can_admit(r)) {
        ++stats_.capacity_waits;
        break;
      }
      if (!joining.empty() && new_tokens + r.prompt_tokens > config_.max_prefill_tokens) break;
      AdmitResult a = host_.admit(r, now);
      const uint64_t computed = r.prompt_tokens - std::min<uint64_t>(a.cached_tokens, r.prompt_tokens);
      new_tokens += computed;
      attended_pairs += computed * (r.prompt_tokens - computed) + computed * (computed + 1) / 2;
      stats_.prefill_tokens += computed;
      stats_.cached_prompt_tokens += r.prompt_tokens - computed;
      joining.push_back({waiting.front(), std::move(a)});
      waiting.pop_front();
    }

    if (running.empty() && joining.empty())
      SC_REPORT_FATAL("kvtier/sched", "nothing runs and nothing can be admitted: KV accounting is inconsistent");

    // Step time from the cost model; the stall comes from promotions still in flight when the
    // layer group that reads them starts.
    const StepTime step_time = cost_.step(!running.empty(), context_total, new_tokens, attended_pairs);
    const double t_decode = step_time.decode_s();
    const double t_prefill = step_time.prefill_s;
    const double t_step = t_decode + t_prefill;
    double stall = 0.0;
    for (uint32_t g = 0; g < groups_; ++g) {
      const double planned = now + stall + t_step * g / groups_;
      double latest = 0.0;
      for (const Joining& j : joining) latest = std::max(latest, j.admit.ready_s[g]);
      if (latest > planned) stall += latest - planned;
    }
    // HBM contention: DMA bursts beyond the HBM bandwidth the step leaves free lengthen it.
    const double t_hbm = cost_.hbm_contention_s(step_time, now + stall);
    const double end = now + stall + t_step + t_hbm;

    // HIDING, per transfer: a promotion (or a prefetched block read for the first time) must be
    // usable when the layer group that reads it starts in the unstalled plan of this step.
    for (const Joining& j : joining)
      for (const auto& [g, ready] : j.admit.transfers) {
        const double deadline = now + t_step * g / groups_;
        ++stats_.hiding_transfers;
        if (ready > deadline + 1e-12) {
          ++stats_.hiding_missed;
          stats_.hiding_lateness_s += ready - deadline;
          stats_.hiding_lateness_max_s = std::max(stats_.hiding_lateness_max_s, ready - deadline);
        }
      }

    // Accounting for the step.
    const uint64_t decode_tokens = running.size();
    const uint64_t step_tokens = decode_tokens + joining.size();
    ++stats_.steps;
    if (stall > 0) ++stats_.stalled_steps;
    stats_.exposed_stall_s += stall;
    stats_.stall_token_s += stall * static_cast<double>(step_tokens);
    stats_.busy_s += end - now;
    if (decode_tokens) {
      // The cost model has already split this step's decode time; reuse its parts.
      const double weights_and_overhead_s = step_time.weights_s + step_time.overhead_s;
      stats_.kv_read_bytes += static_cast<double>(context_total) * cost_.kv_bytes_per_token();
      stats_.decode_kv_s += step_time.kv_s;
      stats_.decode_weights_s += weights_and_overhead_s;
      stats_.itl_samples.emplace_back(end - now, decode_tokens);
      ++stats_.decode_steps;
      if (step_time.kv_s > weights_and_overhead_s) ++stats_.kv_bound_steps;
    }

    // One token for every running request.
    for (size_t i = 0; i < running.size();) {
      Active& a = running[i];
      const workload::Request& r = reqs[a.index];
      TenantQos& q = stats_.qos[r.tenant];
      ++q.tokens;
      if (end - now <= qos_targets_.of(r.tenant).itl_s) ++q.itl_met;
      ++a.context;
      ++a.generated;
      ++context_total;
      ++stats_.tokens_generated;
      host_.on_token(r.id, r.session, r.tenant, a.context, end);
      if (a.generated >= r.output_tokens) {
        host_.release(r.id, r, end);
        context_total -= a.context;
        ++stats_.requests_completed;
        running[i] = running.back();
        running.pop_back();
      } else {
        ++i;
      }
    }
    // Joining requests produce their first token at the end of their prefill.
    for (const Joining& j : joining) {
      const workload::Request& r = reqs[j.index];
      stats_.ttft_s.push_back(end - r.arrival_s);
      TenantQos& q = stats_.qos[r.tenant];
      ++q.requests;
      if (end - r.arrival_s <= qos_targets_.of(r.tenant).ttft_s) ++q.ttft_met;
      ++stats_.tokens_generated;
      Active a{j.index, uint64_t(r.prompt_tokens) + 1, 1};
      host_.on_token(r.id, r.session, r.tenant, a.context, end);
      if (a.generated >= r.output_tokens) {
        host_.release(r.id, r, end);
        ++stats_.requests_completed;
      } else {
        context_total += a.context;
        running.push_back(a);
      }
    }
    stats_.peak_decode_set = std::max<uint64_t>(stats_.peak_decode_set, running.size());

    // Execution intent for the control plane: who is expected to start within the horizon.
    const uint32_t horizon = host_.prefetch_horizon_steps();
    host_.set_step_estimate(t_step);
    if (horizon) {
      SchedulerIntent intent;
      intent.now_s = end;
      intent.step_s = std::max(t_step, 1e-6);
      // Queued requests, FCFS: each step admits up to the free decode seats and the prefill budget.
      const uint64_t seats = config_.max_decode_set > running.size() ? config_.max_decode_set - running.size() : 0;
      uint64_t queued_tokens = 0, position = 0;
      for (size_t index : waiting) {
        const workload::Request& r = reqs[index];
        const uint64_t by_tokens = queued_tokens / config_.max_prefill_tokens;
        const uint64_t by_seats = seats ? position / seats : position;
        const uint64_t ahead = 1 + std::max(by_tokens, by_seats);
        if (ahead > horizon) break;
        intent.upcoming.push_back({&r, end + static_cast<double>(ahead - 1) * intent.step_s, static_cast<uint32_t>(ahead)});
        queued_tokens += r.prompt_tokens;
        ++position;
      }
      // Sessions whose next turn is due within the horizon (later turns only: a conversation's
      // first request is not predictable, its continuation is).
      const double until = end + horizon * intent.step_s;
      for (size_t k = next; k < n && reqs[k].arrival_s <= until; ++k) {
        const workload::Request& r = reqs[k];
        if (r.turn == 0) continue;
        const double start = std::max(r.arrival_s, end);
        const uint32_t ahead = 1 + static_cast<uint32_t>((start - end) / intent.step_s);
        intent.upcoming.push_back({&r, start, ahead});
      }
      host_.prefetch(intent);
    }

    qk.inc(seconds(end - now));
    if (qk.need_sync()) qk.sync();
  }
  qk.sync();
  stats_.end_s = sc_core::sc_time_stamp().to_seconds();
  host_.finish(stats_.end_s);
  done_ = true;
}

}  // namespace kvtier
