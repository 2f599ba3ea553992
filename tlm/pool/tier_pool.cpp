#include "tlm/pool/tier_pool.h"

#include <limits>
#include <stdexcept>

namespace kvtier {

TierPool::TierPool(uint64_t blocks, uint64_t block_bytes, const HostConfig& config)
    : store_(blocks, block_bytes, config) {}

uint32_t TierPool::join(PoolMemberIF& member) {
  if (members_.size() >= 64) throw std::logic_error("TierPool: at most 64 replicas share one pool");
  members_.push_back(&member);
  return static_cast<uint32_t>(members_.size() - 1);
}

const PoolCopy* TierPool::visible(uint64_t key, uint16_t tenant, double now_s) const {
  const PoolCopy* c = copies_.find(key);
  if (!c || (c->tenant != tenant && !c->shareable) || c->ready_s > now_s) return nullptr;
  return c;
}

const PoolCopy* TierPool::readable(uint64_t key, uint16_t tenant, double now_s) {
  const PoolCopy* c = copies_.find(key);
  if (!c) return nullptr;
  if (c->tenant != tenant && !c->shareable) {
    ++stats_.refused_tenant;
    return nullptr;
  }
  if (c->ready_s > now_s) {
    ++stats_.refused_unwritten;
    return nullptr;
  }
  return c;
}

void TierPool::hold(uint64_t key, uint32_t member) {
  PoolCopy* c = copies_.find(key);
  if (!c) throw std::logic_error("TierPool::hold: no copy of the key");
  c->holders |= bit(member);
  ++stats_.found;
  if (c->stored_by != member) ++stats_.found_foreign;
}

const PoolCopy* TierPool::hold_on_eviction(uint64_t key, uint16_t tenant, uint32_t member,
                                           double now_s, bool* refused) {
  *refused = false;
  PoolCopy* c = copies_.find(key);
  if (!c) return nullptr;
  if (!readable(key, tenant, now_s)) {
    *refused = true;
    return nullptr;
  }
  c->holders |= bit(member);
  ++stats_.held_again;
  return c;
}

const PoolCopy& TierPool::store_copy(uint64_t key, kv::Format format, uint16_t tenant,
                                     bool shareable, uint32_t member) {
  auto [c, inserted] = copies_.try_emplace(key);
  if (!inserted) throw std::logic_error("TierPool::store_copy: the key is stored already");
  c->slot = store_.take();
  c->format = format;
  c->tenant = tenant;
  c->shareable = shareable;
  c->ready_s = std::numeric_limits<double>::infinity();
  c->holders = bit(member);
  c->stored_by = member;
  ++stats_.stored;
  note_used();
  return *c;
}

void TierPool::written(uint64_t key, double done_s) {
  if (PoolCopy* c = copies_.find(key)) c->ready_s = done_s;
}

void TierPool::refused(uint64_t key) {
  if (const PoolCopy* c = copies_.find(key)) {
    store_.give_back(c->slot);
    copies_.erase(key);
  }
}

bool TierPool::release(uint64_t key, uint32_t member) {
  PoolCopy* c = copies_.find(key);
  if (!c) return false;
  c->holders &= ~bit(member);
  if (c->holders) return false;
  store_.give_back(c->slot);
  copies_.erase(key);
  ++stats_.freed;
  return true;
}

uint64_t TierPool::held_by(uint32_t member) const {
  uint64_t n = 0;
  copies_.for_each([&](uint64_t, const PoolCopy& c) { n += (c.holders >> member) & 1; });
  return n;
}

void TierPool::queue_for_reclaim(uint64_t key) {
  // Stale for good: the copy freed since (a later copy of the key gets a later epoch), or
  // queued again by a later holder.
  if (PoolCopy* c = copies_.find(key))
    c->epoch = store_.queue_for_reclaim(key, [&](uint64_t k, uint64_t epoch) {
      const PoolCopy* q = copies_.find(k);
      return !q || q->epoch != epoch;
    });
}

bool TierPool::reclaim(uint32_t member, uint64_t* key, PoolCopy* copy) {
  uint64_t k = 0, epoch = 0;
  while (store_.next_reclaim_candidate(&k, &epoch)) {
    PoolCopy* c = copies_.find(k);
    // Stale: freed since, or queued again by a later holder (that entry stands).
    if (!c || c->epoch != epoch) continue;
    bool needed = false;
    for (uint32_t m = 0; m < members_.size() && !needed; ++m)
      needed = (c->holders & bit(m)) && members_[m]->needs_copy(k);
    // A copy some holder needs now is queued again when that holder lets it become tier-only.
    if (needed) continue;
    *copy = *c;
    const uint64_t holders = c->holders;
    store_.give_back(c->slot);
    copies_.erase(k);
    ++stats_.reclaimed;
    if (holders & ~bit(member)) ++stats_.reclaimed_held_elsewhere;
    for (uint32_t m = 0; m < members_.size(); ++m)
      if (m != member && (holders & bit(m))) members_[m]->copy_reclaimed(k);
    *key = k;
    return true;
  }
  return false;
}

}  // namespace kvtier
