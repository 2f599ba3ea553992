#include "tlm/host/policy_plane.h"

namespace kvtier {

using cmdset::Opcode;

BlockIntent PolicyPlane::intent_of(const HostBlock& b) {
  if (b.prefetched_unused) return BlockIntent::WantedSoon;
  if (b.mech.pins > 0) return BlockIntent::ReadEveryStep;  // pinned in HBM, or streamed
  return b.has_policy && b.policy.continues ? BlockIntent::MayReturn : BlockIntent::Unwanted;
}

void PolicyPlane::looked_up_later(const HostBlock& b, const Command& p, double looked_up_s) {
  auto [it, fresh] = lookups_ahead_.try_emplace(b.record);
  // A promotion that carried the host's word is current at its look-up unless the host changes
  // it before then.
  it->second = {looked_up_s, b.id.key, p.host_word,
                static_cast<uint8_t>(p.d.policy) == p.host_word};
  lookups_ahead_order_.emplace_back(looked_up_s, b.record);
}

// Which word a command carries is settled when it is posted, not when it was queued: the
// intent may change in between (a block promoted for an admission is pinned after its PROMOTE
// was queued). A DEMOTE writes the host's word into the entry it creates; a PROMOTE writes it
// into the entry it reads (the command set's rule: the intent travels with the request), so a
// block moved by the batch needs no update of its own. Under host.policy_sync = none a PROMOTE
// carries the entry's own word instead, and the device acts on it: counted stale when the
// host's differs. A block's update goes just ahead of the batch's first command about it (a
// DISCARD, say), the others after the batch: no transfer of the batch waits for them.
void PolicyPlane::sync(std::vector<Command>& batch, double at_s) {
  // Look-ups done by now cannot be raced any more.
  while (!lookups_ahead_order_.empty() && lookups_ahead_order_.front().first <= at_s) {
    const auto [when, record] = lookups_ahead_order_.front();
    lookups_ahead_order_.pop_front();
    if (auto it = lookups_ahead_.find(record);
        it != lookups_ahead_.end() && it->second.looked_up_s == when)
      lookups_ahead_.erase(it);
  }
  const bool send = syncing();
  std::vector<HostBlock*>& carried = carried_;  // blocks a PROMOTE or DEMOTE of the batch carries
  carried.clear();
  for (Command& c : batch) {
    if (c.op != Opcode::PROMOTE && c.op != Opcode::DEMOTE) continue;
    HostBlock* b = find_block(c);
    if (!b) continue;
    const uint8_t word = word_of(*b);
    if (c.op == Opcode::DEMOTE) {
      c.d.policy = word;
      ++stats_.policy_words_carried;
    } else {
      c.host_word = word;
      c.d.policy = send ? word : b->sent_word;
      if (c.d.policy != word) ++stats_.stale_at_post;
      if (c.d.policy != b->sent_word) ++stats_.policy_words_promoted;
    }
    b->sent_word = static_cast<uint8_t>(c.d.policy);
    b->policy_marks |= kCarried;
    carried.push_back(b);
  }
  std::vector<Command>& updates = updates_;
  std::vector<NotedBlock>& kept = kept_;  // noted blocks a coming PROMOTE will carry
  updates.clear();
  kept.clear();
  for (const NotedBlock& n : noted_) consider(n, false, at_s, updates, kept);
  for (const NotedBlock& n : forced_) consider(n, true, at_s, updates, kept);
  noted_.swap(kept);
  forced_.clear();
  if (!updates.empty()) {
    // Each update before the first command about its block (its mark is cleared there), the
    // rest after the batch.
    // A local map: a kept one's clear() would sweep every bucket its largest batch made.
    std::unordered_map<uint32_t, size_t> update_of;
    update_of.reserve(updates.size());
    for (size_t i = 0; i < updates.size(); ++i) update_of.emplace(updates[i].record, i);
    std::vector<Command>& merged = merged_;
    merged.clear();
    merged.reserve(batch.size() + updates.size());
    for (const Command& c : batch) {
      HostBlock* b = find_block(c);
      if (b && (b->policy_marks & kPosted)) {
        merged.push_back(updates[update_of.at(b->record)]);
        b->policy_marks &= static_cast<uint8_t>(~kPosted);
      }
      merged.push_back(c);
    }
    for (const Command& u : updates)
      if (HostBlock* b = blocks_.find_record(u.record); b->policy_marks & kPosted) {
        merged.push_back(u);
        b->policy_marks &= static_cast<uint8_t>(~kPosted);
      }
    batch.swap(merged);
  }
  for (HostBlock* b : carried) b->policy_marks &= static_cast<uint8_t>(~kCarried);
  stats_.policy_updates += updates.size();
}

void PolicyPlane::consider(const NotedBlock& n, bool forced, double at_s,
                           std::vector<Command>& updates, std::vector<NotedBlock>& kept) {
  HostBlock* b = blocks_.find_record(n.record);
  if (!b || b->id.key != n.key) return;  // forgotten since (its FREE ended the entry)
  if (!forced) b->policy_marks &= static_cast<uint8_t>(~kNoted);
  const uint8_t word = word_of(*b);
  if (!forced && !lookups_ahead_.empty())
    if (auto it = lookups_ahead_.find(n.record); it != lookups_ahead_.end()) {
      const LookupAhead& a = it->second;
      if (a.key == n.key && a.looked_up_s > at_s && a.current && word != a.word) {
        ++stats_.stale_by_race;  // the look-up comes after the change, before its update
        lookups_ahead_.erase(it);
      }
    }
  if (!syncing() || !b->mech.tier_valid || (b->policy_marks & (kCarried | kPosted))) return;
  if (word == b->sent_word && !forced) return;
  if (!forced && b->mech.pins > 0 && !b->mech.in_hbm) {
    // Read by a request and not in HBM: a PROMOTE of it is coming (the admission that pinned
    // it, or its step's streamed read) and will carry the word. Kept noted until then.
    b->policy_marks |= kNoted;
    kept.push_back(n);
    return;
  }
  cmdset::Descriptor d = update_(*b);
  d.policy = word;
  updates.push_back(Command{d, b->id.key, Opcode::UPDATE_POLICY, at_s, at_s, b->record});
  stats_.policy_updates_forced += word == b->sent_word;
  b->sent_word = word;
  b->policy_marks |= kPosted;
}

}  // namespace kvtier
