#include "tlm/host/prompt_admission.h"

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "tlm/host/book_look_ahead.h"

namespace kvtier {

namespace {
// Promotions a starting step waits for.
constexpr uint16_t kAdmissionPriority = Prefetcher::kAdmissionPriority;
}  // namespace

PromptAdmission::CachedPrefix PromptAdmission::cached_prefix(const workload::Request& r) const {
  CachedPrefix c;
  const uint64_t full = r.prompt_tokens / config_.block_tokens;
  bool hbm_run = true;
  for (uint64_t i = 0; i < full; ++i) {
    const uint64_t pk =
        i < r.prefix_hashes.size() ? r.prefix_hashes[i] : workload::decode_block_key(r.session, i);
    bool in_hbm = true, cached = true;
    for (uint32_t g = 0; g < geometry_.layer_groups && cached; ++g) {
      const uint64_t key = geometry_.group_key(pk, g);
      const HostBlock* b = books_.find(key);
      in_hbm = in_hbm && b && b->mech.in_hbm;
      // A tier shared by several replicas serves what any of them stored (arrival time: what a
      // router sees when it decides).
      cached = (b && (b->mech.in_hbm || b->mech.tier_valid)) ||
               lifecycle_.pool_serves(key, static_cast<uint16_t>(r.tenant), r.arrival_s);
    }
    if (!cached) break;
    hbm_run = hbm_run && in_hbm;
    c.hbm_positions += hbm_run;
    ++c.cached_positions;
  }
  return c;
}

AdmitResult PromptAdmission::admit(const workload::Request& r, RunningRequest& run, double now_s,
                                   const LoadPlan& plan) {
  run.streamed.assign(geometry_.layer_groups, {});
  AdmitResult res;
  res.ready_s.assign(geometry_.layer_groups, now_s);
  const uint32_t bt = config_.block_tokens;
  const uint64_t full = r.prompt_tokens / bt;
  run.prompt_pk.resize(full);
  run.prompt_cached.assign(full, 0);
  std::vector<HostBlock*> to_promote, tier_hits;
  std::vector<HostBlock*> group_blocks(geometry_.layer_groups);
  uint64_t cached_positions = 0;
  auto deadline_of = [&](uint32_t g) {
    return plan.step_start_s + plan.step_s * g / geometry_.layer_groups;
  };
  // Streamed residency: how many tier hits may still be promoted, counted live, since pinning this
  // request's idle HBM hits takes obtainable slots away too.
  uint64_t first_computed_slots = 0;  // set once the prompt's cached positions are known
  auto promote_room = [&]() -> uint64_t {
    const uint64_t obtainable = slots_.free() + books_.policy().evictable();
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
  BookLookAhead ahead(books_.table(), full * geometry_.layer_groups, [&](uint64_t j) {
    return geometry_.group_key(position_key(j / geometry_.layer_groups),
                               static_cast<uint32_t>(j % geometry_.layer_groups));
  });
  for (uint64_t i = 0; i < full; ++i) {
    const uint64_t pk = position_key(i);
    run.prompt_pk[i] = pk;
    bool position_cached = true;
    for (uint32_t g = 0; g < geometry_.layer_groups; ++g) {
      ahead.before(i * geometry_.layer_groups + g);
      HostBlock& b = books_.keyed(geometry_.group_key(pk, g), r.session, i, g, pk, r.tenant);
      // No copy of its own: another replica's in a shared tier serves it.
      lifecycle_.attach_pool_copy(b, static_cast<uint16_t>(r.tenant), now_s);
      group_blocks[g] = &b;
      lifecycle_.reference(b, r.tenant, now_s, run.continues, true);
      // A block another request streams is recomputed rather than promoted: promoting it would
      // need room streamed residency is short of by construction.
      const bool readable =
          b.mech.in_hbm || (b.mech.tier_valid && plan.promote_from_tier && !b.streamed_by);
      ++stats_.references;
      position_cached = position_cached && readable;
    }
    // The offline bound's string: a block is read where the position is served from cache or
    // the block is resident. A position prefill recomputes produces its other blocks anew when
    // prefill computes them (grow(): a Produce that holds the block, in the step that computes
    // it), not here: the reference is counted without an entry of its own (the tier copy of one
    // of its groups is not promoted, so the bound must not charge a read of it either).
    for (uint32_t g = 0; g < geometry_.layer_groups; ++g) {
      const HostBlock& b = *group_blocks[g];
      if (position_cached || b.mech.in_hbm)
        books_.references().record(b.id.key, kv::ReferenceKind::Read, true);
      else books_.references().count_produced_later();
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
      HostBlock& b = *group_blocks[g];
      if (b.mech.in_hbm) {
        ++res.hbm_hits;
        lifecycle_.settle(b, now_s);
        res.ready_s[g] = std::max(res.ready_s[g], b.mech.ready_s);
        if (b.prefetched_unused) {
          // A prefetched block read for the first time: its transfer is judged against this use.
          b.prefetched_unused = false;
          lifecycle_.policy_plane().note(b);
          prefetcher_.used(now_s, b.mech.ready_s);
          res.transfers.push_back(
              {g, b.mech.ready_s, deadline_of(g), 0, lifecycle_.stored_bytes(b.mech.format)});
          from_tier = true;
          res.loaded_bytes += lifecycle_.stored_bytes(b.mech.format);
        } else if (b.mech.ready_s > now_s) {
          // Still arriving for another reader (a promotion or prefetch already in flight).
          res.transfers.push_back(
              {g, b.mech.ready_s, deadline_of(g), 0, lifecycle_.stored_bytes(b.mech.format)});
        }
      } else {
        ++res.tier_hits;
        tier_hits.push_back(&b);
        from_tier = true;
        res.loaded_bytes += lifecycle_.stored_bytes(b.mech.format);
        continue;  // pinned below, once every HBM hit of the prompt holds its pin
      }
      lifecycle_.pin(b);
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
  for (HostBlock* b : tier_hits) {
    if (b->streamed_by == r.id + 1) continue;  // named twice in this prompt: streamed once
    if (streaming_ && to_promote.size() >= promote_room() && !b->mech.in_flight &&
        !b->streamed_by && b->mech.pins == 0) {
      ++b->mech.pins;
      b->streamed_by = r.id + 1;
      run.streamed[b->id.layer_group].push_back(b->id.key);
      ++run.chain_version;
      ++streaming_stats_.streamed_at_admission;
    } else {
      lifecycle_.pin(*b);
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
  std::stable_sort(
      to_promote.begin(), to_promote.end(),
      [](const HostBlock* a, const HostBlock* b) { return a->id.layer_group < b->id.layer_group; });
  to_promote.erase(std::unique(to_promote.begin(), to_promote.end()), to_promote.end());
  std::vector<HostBlock*> issued;
  const uint64_t mark = ++admissions_;  // a block issued by this admission carries it
  for (HostBlock* b : to_promote)
    if (!b->mech.in_hbm && b->issued_by != mark) {
      b->issued_by = mark;
      issued.push_back(b);
    }
  if (issued.size() > slots_.free() + books_.policy().evictable())
    SC_REPORT_FATAL(
        "kvtier/host",
        ("admission of request " + std::to_string(r.id) + " promotes " +
         std::to_string(issued.size()) + " blocks but only " +
         std::to_string(slots_.free() + books_.policy().evictable()) +
         " slots can be had (promote room " + std::to_string(plan.promote_room) + "; first: pins " +
         std::to_string(issued[0]->mech.pins) + " in_flight " +
         std::to_string(issued[0]->mech.in_flight) + " streamed_by " +
         std::to_string(issued[0]->streamed_by) + " free " + std::to_string(slots_.free()) +
         " evictable " + std::to_string(books_.policy().evictable()) + ")")
            .c_str());
  const double room_ready_s = lifecycle_.make_room(issued.size(), now_s);
  for (HostBlock* b : issued)
    // Deadline: the planned start of the layer group that reads the block in its step.
    lifecycle_.promote(*b, deadline_of(b->id.layer_group), kAdmissionPriority, false, now_s,
                       {admission_chain(r.id), 1});
  lifecycle_.flush(room_ready_s);
  for (HostBlock* b : issued) {
    res.ready_s[b->id.layer_group] = std::max(res.ready_s[b->id.layer_group], b->mech.ready_s);
    res.transfers.push_back({b->id.layer_group, b->mech.ready_s, deadline_of(b->id.layer_group), 0,
                             lifecycle_.stored_bytes(b->mech.format)});
    if (trace_) {
      const TraceEventLog::Track& t = track_;
      trace_->async_slice(
          t, "promotion",
          "request " + std::to_string(r.id) + " group " + std::to_string(b->id.layer_group), now_s,
          b->mech.ready_s, {{"deadline_s", deadline_of(b->id.layer_group)}});
      res.transfers.back().flow = trace_->flow_start(t, "promotion", now_s);
    }
  }
  for (const Transfer& t : res.transfers) res.load_ready_s = std::max(res.load_ready_s, t.ready_s);
  return res;
}

}  // namespace kvtier
