#include "tlm/host/control_plane.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>

#include "tlm/ctrl/address_map.h"
#include "tlm/ctrl/controller.h"
#include "tlm/link/transact.h"

namespace kvtier {

using cmdset::Opcode;
using cmdset::Status;

namespace {
// Cache hints for a run of the books' look-ups whose keys are known in advance (a prompt's
// blocks, a session's blocks to free). A per-layer run keeps millions of blocks, and each
// look-up misses the cache twice, in the index and then in the record: hinting the index slot
// 16 look-ups ahead and the record 8 ahead overlaps those misses instead of taking them in
// turn. Nothing but time depends on it (a stale hint, after the table changed, only wastes a
// load).
template <typename Table, typename KeyOf>
class BookLookAhead {
 public:
  BookLookAhead(const Table& table, uint64_t n, KeyOf key_of)
      : table_(table), n_(n), key_of_(std::move(key_of)) {
    for (uint64_t j = 0; j < std::min(n_, kIndexAhead); ++j) table_.prefetch_index(key_of_(j));
  }
  // Before look-up j (in order, 0 .. n - 1).
  void before(uint64_t j) const {
    if (j + kIndexAhead < n_) table_.prefetch_index(key_of_(j + kIndexAhead));
    if (j + kRecordAhead < n_) table_.prefetch_record(key_of_(j + kRecordAhead));
  }

 private:
  static constexpr uint64_t kIndexAhead = 16, kRecordAhead = 8;
  const Table& table_;
  uint64_t n_;
  KeyOf key_of_;
};
template <typename Table, typename KeyOf>
BookLookAhead(const Table&, uint64_t, KeyOf) -> BookLookAhead<Table, KeyOf>;

cmdset::Format wire_format(kv::Format f) {
  return f == kv::Format::Int4  ? cmdset::Format::INT4
         : f == kv::Format::Fp8 ? cmdset::Format::FP8
                                : cmdset::Format::BF16;
}
constexpr uint16_t kAdmissionPriority =
    Prefetcher::kAdmissionPriority;  // promotions a starting step waits for
}  // namespace

HostControlPlane::HostControlPlane(sc_core::sc_module_name name, const HostConfig& config,
                                   uint32_t ring_entries, uint64_t block_bytes,
                                   uint64_t budget_blocks, uint32_t layer_groups,
                                   uint64_t hbm_kv_base, uint64_t tier_blocks, double cycle_s)
    : sc_core::sc_module(name),
      config_(config),
      geometry_{block_bytes, budget_blocks, layer_groups, hbm_kv_base},
      tier_(tier_blocks, block_bytes, config),
      session_expiry_(config.session_idle_s),
      commands_(config_, mmio_out, ring_entries, cycle_s, stats_, *this) {
  policy_ = make_replacement_policy(policy_params(config), policy_store_);
  completion_in.register_b_transport(this, &HostControlPlane::completion_write);
}

uint64_t HostControlPlane::group_key(uint64_t position_key, uint32_t group) const {
  return geometry_.layer_groups == 1 ? position_key
                                     : workload::decode_block_key(position_key, group);
}

uint64_t HostControlPlane::context_slots(uint64_t tokens) const {
  const uint32_t bt = config_.block_tokens;
  return (tokens + bt - 1) / bt * geometry_.layer_groups;
}

uint64_t HostControlPlane::prompt_slots(const workload::Request& r) const {
  return context_slots(r.prompt_tokens);
}

uint64_t HostControlPlane::available_slots() const {
  const uint64_t held = slots_.pinned() + streamed_.staging_slots();
  return held >= geometry_.budget_blocks ? 0 : geometry_.budget_blocks - held;
}

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
    for (uint32_t g = 0; g < geometry_.layer_groups; ++g) keys.push_back(group_key(pk, g));
  }
  return keys;
}

