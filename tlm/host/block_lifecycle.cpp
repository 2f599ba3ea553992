#include "tlm/host/block_lifecycle.h"

#include <algorithm>
#include <cmath>
#include <optional>
#include <string>

#include "tlm/host/book_look_ahead.h"

namespace kvtier {

using cmdset::Opcode;
using cmdset::Status;

namespace {
cmdset::Format wire_format(kv::Format f) {
  return f == kv::Format::Int4  ? cmdset::Format::INT4
         : f == kv::Format::Fp8 ? cmdset::Format::FP8
                                : cmdset::Format::BF16;
}
}  // namespace

BlockLifecycle::BlockLifecycle(const HostConfig& config, const KvGeometry& geometry,
                               BlockBooks& books, HbmSlots& slots, HostStats& stats,
                               uint64_t tier_blocks, tlm::tlm_initiator_socket<>& mmio,
                               uint32_t ring_entries, double cycle_s,
                               std::function<uint64_t()> staging_slots)
    : geometry_(geometry),
      books_(books),
      slots_(slots),
      stats_(stats),
      streaming_stats_(stats),
      own_tier_(std::make_unique<TierStore>(tier_blocks, geometry.block_bytes, config)),
      tier_(own_tier_.get()),
      staging_slots_(std::move(staging_slots)),
      commands_(config, mmio, ring_entries, cycle_s, stats, *this),
      policy_plane_(config.policy_sync, config.dma != HostDma::Host,
                    config.persistent_policy == PolicyPersistence::Device, books.table(), stats,
                    [this](const HostBlock& b) { return descriptor(Opcode::UPDATE_POLICY, b); }) {}

void BlockLifecycle::pin(HostBlock& b, kv::ReferenceKind how) {
  if (b.mech.pins++ == 0) {
    slots_.pin();
    books_.policy().pinned_held(b.id.key, b.policy_slot);
    policy_plane_.note(b);
  }
  note_held(b, how);
}

void BlockLifecycle::note_held(HostBlock& b, kv::ReferenceKind how) {
  const bool held = b.mech.pins > 0 && b.mech.in_hbm && !b.streamed_by;
  const bool recorded = b.bound_hold != ReferenceRecord::kNoHold;
  if (held == recorded) return;
  if (held) {
    b.bound_hold = books_.references().record(b.id.key, how, false, true);
  } else {
    books_.references().end_hold(b.bound_hold);
    b.bound_hold = ReferenceRecord::kNoHold;
  }
}

void BlockLifecycle::unpin(HostBlock& b, double now_s) {
  if (b.streamed_by) {
    // A streamed block is pinned without holding a slot: it goes back to being a tier copy.
    b.streamed_by = 0;
    if (--b.mech.pins == 0) {
      policy_plane_.note(b);
      if (!b.mech.in_hbm && b.mech.tier_valid) queue_tier_only(b);
    }
    note_held(b);
    return;
  }
  if (--b.mech.pins == 0) {
    policy_plane_.note(b);
    slots_.unpin();
    if (b.mech.in_hbm) books_.policy().idle_held(b.id.key, b.record, b.policy_slot, now_s);
  }
  note_held(b);
}

uint64_t BlockLifecycle::available_slots() const {
  const uint64_t held = slots_.pinned() + staging_slots_();
  return held >= geometry_.budget_blocks ? 0 : geometry_.budget_blocks - held;
}

void BlockLifecycle::promote(HostBlock& b, double deadline_s, uint16_t prio, bool deferrable,
                             double now_s, ChainRef chain) {
  b.hbm_slot = slots_.take();
  b.mech.in_hbm = true;
  b.mech.in_flight = true;
  note_held(b);
  cmdset::Descriptor d = descriptor(Opcode::PROMOTE, b);
  d.deadline_ns = static_cast<uint64_t>(std::llround(deadline_s * 1e9));
  d.prio = prio;
  if (deferrable) d.flags |= static_cast<uint8_t>(cmdset::DescFlag::DEFERRABLE);
  enqueue(d, Opcode::PROMOTE, b, now_s, chain);
}

void BlockLifecycle::free_session_blocks(uint64_t session, const std::vector<uint64_t>& keys,
                                         double now_s) {
  BookLookAhead ahead(books_.table(), keys.size(), [&](uint64_t j) { return keys[j]; });
  for (size_t j = 0; j < keys.size(); ++j) {
    ahead.before(j);
    const uint64_t key = keys[j];
    HostBlock* found = books_.find(key);
    if (!found) continue;  // listed twice
    HostBlock& b = *found;
    if (b.multi_session || b.id.session != session || b.mech.pins != 0 || b.mech.in_flight)
      continue;
    if (b.mech.in_hbm) {
      books_.policy().removed_held(key, b.policy_slot);
      slots_.give_back(b.hbm_slot);
    }
    ++stats_.frees;
    forget(b, now_s);
  }
}

void BlockLifecycle::forget(HostBlock& b, double now_s) {
  if (b.mech.tier_valid) {
    if (!pool_.pool) {
      enqueue(descriptor(Opcode::FREE, b), Opcode::FREE, b.id.key, now_s);
      tier_->give_back(b.mech.tier_slot);
    } else if (pool_.pool->release(b.id.key, pool_.member)) {
      // The copy's last holder: the one FREE (the pool has its slot back).
      enqueue(descriptor(Opcode::FREE, b), Opcode::FREE, b.id.key, now_s);
    }
  }
  books_.forget(b);
}

void BlockLifecycle::join_pool(TierPool& pool) {
  pool_.pool = &pool;
  pool_.member = pool.join(*this);
  tier_ = &pool.store();
  own_tier_.reset();
}

BlockLifecycle::PoolHold BlockLifecycle::hold_pool_copy(HostBlock& b, double now_s) {
  bool refused = false;
  const PoolCopy* c =
      pool_.pool->hold_on_eviction(b.id.key, b.owner_tenant, pool_.member, now_s, &refused);
  if (!c) return refused ? PoolHold::Refused : PoolHold::Absent;
  // Write-once across replicas: the copy is there, so leaving HBM moves nothing. The device's
  // entry is its storer's (its tenant owns the commands about it).
  b.mech.tier_valid = true;
  b.mech.tier_slot = c->slot;
  b.mech.format = c->format;
  b.owner_tenant = c->tenant;
  ++stats_.pool_held_again;
  return PoolHold::Held;
}

bool BlockLifecycle::attach_pool_copy(HostBlock& b, uint16_t tenant, double now_s) {
  if (!pool_.pool || b.mech.in_hbm || b.mech.tier_valid || b.mech.in_flight) return false;
  const PoolCopy* c = pool_.pool->readable(b.id.key, tenant, now_s);
  if (!c) return false;
  if (c->stored_by != pool_.member) ++stats_.pool_foreign_hits;
  pool_.pool->hold(b.id.key, pool_.member);
  b.mech.tier_valid = true;
  b.mech.tier_slot = c->slot;
  b.mech.format = c->format;
  b.owner_tenant = c->tenant;
  queue_tier_only(b);
  return true;
}

void BlockLifecycle::take_tier_slot(HostBlock& b) {
  if (!pool_.pool) {
    b.mech.tier_slot = tier_->take();
    return;
  }
  b.mech.tier_slot = pool_.pool
                         ->store_copy(b.id.key, tier_->copy_format(), b.owner_tenant,
                                      b.multi_session, pool_.member)
                         .slot;
}

void BlockLifecycle::queue_tier_only(HostBlock& b) {
  if (pool_.pool) pool_.pool->queue_for_reclaim(b.id.key);
  // The tier's order names the block by its record: telling a stale entry is then one load of
  // the record, not a look-up of the key's index slot and then the record (tens of millions of
  // entries on a per-layer run). Stale for good: the record freed, or holding another block (a
  // new record starts at epoch 0, and each epoch from 1 up is given once), or queued again since.
  else
    b.tier_epoch = tier_->queue_for_reclaim(b.record, [&](uint64_t record, uint64_t epoch) {
      const HostBlock* v = books_.table().find_record(static_cast<uint32_t>(record));
      return !v || v->tier_epoch != epoch;
    });
}

bool BlockLifecycle::needs_copy(uint64_t key) const {
  const HostBlock* b = books_.find(key);
  return b && (b->mech.in_hbm || b->mech.pins || b->mech.in_flight || b->streamed_by);
}

std::string BlockLifecycle::verify_pool_holdings() const {
  if (!pool_.pool) return "";
  std::string why;
  uint64_t valid = 0;
  books_.table().for_each([&](uint64_t key, const HostBlock& b) {
    if (!b.mech.tier_valid) return;
    ++valid;
    const PoolCopy* c = pool_.pool->find(key);
    if (!c || !((c->holders >> pool_.member) & 1) || c->slot != b.mech.tier_slot)
      why += "block " + std::to_string(key) + " holds no pool copy of its key in slot " +
             std::to_string(b.mech.tier_slot) + "; ";
  });
  if (const uint64_t held = pool_.pool->held_by(pool_.member); held != valid)
    why += "the pool counts " + std::to_string(held) + " copies held by replica " +
           std::to_string(pool_.member) + ", its books " + std::to_string(valid) + "; ";
  return why;
}

void BlockLifecycle::copy_reclaimed(uint64_t key) {
  // Tier-only and idle (the pool asked needs_copy() first): the block leaves the books, as a
  // private tier's reclaim makes it do, without a FREE of its own.
  if (HostBlock* b = books_.find(key); b && b->mech.tier_valid) {
    b->mech.tier_valid = false;
    books_.forget(*b);
  }
}

bool BlockLifecycle::move_to_tier(HostBlock& b, double now_s) {
  const PoolHold held =
      !b.mech.tier_valid && pool_.pool ? hold_pool_copy(b, now_s) : PoolHold::Absent;
  if (held == PoolHold::Refused) return false;
  if (!b.mech.tier_valid) {
    if (tier_->full()) reclaim_tier_slot(now_s);
    if (tier_->full()) return false;
    take_tier_slot(b);
    b.mech.tier_valid = true;  // corrected if the device answers NO_SPACE
    b.mech.in_flight = true;
    b.mech.format = tier_->copy_format();
    demand(DemandDirection::ToTier, now_s, static_cast<double>(stored_bytes(b.mech.format)));
    enqueue(room_demotion(b, now_s), Opcode::DEMOTE, b, now_s);
  } else {
    // Write-once: the tier copy is valid, so leaving HBM moves nothing (spec §M.1).
    enqueue(descriptor(Opcode::DISCARD, b), Opcode::DISCARD, b.id.key, now_s);
    ++stats_.discards;
  }
  integrate(now_s);
  books_.policy_states().evicted(b);
  policy_plane_.note(b);
  b.mech.in_hbm = false;
  note_held(b);
  slots_.give_back(b.hbm_slot);
  slots_.unpin();
  return true;
}

bool BlockLifecycle::reclaim_tier_slot(double now_s) {
  // Queued demotions finish (and stop being in flight) once posted.
  if (!commands_.path().idle()) flush(now_s);
  uint64_t key = 0, epoch = 0;
  if (pool_.pool) {
    PoolCopy copy;
    if (!pool_.pool->reclaim(pool_.member, &key, &copy)) return false;
    ++stats_.tier_evictions;
    // The one FREE, in the name of the copy's owner; this replica's own block of it, if any,
    // leaves the books (the other holders' blocks have left theirs).
    cmdset::Descriptor d;
    d.opcode = Opcode::FREE;
    d.key = key;
    d.tenant = copy.tenant;
    d.tier_addr = copy.slot * geometry_.block_bytes;
    d.length = static_cast<uint32_t>(stored_bytes(copy.format));
    d.format = wire_format(copy.format);
    enqueue(d, Opcode::FREE, key, now_s);
    if (HostBlock* b = books_.find(key); b && b->mech.tier_valid) {
      b->mech.tier_valid = false;
      books_.forget(*b);
    }
    return true;
  }
  uint64_t record = 0;
  while (tier_->next_reclaim_candidate(&record, &epoch)) {
    // By its record (queue_tier_only); the epoch tells whether it is still the block queued.
    HostBlock* found = books_.table().find_record(static_cast<uint32_t>(record));
    if (!found) continue;
    HostBlock& v = *found;
    if (v.tier_epoch != epoch || v.mech.in_hbm || !v.mech.tier_valid || v.mech.in_flight ||
        v.mech.pins)
      continue;
    ++stats_.tier_evictions;
    forget(v, now_s);  // tier-valid: FREEs the tier copy
    return true;
  }
  return false;
}

double BlockLifecycle::make_room(uint64_t slots, double now_s) {
  if (slots_.free() >= slots) return now_s;
  ReplacementPolicy& policy = books_.policy();
  bool demoted = false;
  last_demotion_done_s_ = now_s;
  while (slots_.free() < slots) {
    // A policy that keeps slots names the victim's record; another one its key.
    const bool by_record = policy.keeps_slots();
    std::optional<uint64_t> victim;
    if (!by_record) victim = policy.victim();
    else if (const auto owner = policy.victim_owner()) victim = *owner;
    if (!victim)
      SC_REPORT_FATAL(
          "kvtier/host",
          ("no evictable block although the admission check passed (need " + std::to_string(slots) +
           " free slots, have " + std::to_string(slots_.free()) + "; resident " +
           std::to_string(slots_.resident()) + ", pinned " + std::to_string(slots_.pinned()) +
           ", staging " + std::to_string(staging_slots_()) + ")")
              .c_str());
    HostBlock& b =
        by_record ? books_.table().by_record(static_cast<uint32_t>(*victim)) : books_.at(*victim);
    policy.removed_held(b.id.key, b.policy_slot);
    books_.policy_states().evicted(b);
    b.mech.in_hbm = false;
    b.prefetched_unused = false;  // fetched and never used
    policy_plane_.note(b);        // idle, and its reuse score gone unless persistent
    slots_.give_back(b.hbm_slot);
    // In a pool, a copy another replica stored is held instead of stored again.
    const PoolHold held =
        !b.mech.tier_valid && pool_.pool ? hold_pool_copy(b, now_s) : PoolHold::Absent;
    const bool refused = held == PoolHold::Refused;
    // The tier is finite too: when it is full, the copy of the block that left HBM longest
    // ago is freed to make room (never a pinned or in-flight one).
    if (!b.mech.tier_valid && !refused && tier_->full()) reclaim_tier_slot(now_s);
    if (b.mech.tier_valid || (!refused && !tier_->full())) queue_tier_only(b);
    if (b.mech.tier_valid) {
      // Write-once: the tier copy is still valid, so eviction moves nothing (spec §M.1).
      enqueue(descriptor(Opcode::DISCARD, b), Opcode::DISCARD, b.id.key, now_s);
      ++stats_.discards;
      if (tier_->recompresses(b.mech.format)) {
        // The RECOMPRESS policy: the block went cold again; re-quantise its tier copy in place.
        // This rewrites payload and breaks write-once for exactly this block (spec §M.1).
        b.mech.format = tier_->recompress_format();
        // Nothing waits for the rewrite: a deadline-ordered engine may hold it.
        cmdset::Descriptor d = descriptor(Opcode::RECOMPRESS, b);
        d.flags |= static_cast<uint8_t>(cmdset::DescFlag::DEFERRABLE);
        enqueue(d, Opcode::RECOMPRESS, b, now_s);
      }
    } else if (!refused && !tier_->full()) {
      take_tier_slot(b);
      b.mech.tier_valid = true;  // corrected if the device answers NO_SPACE
      b.mech.in_flight = true;
      b.mech.format = tier_->copy_format();  // the control plane's choice of representation
      if (pool_.pool) queue_tier_only(b);    // its entry in the pool exists only now
      demand(DemandDirection::ToTier, now_s, static_cast<double>(stored_bytes(b.mech.format)));
      enqueue(room_demotion(b, now_s), Opcode::DEMOTE, b, now_s);
      demoted = true;
    } else if (refused) {
      ++stats_.pool_no_copy;  // lost: its copy in the pool is unwritten or another tenant's
    } else {
      ++stats_.dropped_no_tier_space;  // lost: the next reference recomputes it
    }
  }
  flush(now_s);
  // A demoted block's slot is reusable once the device has read it out.
  return demoted ? std::max(now_s, last_demotion_done_s_) : now_s;
}

cmdset::Descriptor BlockLifecycle::descriptor(Opcode op, const HostBlock& b) const {
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

cmdset::Descriptor BlockLifecycle::room_demotion(const HostBlock& b, double now_s) const {
  // Every demotion makes room (an eviction or a spill), and the room is wanted now: that is its
  // deadline. Without one, an engine ordering transfers by deadline would place it behind every
  // prefetch it holds, and the promotions waiting for the slot with it.
  cmdset::Descriptor d = descriptor(Opcode::DEMOTE, b);
  d.deadline_ns = std::max<uint64_t>(1, static_cast<uint64_t>(std::llround(now_s * 1e9)));
  return d;
}

void BlockLifecycle::enqueue(const cmdset::Descriptor& d, Opcode op, uint64_t key, double now_s,
                             ChainRef chain) {
  if (op == Opcode::PROMOTE) demand(DemandDirection::ToHbm, now_s, static_cast<double>(d.length));
  Command c{d, key, op, now_s, now_s};
  c.chain = chain.chain;
  c.chain_version = chain.version;
  commands_.path().enqueue(c);
}

void BlockLifecycle::enqueue(const cmdset::Descriptor& d, Opcode op, const HostBlock& b,
                             double now_s, ChainRef chain) {
  if (op == Opcode::PROMOTE) demand(DemandDirection::ToHbm, now_s, static_cast<double>(d.length));
  Command c{d, b.id.key, op, now_s, now_s, b.record};
  c.chain = chain.chain;
  c.chain_version = chain.version;
  commands_.path().enqueue(c);
}

void BlockLifecycle::flush(double at_s) {
  if (policy_plane_.tracking()) policy_plane_.sync(commands_.path().queued(), at_s);
  commands_.path().flush(at_s);
}

HostBlock& BlockLifecycle::block_of(const Command& c) {
  if (HostBlock* b = find_host_block(books_.table(), c.record, c.key)) return *b;
  return books_.at(c.key);  // throws: the block is gone
}

void BlockLifecycle::promoted(const Command& p, double ready_s, double looked_up_s) {
  HostBlock& b = block_of(p);
  if (policy_plane_.tracking() && looked_up_s > p.issued_s)
    policy_plane_.looked_up_later(b, p, looked_up_s);
  if (trace_ && b.prefetched_unused &&
      (p.d.flags & static_cast<uint8_t>(cmdset::DescFlag::DEFERRABLE)))
    trace_->async_slice(prefetch_track_, "promotion", "prefetch", p.requested_s, ready_s,
                        {{"deadline_s", p.d.deadline_ns * 1e-9}});
  b.mech.ready_s = ready_s;
  b.mech.in_flight = false;
  ++stats_.promotions;
  stats_.promoted_bytes += stored_bytes(b.mech.format);
  books_.ledger().promotion(b.moves);
  if (b.streamed_by) {
    // A streamed block's per-step re-read into staging: counted, not kept one by one. A decode
    // set streaming every step makes tens of millions of these in an hour of serving, and a
    // value each grew the run's memory without bound.
    ++streaming_stats_.streamed_promotion_latency_n;
    streaming_stats_.streamed_promotion_latency_sum_s += ready_s - p.requested_s;
    streaming_stats_.streamed_promotion_latency_max_s =
        std::max(streaming_stats_.streamed_promotion_latency_max_s, ready_s - p.requested_s);
  } else {
    // The maximum is taken over the same promotions and from the same origin (the decision) as
    // the percentiles, so that it can never fall below p99.
    stats_.promotion_latency_s.push_back(ready_s - p.requested_s);
    stats_.promotion_latency_max_s =
        std::max(stats_.promotion_latency_max_s, ready_s - p.requested_s);
  }
}

void BlockLifecycle::demoted(const Command& c, double done_s) {
  HostBlock& b = block_of(c);
  b.mech.in_flight = false;
  ++stats_.demotions;
  stats_.demoted_bytes += stored_bytes(b.mech.format);
  if (pool_.pool) pool_.pool->written(b.id.key, done_s);
  books_.ledger().demotion(b.moves);
  last_demotion_done_s_ = std::max(last_demotion_done_s_, done_s);
}

void BlockLifecycle::demotion_refused(const Command& c) {
  // The index set is full: no tier copy was made and the block is gone.
  HostBlock& b = block_of(c);
  b.mech.in_flight = false;
  b.mech.tier_valid = false;
  if (pool_.pool) pool_.pool->refused(b.id.key);
  else tier_->give_back(b.mech.tier_slot);
  ++stats_.dropped_index_full;
}

void BlockLifecycle::recompressed(const Command& c) {
  ++stats_.recompressions;
  HostBlock& b = block_of(c);
  stats_.recompressed_bytes += stored_bytes(b.mech.format);
  books_.ledger().rewrite(b.moves);
}

void BlockLifecycle::failed(const Command& c, Status status) {
  SC_REPORT_ERROR(
      "kvtier/host",
      (std::string(cmdset::to_string(c.op)) + " of block " + std::to_string(c.key) + " completed " +
       cmdset::to_string(status) + ": host and device disagree about the index")
          .c_str());
}

}  // namespace kvtier
