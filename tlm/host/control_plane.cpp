#include "tlm/host/control_plane.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>

#include "tlm/ctrl/address_map.h"
#include "tlm/ctrl/controller.h"
#include "tlm/host/book_look_ahead.h"
#include "tlm/link/transact.h"

namespace kvtier {

HostControlPlane::HostControlPlane(sc_core::sc_module_name name, const HostConfig& config,
                                   uint32_t ring_entries, uint64_t block_bytes,
                                   uint64_t budget_blocks, uint32_t layer_groups,
                                   uint64_t hbm_kv_base, uint64_t tier_blocks, double cycle_s)
    : sc_core::sc_module(name),
      config_(config),
      geometry_{block_bytes, budget_blocks, layer_groups, hbm_kv_base},
      lifecycle_(config_, geometry_, books_, slots_, stats_, tier_blocks, mmio_out, ring_entries,
                 cycle_s, [this] { return streamed_.staging_slots(); }),
      session_expiry_(config.session_idle_s) {
  completion_in.register_b_transport(this, &HostControlPlane::completion_write);
}

uint64_t HostControlPlane::context_slots(uint64_t tokens) const {
  const uint32_t bt = config_.block_tokens;
  return (tokens + bt - 1) / bt * geometry_.layer_groups;
}

uint64_t HostControlPlane::prompt_slots(const workload::Request& r) const {
  return context_slots(r.prompt_tokens);
}

uint64_t HostControlPlane::available_slots() const { return lifecycle_.available_slots(); }

bool HostControlPlane::can_admit(const workload::Request& r, uint64_t tokens,
                                 uint64_t watermark) const {
  // Conservative: prompt blocks that another running request pins already are counted again.
  // Blocks prefetched for this very request are pinned for it already: admission moves those pins.
  const uint32_t bt = config_.block_tokens;
  const uint64_t need = (tokens + bt - 1) / bt * geometry_.layer_groups;
  return need + watermark <= available_slots() + prefetcher_.pins_for(r.id);
}

void HostControlPlane::on_arrival(const workload::Request& r, double arrival_s) {
  prefetcher_.arrived(r.session, arrival_s);
  session_expiry_.arrived(r.session);
  free_ended_sessions(arrival_s);
}

std::vector<uint64_t> HostControlPlane::prompt_block_keys(const workload::Request& r) const {
  const uint64_t full = r.prompt_tokens / config_.block_tokens;
  std::vector<uint64_t> keys;
  keys.reserve(full * geometry_.layer_groups);
  for (uint64_t i = 0; i < full; ++i) {
    const uint64_t pk =
        i < r.prefix_hashes.size() ? r.prefix_hashes[i] : workload::decode_block_key(r.session, i);
    for (uint32_t g = 0; g < geometry_.layer_groups; ++g)
      keys.push_back(geometry_.group_key(pk, g));
  }
  return keys;
}

void HostControlPlane::find_in_pool(const workload::Request& r, double now_s) {
  if (!lifecycle_.pooled()) return;
  const uint64_t full = r.prompt_tokens / config_.block_tokens;
  const auto tenant = static_cast<uint16_t>(r.tenant);
  for (uint64_t i = 0; i < full; ++i) {
    const uint64_t pk =
        i < r.prefix_hashes.size() ? r.prefix_hashes[i] : workload::decode_block_key(r.session, i);
    for (uint32_t g = 0; g < geometry_.layer_groups; ++g) {
      const uint64_t key = geometry_.group_key(pk, g);
      const Block* known = books_.find(key);
      if (known && (known->mech.in_hbm || known->mech.tier_valid || known->mech.in_flight))
        continue;
      // Only a copy the request may read and whose DEMOTE is done; its block then enters the
      // books as admission's would (same identity), holding the copy.
      if (!lifecycle_.pool_serves(key, tenant, now_s)) continue;
      Block& b = books_.keyed(key, r.session, i, g, pk, r.tenant);
      lifecycle_.attach_pool_copy(b, tenant, now_s);
    }
  }
}

std::optional<uint32_t> HostControlPlane::promotable_group(uint64_t key) const {
  const Block* found = books_.find(key);
  if (!found) return std::nullopt;
  const Block& b = *found;
  if (b.mech.in_hbm || !b.mech.tier_valid || b.mech.in_flight || b.streamed_by) return std::nullopt;
  return b.id.layer_group;
}

void HostControlPlane::prefetch(const SchedulerIntent& intent) {
  const double now_s = intent.now_s;
  integrate(now_s);
  const std::vector<Prefetcher::Candidate> chosen = prefetcher_.choose(intent);
  if (chosen.empty()) return;
  // Two upcoming requests may share a prefix block: it is pinned for each, promoted once.
  std::unordered_set<uint64_t> distinct;
  for (const Prefetcher::Candidate& c : chosen) distinct.insert(c.key);
  const double room_ready_s = lifecycle_.make_room(distinct.size(), now_s);
  for (size_t i = 0; i < chosen.size(); ++i) {
    Block& b = books_.at(chosen[i].key);
    if (b.mech.in_hbm) continue;
    b.prefetched_unused = true;
    lifecycle_.policy_plane().note(b);
    prefetcher_.issued();
    // Nothing reads it before its request is admitted: a deadline-ordered engine may hold it.
    lifecycle_.promote(b, chosen[i].deadline_s, chosen[i].priority, true, now_s);
  }
  lifecycle_.flush(
      room_ready_s);  // each is drawn on the timeline when its completion comes (promoted())
}

std::string HostControlPlane::verify_accounting() const {
  uint64_t idle = 0, pinned = 0, resident = streamed_.staging_slots();
  books_.table().for_each([&](uint64_t, const Block& b) {
    if (b.mech.in_hbm) ++resident;
    if (b.mech.in_hbm && b.mech.pins == 0) ++idle;
    if (b.mech.pins > 0 && !b.streamed_by) ++pinned;
  });
  for (const auto& [id, r] : running_) {
    pinned += r.private_ids.size();
    resident += r.private_ids.size();
  }
  std::string why = slots_.verify(resident, pinned) + lifecycle_.verify_pool_holdings();
  if (idle != books_.policy().evictable())
    why += "idle blocks " + std::to_string(idle) + " but the policy offers " +
           std::to_string(books_.policy().evictable()) + "; ";
  return why;
}

AdmitResult HostControlPlane::admit(const workload::Request& r, double now_s,
                                    const LoadPlan& plan) {
  integrate(now_s);
  Running& run = running_[r.id];
  run = Running{};
  run.session = r.session;
  run.tenant = r.tenant;
  run.continues = expects_next_turn(r);
  return admission_.admit(r, run, now_s, plan);
}

uint64_t HostControlPlane::growth_slots(uint64_t id, uint64_t kv_tokens) const {
  const Running& run = running_.at(id);
  const uint32_t bt = config_.block_tokens;
  const uint64_t have = (run.kv_tokens + bt - 1) / bt, want = (kv_tokens + bt - 1) / bt;
  if (want <= have) return 0;
  // Prompt positions admission found cached need no slot; every other new position needs one
  // per layer group (positions past the prompt's full blocks are never cached).
  const uint64_t full = run.prompt_cached.size();
  const uint64_t lo = std::min(have, full), hi = std::min(want, full);
  const uint64_t computed =
      run.uncached_before[hi] - run.uncached_before[lo] + (want - std::max(have, hi));
  return computed * geometry_.layer_groups;
}

uint64_t HostControlPlane::prefill_reach(uint64_t id, uint64_t kv_tokens, uint64_t budget,
                                         uint64_t prompt_tokens, uint64_t* computed) const {
  *computed = 0;
  const Running& run = running_.at(id);
  const uint32_t bt = config_.block_tokens;
  uint64_t at = kv_tokens;
  while (at < prompt_tokens) {
    const uint64_t p = at / bt;
    const uint64_t position_end = std::min<uint64_t>((p + 1) * bt, prompt_tokens);
    if (p < run.prompt_cached.size() && run.prompt_cached[p]) {
      at = position_end;  // loaded, not computed
      continue;
    }
    if (budget == 0) break;
    const uint64_t take = std::min<uint64_t>(budget, position_end - at);
    at += take;
    budget -= take;
    *computed += take;
  }
  return at;
}

void HostControlPlane::grow(uint64_t id, uint64_t kv_tokens, double now_s) {
  Running& run = running_.at(id);
  if (kv_tokens <= run.kv_tokens) return;
  integrate(now_s);
  const uint32_t bt = config_.block_tokens;
  const uint64_t full = run.prompt_cached.size();
  const uint64_t have = (run.kv_tokens + bt - 1) / bt, want = (kv_tokens + bt - 1) / bt;
  const uint64_t slots = growth_slots(id, kv_tokens);
  if (slots > available_slots())
    SC_REPORT_FATAL("kvtier/host",
                    "KV growth beyond the budget: the scheduler must preempt or spill first");
  lifecycle_.make_room(slots, now_s);
  // The prompt blocks prefill computes in this step are looked up in order: hinted ahead.
  const uint64_t prompt_end = std::min(want, full);
  BookLookAhead ahead(
      books_.table(), prompt_end > have ? (prompt_end - have) * geometry_.layer_groups : 0,
      [&](uint64_t j) {
        return geometry_.group_key(run.prompt_pk[have + j / geometry_.layer_groups],
                                   static_cast<uint32_t>(j % geometry_.layer_groups));
      });
  for (uint64_t p = have; p < want; ++p) {
    if (p < full) {
      if (run.prompt_cached[p]) continue;
      // A prompt block prefill computes in this step: keyed now, usable when the step writes it.
      const uint64_t pk = run.prompt_pk[p];
      for (uint32_t g = 0; g < geometry_.layer_groups; ++g) {
        ahead.before((p - have) * geometry_.layer_groups + g);
        Block& b = books_.keyed(geometry_.group_key(pk, g), run.session, p, g, pk, run.tenant);
        lifecycle_.reference(b, run.tenant, now_s, run.continues, false);
        if (!b.mech.in_hbm) {
          if (b.streamed_by) streamed_.unstream(b);
          b.hbm_slot = slots_.take();
          b.mech.in_hbm = true;
          b.mech.ready_s = now_s;
          lifecycle_.pin(b, kv::ReferenceKind::Produce);  // computed into its slot now
        } else {
          // Resident already under this identity (another reader made it): share that copy and
          // give back the slot counted for it.
          lifecycle_.pin(b);
        }
        run.hold(b);
      }
    } else {
      // A block decode (or the prompt's partial tail) starts filling: private until it is full.
      for (uint32_t g = 0; g < geometry_.layer_groups; ++g)
        run.private_ids.push_back(slots_.take());
      slots_.pin(geometry_.layer_groups);
    }
  }
  run.kv_tokens = kv_tokens;
  // A private block that is now full becomes a keyed block a later turn can reuse.
  if (run.private_ids.empty() || kv_tokens % bt != 0) return;
  const uint64_t position = kv_tokens / bt - 1;
  const uint64_t pk = workload::decode_block_key(run.session, position);
  for (uint32_t g = 0; g < geometry_.layer_groups; ++g) {
    const uint64_t slot = run.private_ids[g];
    Block& b = books_.keyed(geometry_.group_key(pk, g), run.session, position, g, pk, run.tenant);
    const bool held_before = b.bound_hold != ReferenceRecord::kNoHold;
    if (b.streamed_by) streamed_.unstream(b);
    if (b.mech.in_hbm) {
      // Already resident under this identity: keep that copy, give the slot back.
      slots_.give_back(slot);
    } else {
      b.hbm_slot = slot;
      b.mech.in_hbm = true;
      b.mech.ready_s = now_s;
    }
    slots_.unpin();  // the private slot's pin moves to the keyed block
    // Decode filled it: to the offline bound a Produce that holds the block (one entry), or,
    // when another reader holds it already, a Produce of its own.
    lifecycle_.pin(b, kv::ReferenceKind::Produce);
    if (held_before) books_.references().record(b.id.key, kv::ReferenceKind::Produce, false);
    run.hold(b);
    lifecycle_.reference(b, run.tenant, now_s, run.continues, false);
  }
  run.private_ids.clear();
}

void HostControlPlane::let_go(Running& run, double now_s) {
  integrate(now_s);
  for (Block* b : run.held) lifecycle_.unpin(*b, now_s);
  for (uint64_t slot : run.private_ids) slots_.give_back(slot);
  slots_.unpin(run.private_ids.size());
}

void HostControlPlane::preempt(uint64_t id, double now_s) {
  auto node = running_.find(id);
  let_go(node->second, now_s);
  ++stats_.preemptions;
  forget_chains(id);
  running_.erase(node);
  if (!lifecycle_.commands().path().idle()) lifecycle_.flush(now_s);
}

void HostControlPlane::release(uint64_t id, const workload::Request& r, double now_s) {
  auto node = running_.find(id);
  Running& run = node->second;
  let_go(run, now_s);
  // What the next turn of this session will read: its context (no knowledge of whether it comes).
  prefetcher_.finished(r.session, now_s, run.keys);
  if (config_.free_dead_blocks && config_.session_end == SessionEnd::LastTurn) {
    if (r.last_turn) {
      ++stats_.sessions_ended;
      lifecycle_.free_session_blocks(r.session, run.keys, now_s);
    }
  } else if (config_.free_dead_blocks) {
    session_expiry_.finished(r.session, now_s, run.keys);
    free_ended_sessions(now_s);
  }
  forget_chains(id);
  running_.erase(node);
  if (!lifecycle_.commands().path().idle()) lifecycle_.flush(now_s);
}

void HostControlPlane::free_ended_sessions(double now_s) {
  if (!config_.free_dead_blocks || config_.session_end != SessionEnd::Idle) return;
  std::vector<SessionExpiry::Ended> ended = session_expiry_.take_ended(now_s);
  if (ended.empty()) return;
  integrate(now_s);  // residency up to now counts the blocks about to go
  for (const SessionExpiry::Ended& e : ended) {
    ++stats_.sessions_ended;
    lifecycle_.free_session_blocks(e.session, e.keys, now_s);
  }
}

void HostControlPlane::step_grown(double now_s) {
  lifecycle_.commands()
      .queues()
      .step();  // host.completion = poll: the runtime reads its completion queues every step
  if (DescriptorRing* ring = lifecycle_.commands().ring()) ring->step_clock(now_s);
  if (!lifecycle_.policy_plane().syncing())
    return;  // none: the noted blocks are looked at with the next batch
  if (lifecycle_.policy_plane().per_step()) {
    // The decode set's words, every step, in request order.
    std::vector<uint64_t> ids;
    ids.reserve(running_.size());
    for (const auto& [id, run] : running_) ids.push_back(id);
    std::sort(ids.begin(), ids.end());
    for (uint64_t id : ids)
      for (Block* b : running_.at(id).held)
        if (b->mech.tier_valid) lifecycle_.policy_plane().force(*b);
  }
  // Commands queued for a later post (a step's staging discards) keep their time: the updates
  // go with them then.
  if (lifecycle_.commands().path().idle() && lifecycle_.policy_plane().pending())
    lifecycle_.flush(now_s);
}

void HostControlPlane::completion_write(tlm::tlm_generic_payload& trans, sc_core::sc_time& delay) {
  if (!lifecycle_.commands().ring() || !trans.is_write() ||
      trans.get_data_length() != cmdset::kCompletionBytes) {
    trans.set_response_status(tlm::TLM_COMMAND_ERROR_RESPONSE);
    return;
  }
  lifecycle_.commands().ring()->on_completion(cmdset::decode_completion(trans.get_data_ptr()),
                                              to_seconds(sim_now() + delay));
  trans.set_response_status(tlm::TLM_OK_RESPONSE);
}
}  // namespace kvtier