std::optional<uint32_t> HostControlPlane::promotable_group(uint64_t key) const {
  const Block* found = blocks_.find(key);
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
  const double room_ready_s = make_room(distinct.size(), now_s);
  for (size_t i = 0; i < chosen.size(); ++i) {
    Block& b = blocks_.at(chosen[i].key);
    if (b.mech.in_hbm) continue;
    b.hbm_slot = slots_.take();
    b.mech.in_hbm = true;
    b.mech.in_flight = true;
    b.prefetched_unused = true;
    policy_plane_.note(b);
    prefetcher_.issued();
    cmdset::Descriptor d = descriptor(Opcode::PROMOTE, b);
    d.deadline_ns = static_cast<uint64_t>(std::llround(chosen[i].deadline_s * 1e9));
    d.prio = chosen[i].priority;
    // Nothing reads it before its request is admitted: a deadline-ordered engine may hold it.
    d.flags |= static_cast<uint8_t>(cmdset::DescFlag::DEFERRABLE);
    enqueue(d, Opcode::PROMOTE, b, now_s);
  }
  flush(room_ready_s);  // each is drawn on the timeline when its completion comes (promoted())
}

std::string HostControlPlane::verify_accounting() const {
  uint64_t idle = 0, pinned = 0, resident = streamed_.staging_slots();
  blocks_.for_each([&](uint64_t, const Block& b) {
    if (b.mech.in_hbm) ++resident;
    if (b.mech.in_hbm && b.mech.pins == 0) ++idle;
    if (b.mech.pins > 0 && !b.streamed_by) ++pinned;
  });
  for (const auto& [id, r] : running_) {
    pinned += r.private_ids.size();
    resident += r.private_ids.size();
  }
  std::string why = slots_.verify(resident, pinned);
  if (idle != policy_->evictable())
    why += "idle blocks " + std::to_string(idle) + " but the policy offers " +
           std::to_string(policy_->evictable()) + "; ";
  return why;
}

void HostControlPlane::pin(Block& b) {
  if (b.mech.pins++ == 0) {
    slots_.pin();
    policy_->pinned_held(b.id.key, b.policy_slot);
    policy_plane_.note(b);
  }
}

void HostControlPlane::unpin(Block& b, double now_s) {
  if (b.streamed_by) {
    // A streamed block is pinned without holding a slot: it goes back to being a tier copy.
    b.streamed_by = 0;
    if (--b.mech.pins == 0) {
      policy_plane_.note(b);
      if (!b.mech.in_hbm && b.mech.tier_valid) b.tier_epoch = tier_.queue_for_reclaim(b.id.key);
    }
    return;
  }
  if (--b.mech.pins == 0) {
    policy_plane_.note(b);
    slots_.unpin();
    if (b.mech.in_hbm) policy_->idle_held(b.id.key, b.record, b.policy_slot, now_s);
  }
}

HostControlPlane::Block& HostControlPlane::keyed_block(uint64_t key, uint64_t session,
                                                       uint64_t position, uint32_t group,
                                                       uint64_t pk, uint32_t tenant) {
  uint32_t record = 0;
  auto [found, inserted] = blocks_.try_emplace(key, record);
  Block& b = *found;
  if (inserted) {
    b.record = record;
    b.id = kv::BlockIdentity{key, session, static_cast<uint32_t>(position),
                             static_cast<uint16_t>(group), pk};
    b.owner_tenant = static_cast<uint16_t>(tenant);
    policy_store_.adopt(b);
    ++stats_.unique_blocks;
    peak_tracked_blocks_ = std::max<uint64_t>(peak_tracked_blocks_, blocks_.size());
  } else if (b.id.session != session) {
    b.multi_session = true;
  }
  return b;
}

void HostControlPlane::reference(Block& b, uint32_t tenant, double now_s, bool continues,
                                 bool counted) {
  kv::BlockPolicy& pol = policy_store_.of(b);
  pol.tenant = tenant;
  pol.last_use_s = now_s;
  if (counted) ++pol.uses;
  pol.continues = continues;
  policy_->on_reference(b.id.key, now_s, pol);
  policy_plane_.note(b);
}

HostControlPlane::CachedPrefix HostControlPlane::cached_prefix(const workload::Request& r) const {
  CachedPrefix c;
  const uint64_t full = r.prompt_tokens / config_.block_tokens;
  bool hbm_run = true;
  for (uint64_t i = 0; i < full; ++i) {
    const uint64_t pk =
        i < r.prefix_hashes.size() ? r.prefix_hashes[i] : workload::decode_block_key(r.session, i);
    bool in_hbm = true, cached = true;
    for (uint32_t g = 0; g < geometry_.layer_groups && cached; ++g) {
      const Block* b = blocks_.find(group_key(pk, g));
      in_hbm = in_hbm && b && b->mech.in_hbm;
      cached = b && (b->mech.in_hbm || b->mech.tier_valid);
    }
    if (!cached) break;
    hbm_run = hbm_run && in_hbm;
    c.hbm_positions += hbm_run;
    ++c.cached_positions;
  }
  return c;
}

AdmitResult HostControlPlane::admit(const workload::Request& r, double now_s,
                                    const LoadPlan& plan) {
  integrate(now_s);
  Running& run = running_[r.id];
  run = Running{};
  run.session = r.session;
  run.tenant = r.tenant;
  run.continues = expects_next_turn(r);
  run.streamed.assign(geometry_.layer_groups, {});
  AdmitResult res;
  res.ready_s.assign(geometry_.layer_groups, now_s);
  const uint32_t bt = config_.block_tokens;
  const uint64_t full = r.prompt_tokens / bt;
  run.prompt_pk.resize(full);
  run.prompt_cached.assign(full, 0);
  std::vector<Block*> to_promote, tier_hits;
  std::vector<Block*> group_blocks(geometry_.layer_groups);
  uint64_t cached_positions = 0;
  auto deadline_of = [&](uint32_t g) {
    return plan.step_start_s + plan.step_s * g / geometry_.layer_groups;
  };
  // Streamed residency: how many tier hits may still be promoted, counted live, since pinning this
  // request's idle HBM hits takes obtainable slots away too.
  uint64_t first_computed_slots = 0;  // set once the prompt's cached positions are known
  auto promote_room = [&]() -> uint64_t {
    const uint64_t obtainable = slots_.free() + policy_->evictable();
    const uint64_t keep = plan.keep_free + first_computed_slots;
    const uint64_t live = obtainable > keep ? obtainable - keep : 0;
    const uint64_t room =
        plan.promote_room > first_computed_slots ? plan.promote_room - first_computed_slots : 0;
    return std::min(room, live);
  };

  // A position is served from cache only when every layer group of it is in HBM or the tier;
  // otherwise prefill recomputes the position (all its layers) and grow() gives it slots.
  auto position_key = [&](uint64_t i) {
    return i < r.prefix_hashes.size() ? r.prefix_hashes[i]
                                      : workload::decode_block_key(r.session, i);
  };
  BookLookAhead ahead(blocks_, full * geometry_.layer_groups, [&](uint64_t j) {
    return group_key(position_key(j / geometry_.layer_groups),
                     static_cast<uint32_t>(j % geometry_.layer_groups));
  });
  for (uint64_t i = 0; i < full; ++i) {
    const uint64_t pk = position_key(i);
    run.prompt_pk[i] = pk;
    bool position_cached = true;
    for (uint32_t g = 0; g < geometry_.layer_groups; ++g) {
      ahead.before(i * geometry_.layer_groups + g);
      Block& b = keyed_block(group_key(pk, g), r.session, i, g, pk, r.tenant);
      group_blocks[g] = &b;
      reference(b, r.tenant, now_s, run.continues, true);
      // A block another request streams is recomputed rather than promoted: promoting it would
      // need room streamed residency is short of by construction.
      const bool readable =
          b.mech.in_hbm || (b.mech.tier_valid && plan.promote_from_tier && !b.streamed_by);
      references_.record(b.id.key, readable ? kv::ReferenceKind::Read : kv::ReferenceKind::Produce,
                         true);
      ++stats_.references;
      position_cached = position_cached && readable;
    }
    if (!position_cached) {
      stats_.misses += geometry_.layer_groups;
      res.misses += geometry_.layer_groups;
      continue;
    }
    ++cached_positions;
    run.prompt_cached[i] = 1;
    bool from_tier = false;  // a layer group of this position comes from the tier for this request
    for (uint32_t g = 0; g < geometry_.layer_groups; ++g) {
      Block& b = *group_blocks[g];
      if (b.mech.in_hbm) {
        ++res.hbm_hits;
        settle(b, now_s);
        res.ready_s[g] = std::max(res.ready_s[g], b.mech.ready_s);
        if (b.prefetched_unused) {
          // A prefetched block read for the first time: its transfer is judged against this use.
          b.prefetched_unused = false;
          policy_plane_.note(b);
          prefetcher_.used(now_s, b.mech.ready_s);
          res.transfers.push_back(
              {g, b.mech.ready_s, deadline_of(g), 0, stored_bytes(b.mech.format)});
          from_tier = true;
          res.loaded_bytes += stored_bytes(b.mech.format);
        } else if (b.mech.ready_s > now_s) {
          // Still arriving for another reader (a promotion or prefetch already in flight).
          res.transfers.push_back(
              {g, b.mech.ready_s, deadline_of(g), 0, stored_bytes(b.mech.format)});
        }
      } else {
        ++res.tier_hits;
        tier_hits.push_back(&b);
        from_tier = true;
        res.loaded_bytes += stored_bytes(b.mech.format);
        continue;  // pinned below, once every HBM hit of the prompt holds its pin
      }
      pin(b);
      run.hold(b);
    }
    (from_tier ? res.loaded_tokens : res.cached_hbm_tokens) += bt;
  }
  // The first chunk computes its uncached positions (and a partial last block) in new slots:
  // only the room beside those is there for promotions.
  for (uint64_t i = 0; i < (plan.first_tokens + bt - 1) / bt; ++i)
    if (i >= full || !run.prompt_cached[i]) first_computed_slots += geometry_.layer_groups;
  // Tier hits: promoted, or with streamed residency and no room left (pinning the HBM hits above
  // took obtainable slots too), left in the tier for this request to stream every step.
  for (Block* b : tier_hits) {
    if (b->streamed_by == r.id + 1) continue;  // named twice in this prompt: streamed once
    if (streaming_possible() && to_promote.size() >= promote_room() && !b->mech.in_flight &&
        !b->streamed_by && b->mech.pins == 0) {
      ++b->mech.pins;
      b->streamed_by = r.id + 1;
      run.streamed[b->id.layer_group].push_back(b->id.key);
      ++stats_.streamed_at_admission;
    } else {
      pin(*b);
      to_promote.push_back(b);
    }
    run.hold(*b);
  }
  // Growth is asked about every step while a prompt is prefilled: a prefix sum of the positions
  // prefill computes answers it in O(1) instead of a walk over the remaining prompt.
  run.uncached_before.assign(full + 1, 0);
  for (uint64_t i = 0; i < full; ++i)
    run.uncached_before[i + 1] = run.uncached_before[i] + !run.prompt_cached[i];
  // The request's own pins now hold what its prefetch pinned (its own, or its session's).
  prefetcher_.admitted(r);
  stats_.hbm_hits += res.hbm_hits;
  stats_.tier_hits += res.tier_hits;
  res.cached_tokens = static_cast<uint32_t>(cached_positions * bt);

  // Promotions in layer-major order: layer group 0 of every position first, so the first layer
  // the request reads arrives first (a block named twice in the prompt is one transfer).
  std::stable_sort(to_promote.begin(), to_promote.end(), [](const Block* a, const Block* b) {
    return a->id.layer_group < b->id.layer_group;
  });
  to_promote.erase(std::unique(to_promote.begin(), to_promote.end()), to_promote.end());
  std::vector<Block*> issued;
  const uint64_t mark = ++admissions_;  // a block issued by this admission carries it
  for (Block* b : to_promote)
    if (!b->mech.in_hbm && b->issued_by != mark) {
      b->issued_by = mark;
      issued.push_back(b);
    }
  if (issued.size() > slots_.free() + policy_->evictable())
    SC_REPORT_FATAL(
        "kvtier/host",
        ("admission of request " + std::to_string(r.id) + " promotes " +
         std::to_string(issued.size()) + " blocks but only " +
         std::to_string(slots_.free() + policy_->evictable()) + " slots can be had (promote room " +
         std::to_string(plan.promote_room) + "; first: pins " +
         std::to_string(issued[0]->mech.pins) + " in_flight " +
         std::to_string(issued[0]->mech.in_flight) + " streamed_by " +
         std::to_string(issued[0]->streamed_by) + " free " + std::to_string(slots_.free()) +
         " evictable " + std::to_string(policy_->evictable()) + ")")
            .c_str());
  const double room_ready_s = make_room(issued.size(), now_s);
  for (Block* b : issued) {
    b->hbm_slot = slots_.take();
    b->mech.in_hbm = true;
    b->mech.in_flight = true;
    cmdset::Descriptor d = descriptor(Opcode::PROMOTE, *b);
    // Deadline: the planned start of the layer group that reads the block in its step.
    d.deadline_ns = static_cast<uint64_t>(std::llround(deadline_of(b->id.layer_group) * 1e9));
    d.prio = kAdmissionPriority;
    enqueue(d, Opcode::PROMOTE, *b, now_s);
  }
  flush(room_ready_s);
  for (Block* b : issued) {
    res.ready_s[b->id.layer_group] = std::max(res.ready_s[b->id.layer_group], b->mech.ready_s);
    res.transfers.push_back({b->id.layer_group, b->mech.ready_s, deadline_of(b->id.layer_group), 0,
                             stored_bytes(b->mech.format)});
    if (trace_.log) {
      const TraceEventLog::Track& t = trace_.admission;
      trace_.log->async_slice(
          t, "promotion",
          "request " + std::to_string(r.id) + " group " + std::to_string(b->id.layer_group), now_s,
          b->mech.ready_s, {{"deadline_s", deadline_of(b->id.layer_group)}});
      res.transfers.back().flow = trace_.log->flow_start(t, "promotion", now_s);
    }
  }
  for (const Transfer& t : res.transfers) res.load_ready_s = std::max(res.load_ready_s, t.ready_s);
  return res;
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
  make_room(slots, now_s);
  // The prompt blocks prefill computes in this step are looked up in order: hinted ahead.
  const uint64_t prompt_end = std::min(want, full);
  BookLookAhead ahead(blocks_, prompt_end > have ? (prompt_end - have) * geometry_.layer_groups : 0,
                      [&](uint64_t j) {
                        return group_key(run.prompt_pk[have + j / geometry_.layer_groups],
                                         static_cast<uint32_t>(j % geometry_.layer_groups));
                      });
  for (uint64_t p = have; p < want; ++p) {
    if (p < full) {
      if (run.prompt_cached[p]) continue;
      // A prompt block prefill computes in this step: keyed now, usable when the step writes it.
      const uint64_t pk = run.prompt_pk[p];
      for (uint32_t g = 0; g < geometry_.layer_groups; ++g) {
        ahead.before((p - have) * geometry_.layer_groups + g);
        Block& b = keyed_block(group_key(pk, g), run.session, p, g, pk, run.tenant);
        reference(b, run.tenant, now_s, run.continues, false);
        if (!b.mech.in_hbm) {
          if (b.streamed_by) streamed_.unstream(b);
          b.hbm_slot = slots_.take();
          b.mech.in_hbm = true;
          b.mech.ready_s = now_s;
          pin(b);
        } else {
          // Resident already under this identity (another reader made it): share that copy and
          // give back the slot counted for it.
          pin(b);
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
    Block& b = keyed_block(group_key(pk, g), run.session, position, g, pk, run.tenant);
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
    pin(b);
    run.hold(b);
    reference(b, run.tenant, now_s, run.continues, false);
    references_.record(b.id.key, kv::ReferenceKind::Produce, false);
  }
  run.private_ids.clear();
}

void HostControlPlane::let_go(Running& run, double now_s) {
  integrate(now_s);
  for (Block* b : run.held) unpin(*b, now_s);
  for (uint64_t slot : run.private_ids) slots_.give_back(slot);
  slots_.unpin(run.private_ids.size());
}

void HostControlPlane::preempt(uint64_t id, double now_s) {
  auto node = running_.find(id);
  let_go(node->second, now_s);
  ++stats_.preemptions;
  running_.erase(node);
  if (!commands_.path().idle()) flush(now_s);
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
      free_session_blocks(r.session, run.keys, now_s);
    }
  } else if (config_.free_dead_blocks) {
    session_expiry_.finished(r.session, now_s, run.keys);
    free_ended_sessions(now_s);
  }
  running_.erase(node);
  if (!commands_.path().idle()) flush(now_s);
}

void HostControlPlane::free_ended_sessions(double now_s) {
  if (!config_.free_dead_blocks || config_.session_end != SessionEnd::Idle) return;
  std::vector<SessionExpiry::Ended> ended = session_expiry_.take_ended(now_s);
  if (ended.empty()) return;
  integrate(now_s);  // residency up to now counts the blocks about to go
  for (const SessionExpiry::Ended& e : ended) {
    ++stats_.sessions_ended;
    free_session_blocks(e.session, e.keys, now_s);
  }
}

// The conversation is over: its own blocks are dead. Shared prefixes, and blocks still pinned
// or moving, stay.
void HostControlPlane::free_session_blocks(uint64_t session, const std::vector<uint64_t>& keys,
                                           double now_s) {
  BookLookAhead ahead(blocks_, keys.size(), [&](uint64_t j) { return keys[j]; });
  for (size_t j = 0; j < keys.size(); ++j) {
    ahead.before(j);
    const uint64_t key = keys[j];
    Block* found = blocks_.find(key);
    if (!found) continue;  // listed twice
    Block& b = *found;
    if (b.multi_session || b.id.session != session || b.mech.pins != 0 || b.mech.in_flight)
      continue;
    if (b.mech.in_hbm) {
      policy_->removed_held(key, b.policy_slot);
      slots_.give_back(b.hbm_slot);
    }
    ++stats_.frees;
    forget_block(b, now_s);
  }
}

void HostControlPlane::forget_block(Block& b, double now_s) {
  const uint64_t key = b.id.key;
  if (b.mech.tier_valid) {
    enqueue(descriptor(Opcode::FREE, b), Opcode::FREE, key, now_s);
    tier_.give_back(b.mech.tier_slot);
  }
  policy_store_.freed(b);
  blocks_.erase(key);
}

bool HostControlPlane::move_to_tier(Block& b, double now_s) {
  if (!b.mech.tier_valid) {
    if (tier_.full()) reclaim_tier_slot(now_s);
    if (tier_.full()) return false;
    b.mech.tier_slot = tier_.take();
    b.mech.tier_valid = true;  // corrected if the device answers NO_SPACE
    b.mech.in_flight = true;
    b.mech.format = tier_.copy_format();
    demand(DemandDirection::ToTier, now_s, static_cast<double>(stored_bytes(b.mech.format)));
    enqueue(room_demotion(b, now_s), Opcode::DEMOTE, b, now_s);
  } else {
    // Write-once: the tier copy is valid, so leaving HBM moves nothing (spec §M.1).
    enqueue(descriptor(Opcode::DISCARD, b), Opcode::DISCARD, b.id.key, now_s);
    ++stats_.discards;
  }
  integrate(now_s);
  policy_store_.evicted(b);
  policy_plane_.note(b);
  b.mech.in_hbm = false;
  slots_.give_back(b.hbm_slot);
  slots_.unpin();
  return true;
}

bool HostControlPlane::reclaim_tier_slot(double now_s) {
  // Queued demotions finish (and stop being in flight) once posted.
  if (!commands_.path().idle()) flush(now_s);
  uint64_t key = 0, epoch = 0;
  while (tier_.next_reclaim_candidate(&key, &epoch)) {
    Block* found = blocks_.find(key);
    if (!found) continue;
    Block& v = *found;
    if (v.tier_epoch != epoch || v.mech.in_hbm || !v.mech.tier_valid || v.mech.in_flight ||
        v.mech.pins)
      continue;
    ++stats_.tier_evictions;
    forget_block(v, now_s);  // tier-valid: FREEs the tier copy
    return true;
  }
  return false;
}

double HostControlPlane::make_room(uint64_t slots, double now_s) {
  if (slots_.free() >= slots) return now_s;
  bool demoted = false;
  last_demotion_done_s_ = now_s;
  while (slots_.free() < slots) {
    // A policy that keeps slots names the victim's record; another one its key.
    const bool by_record = policy_->keeps_slots();
    std::optional<uint64_t> victim;
    if (!by_record) victim = policy_->victim();
    else if (const auto owner = policy_->victim_owner()) victim = *owner;
    if (!victim)
      SC_REPORT_FATAL(
          "kvtier/host",
          ("no evictable block although the admission check passed (need " + std::to_string(slots) +
           " free slots, have " + std::to_string(slots_.free()) + "; resident " +
           std::to_string(slots_.resident()) + ", pinned " + std::to_string(slots_.pinned()) +
           ", staging " + std::to_string(streamed_.staging_slots()) + ")")
              .c_str());
    Block& b = by_record ? blocks_.by_record(static_cast<uint32_t>(*victim)) : blocks_.at(*victim);
    policy_->removed_held(b.id.key, b.policy_slot);
    policy_store_.evicted(b);
    b.mech.in_hbm = false;
    b.prefetched_unused = false;  // fetched and never used
    policy_plane_.note(b);        // idle, and its reuse score gone unless persistent
    slots_.give_back(b.hbm_slot);
    // The tier is finite too: when it is full, the copy of the block that left HBM longest
    // ago is freed to make room (never a pinned or in-flight one).
    if (!b.mech.tier_valid && tier_.full()) reclaim_tier_slot(now_s);
    if (b.mech.tier_valid || !tier_.full()) b.tier_epoch = tier_.queue_for_reclaim(b.id.key);
    if (b.mech.tier_valid) {
      // Write-once: the tier copy is still valid, so eviction moves nothing (spec §M.1).
      enqueue(descriptor(Opcode::DISCARD, b), Opcode::DISCARD, b.id.key, now_s);
      ++stats_.discards;
      if (tier_.recompresses(b.mech.format)) {
        // The RECOMPRESS policy: the block went cold again; re-quantise its tier copy in place.
        // This rewrites payload and breaks write-once for exactly this block (spec §M.1).
        b.mech.format = tier_.recompress_format();
        // Nothing waits for the rewrite: a deadline-ordered engine may hold it.
        cmdset::Descriptor d = descriptor(Opcode::RECOMPRESS, b);
        d.flags |= static_cast<uint8_t>(cmdset::DescFlag::DEFERRABLE);
        enqueue(d, Opcode::RECOMPRESS, b, now_s);
      }
    } else if (!tier_.full()) {
      b.mech.tier_slot = tier_.take();
      b.mech.tier_valid = true;  // corrected if the device answers NO_SPACE
      b.mech.in_flight = true;
      b.mech.format = tier_.copy_format();  // the control plane's choice of representation
      demand(DemandDirection::ToTier, now_s, static_cast<double>(stored_bytes(b.mech.format)));
      enqueue(room_demotion(b, now_s), Opcode::DEMOTE, b, now_s);
      demoted = true;
    } else {
      ++stats_.dropped_no_tier_space;  // lost: the next reference recomputes it
    }
  }
  flush(now_s);
  // A demoted block's slot is reusable once the device has read it out.
  return demoted ? std::max(now_s, last_demotion_done_s_) : now_s;
}

cmdset::Descriptor HostControlPlane::descriptor(Opcode op, const Block& b) const {
  cmdset::Descriptor d;
  d.opcode = op;
  d.key = b.id.key;
  d.tenant = b.owner_tenant;
  d.flags = b.multi_session ? static_cast<uint8_t>(cmdset::DescFlag::SHAREABLE) : 0;
  d.hbm_addr = geometry_.hbm_kv_base + b.hbm_slot * geometry_.block_bytes;
  d.tier_addr = b.mech.tier_slot * geometry_.block_bytes;
  // The tier copy as stored (the device moves the entry's own length on PROMOTE).
  d.length = static_cast<uint32_t>(stored_bytes(b.mech.format));
  d.format = wire_format(b.mech.format);
  return d;
}

cmdset::Descriptor HostControlPlane::room_demotion(const Block& b, double now_s) const {
  // Every demotion makes room (an eviction or a spill), and the room is wanted now: that is its
  // deadline. Without one, an engine ordering transfers by deadline would place it behind every
  // prefetch it holds, and the promotions waiting for the slot with it.
  cmdset::Descriptor d = descriptor(Opcode::DEMOTE, b);
  d.deadline_ns = std::max<uint64_t>(1, static_cast<uint64_t>(std::llround(now_s * 1e9)));
  return d;
}

void HostControlPlane::enqueue(const cmdset::Descriptor& d, Opcode op, uint64_t key, double now_s) {
  if (op == Opcode::PROMOTE) demand(DemandDirection::ToHbm, now_s, static_cast<double>(d.length));
  commands_.path().enqueue(Command{d, key, op, now_s, now_s});
}

void HostControlPlane::enqueue(const cmdset::Descriptor& d, Opcode op, const Block& b,
                               double now_s) {
  if (op == Opcode::PROMOTE) demand(DemandDirection::ToHbm, now_s, static_cast<double>(d.length));
  commands_.path().enqueue(Command{d, b.id.key, op, now_s, now_s, b.record});
}

HostControlPlane::Block& HostControlPlane::block_of(const Command& c) {
  if (Block* b = find_block(c)) return *b;
  return blocks_.at(c.key);  // throws: the block is gone
}

HostControlPlane::Block* HostControlPlane::find_block(const Command& c) {
  return find_host_block(blocks_, c.record, c.key);
}

void HostControlPlane::promoted(const Command& p, double ready_s, double looked_up_s) {
  Block& b = block_of(p);
  if (policy_plane_.tracking() && looked_up_s > p.issued_s)
    policy_plane_.looked_up_later(b, p, looked_up_s);
  if (trace_.log && b.prefetched_unused &&
      (p.d.flags & static_cast<uint8_t>(cmdset::DescFlag::DEFERRABLE)))
    trace_.log->async_slice(trace_.prefetch, "promotion", "prefetch", p.requested_s, ready_s,
                            {{"deadline_s", p.d.deadline_ns * 1e-9}});
  b.mech.ready_s = ready_s;
  b.mech.in_flight = false;
  ++stats_.promotions;
  stats_.promoted_bytes += stored_bytes(b.mech.format);
  ledger_.promotion(b.moves);
  if (b.streamed_by) {
    // A streamed block's per-step re-read into staging: counted, not kept one by one. A decode
    // set streaming every step makes tens of millions of these in an hour of serving, and a
    // value each grew the run's memory without bound.
    ++stats_.streamed_promotion_latency_n;
    stats_.streamed_promotion_latency_sum_s += ready_s - p.requested_s;
    stats_.streamed_promotion_latency_max_s =
        std::max(stats_.streamed_promotion_latency_max_s, ready_s - p.requested_s);
  } else {
    // The maximum is taken over the same promotions and from the same origin (the decision) as
    // the percentiles, so that it can never fall below p99.
    stats_.promotion_latency_s.push_back(ready_s - p.requested_s);
    stats_.promotion_latency_max_s =
        std::max(stats_.promotion_latency_max_s, ready_s - p.requested_s);
  }
}

void HostControlPlane::demoted(const Command& c, double done_s) {
  Block& b = block_of(c);
  b.mech.in_flight = false;
  ++stats_.demotions;
  stats_.demoted_bytes += stored_bytes(b.mech.format);
  ledger_.demotion(b.moves);
  last_demotion_done_s_ = std::max(last_demotion_done_s_, done_s);
}

void HostControlPlane::flush(double at_s) {
  if (policy_plane_.tracking()) policy_plane_.sync(commands_.path().queued(), at_s);
  commands_.path().flush(at_s);
}

void HostControlPlane::step_grown(double now_s) {
  commands_.queues()
      .step();  // host.completion = poll: the runtime reads its completion queues every step
  if (!policy_plane_.syncing()) return;  // none: the noted blocks are looked at with the next batch
  if (policy_plane_.per_step()) {
    // The decode set's words, every step, in request order.
    std::vector<uint64_t> ids;
    ids.reserve(running_.size());
    for (const auto& [id, run] : running_) ids.push_back(id);
    std::sort(ids.begin(), ids.end());
    for (uint64_t id : ids)
      for (Block* b : running_.at(id).held)
        if (b->mech.tier_valid) policy_plane_.force(*b);
  }
  // Commands queued for a later post (a step's staging discards) keep their time: the updates
  // go with them then.
  if (commands_.path().idle() && policy_plane_.pending()) flush(now_s);
}

void HostControlPlane::completion_write(tlm::tlm_generic_payload& trans, sc_core::sc_time& delay) {
  if (!commands_.ring() || !trans.is_write() ||
      trans.get_data_length() != cmdset::kCompletionBytes) {
    trans.set_response_status(tlm::TLM_COMMAND_ERROR_RESPONSE);
    return;
  }
  commands_.ring()->on_completion(cmdset::decode_completion(trans.get_data_ptr()),
                                  to_seconds(sim_now() + delay));
  trans.set_response_status(tlm::TLM_OK_RESPONSE);
}

void HostControlPlane::demotion_refused(const Command& c) {
  // The index set is full: no tier copy was made and the block is gone.
  Block& b = block_of(c);
  b.mech.in_flight = false;
  b.mech.tier_valid = false;
  tier_.give_back(b.mech.tier_slot);
  ++stats_.dropped_index_full;
}

void HostControlPlane::recompressed(const Command& c) {
  ++stats_.recompressions;
  Block& b = block_of(c);
  stats_.recompressed_bytes += stored_bytes(b.mech.format);
  ledger_.rewrite(b.moves);
}

void HostControlPlane::failed(const Command& c, Status status) {
  SC_REPORT_ERROR(
      "kvtier/host",
      (std::string(cmdset::to_string(c.op)) + " of block " + std::to_string(c.key) + " completed " +
       cmdset::to_string(status) + ": host and device disagree about the index")
          .c_str());
}

}  // namespace kvtier
