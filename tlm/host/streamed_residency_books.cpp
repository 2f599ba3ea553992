#include "tlm/host/streamed_residency_books.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <systemc>

#include "tlm/host/prefetcher.h"

namespace kvtier {

using cmdset::Opcode;

bool StreamedResidencyBooks::spill(uint64_t id, double now_s) {
  if (!geometry_.possible) return false;
  RunningRequest& run = running_.at(id);
  for (; run.spill_cursor < run.keys.size(); ++run.spill_cursor) {
    HostBlock& b = *run.held[run.spill_cursor];
    // Only a block this request alone holds: another reader would lose its resident copy.
    if (!b.mech.in_hbm || b.mech.pins != 1 || b.mech.in_flight || b.streamed_by ||
        b.mech.ready_s > now_s)
      continue;
    if (host_.tier_refuses(b, now_s)) continue;       // a shared tier keeps no copy of it
    if (!host_.move_to_tier(b, now_s)) return false;  // the tier is full of blocks that cannot go
    b.streamed_by = id + 1;
    run.streamed[b.id.layer_group].push_back(b.id.key);
    ++stats_.spills;
    host_.flush(now_s);
    if (!b.mech.tier_valid) {
      // The device index had no room for it (NO_SPACE): it cannot live in the tier, so it stays
      // resident (the slot it just gave back is the one it takes again) and the next block is
      // tried.
      b.hbm_slot = slots_.take();
      b.mech.in_hbm = true;
      slots_.pin();
      b.streamed_by = 0;
      host_.note_held(b);
      run.streamed[b.id.layer_group].pop_back();
      --stats_.spills;
      continue;
    }
    ++run.spill_cursor;
    ++run.chain_version;
    return true;
  }
  return false;
}

uint64_t StreamedResidencyBooks::streamed_blocks(const std::vector<uint64_t>& ids,
                                                 uint32_t g) const {
  uint64_t n = 0;
  for (uint64_t id : ids) {
    auto it = running_.find(id);
    if (it != running_.end() && !it->second.streamed.empty()) n += it->second.streamed[g].size();
  }
  return n;
}

uint64_t StreamedResidencyBooks::streamed_blocks_total(uint64_t id) const {
  auto it = running_.find(id);
  if (it == running_.end()) return 0;
  uint64_t n = 0;
  for (const auto& list : it->second.streamed) n += list.size();
  return n;
}

bool StreamedResidencyBooks::set_staging(uint64_t slots, double now_s) {
  host_.integrate(now_s);
  // Fewer staging slots: the ones group 0's early copies sit in may go to other blocks.
  if (slots < staging_.size()) drop_streamed_ahead(now_s);
  if (slots > staging_.size()) {
    const uint64_t more = slots - staging_.size();
    if (more > host_.available_slots()) return false;
    host_.make_room(more, now_s);
    for (uint64_t i = 0; i < more; ++i) staging_.push_back(slots_.take());
  } else {
    while (staging_.size() > slots) {
      slots_.give_back(staging_.back());
      staging_.pop_back();
    }
  }
  stats_.peak_staging_slots = std::max<uint64_t>(stats_.peak_staging_slots, staging_.size());
  return true;
}

std::vector<HostBlock*> StreamedResidencyBooks::promote(const std::vector<uint64_t>& ids,
                                                        uint32_t g, double issue_s,
                                                        double deadline_s, StreamResult& res,
                                                        uint64_t lead, double rest_issue_s,
                                                        uint64_t limit) {
  // Streaming is for contention: once the budget has room again beyond the admission watermark
  // (vLLM's 1 %) and one step's decode growth (a block per layer group per running request), a
  // streamed block's promotion goes to a slot of its own instead of staging, and the block stops
  // streaming. Without this a position spilled in a brief squeeze would cross the link every
  // step until its request ends. Only free or evictable slots are taken: running KV before cached.
  const uint64_t floor = geometry_.kv.budget_blocks / 100 +
                         static_cast<uint64_t>(geometry_.kv.layer_groups) * running_.size();
  uint64_t room = 0;
  if (geometry_.restore_streamed && host_.available_slots() > floor)
    room = host_.available_slots() - floor;
  if (room > 0) host_.integrate(issue_s);  // resident changes below
  std::vector<HostBlock*> sent, restored;
  std::vector<cmdset::Descriptor>
      rest;  // staged promotions beyond the lead, posted at rest_issue_s
  double room_ready_s = issue_s;
  // A staged promotion is a member of its reader's streamed chain (host.decision = device: the
  // device issues it); a restored one is the host's decision.
  auto post = [&](cmdset::Descriptor d, double at_s, ChainRef chain) {
    d.deadline_ns = static_cast<uint64_t>(std::llround(deadline_s * 1e9));
    d.prio = Prefetcher::kAdmissionPriority;  // promotions a starting step waits for
    host_.enqueue(d, Opcode::PROMOTE, d.key, at_s, chain);
  };
  std::vector<ChainRef> rest_chain;
  for (uint64_t id : ids) {
    auto it = running_.find(id);
    if (it == running_.end() || it->second.streamed.empty()) continue;
    RunningRequest& run = it->second;
    auto& list = run.streamed[g];
    size_t kept = 0;
    for (size_t i = 0; i < list.size(); ++i) {
      const uint64_t key = list[i];
      HostBlock& b = blocks_.at(key);
      if (!b.streamed_ahead && room == 0 && sent.size() >= limit) {
        list[kept++] = key;  // beyond the limit: left for a later call
        continue;
      }
      ++res.blocks;
      res.bytes += host_.stored_bytes(b.mech.format);
      if (b.streamed_ahead) {
        // Promoted during the step before: already in its staging slot, usable since promoted().
        b.streamed_ahead = false;
        res.ready_s = std::max(res.ready_s, b.mech.ready_s);
        res.ready_each_s.push_back(b.mech.ready_s);
        list[kept++] = key;
        continue;
      }
      b.mech.in_flight = true;
      if (room > 0) {
        // Restored: resident and pinned by its reader again, in a slot of its own.
        --room;
        room_ready_s = std::max(room_ready_s, host_.make_room(1, issue_s));
        b.hbm_slot = slots_.take();
        b.mech.in_hbm = true;
        b.streamed_by = 0;
        slots_.pin();
        host_.note_held(b);
        run.spill_cursor = 0;    // it may be spilled again, oldest first
        ++run.chain_version;     // it left the chain
        restored.push_back(&b);  // posted below, once its slot is free
        continue;
      }
      if (staging_.empty()) SC_REPORT_FATAL("kvtier/host", "streamed blocks but no staging slots");
      host_.note_streamed_read(b);
      cmdset::Descriptor d = host_.descriptor(Opcode::PROMOTE, b);
      d.hbm_addr = geometry_.kv.hbm_kv_base +
                   staging_[staging_next_++ % staging_.size()] * geometry_.kv.block_bytes;
      const ChainRef chain{streamed_chain(id), run.chain_version};
      if (sent.size() < lead) post(d, issue_s, chain);
      else rest.push_back(d), rest_chain.push_back(chain);
      sent.push_back(&b);
      list[kept++] = key;
    }
    list.resize(kept);
  }
  // Staged promotions go at issue_s. A restored one goes into a slot that may first have to be
  // emptied (make_room's demotions), so it is posted once that slot is free.
  if (sent.size() > rest.size()) host_.flush(issue_s);
  // The staged promotions beyond the lead wait for the slots the group before releases.
  for (size_t k = 0; k < rest.size(); ++k) post(rest[k], rest_issue_s, rest_chain[k]);
  if (!rest.empty()) host_.flush(rest_issue_s);
  for (HostBlock* b : restored) post(host_.descriptor(Opcode::PROMOTE, *b), room_ready_s, {});
  if (!restored.empty()) host_.flush(room_ready_s);
  stats_.streamed_promotions += sent.size() + restored.size();
  stats_.restored_streamed += restored.size();
  // promoted() marked each usable: a staged copy until its group has computed, a restored block
  // for as long as its reader holds it.
  for (const auto* list : {&sent, &restored})
    for (HostBlock* b : *list) {
      res.ready_s = std::max(res.ready_s, b->mech.ready_s);
      res.ready_each_s.push_back(b->mech.ready_s);
    }
  return sent;
}

StreamResult StreamedResidencyBooks::stream(const std::vector<uint64_t>& ids, uint32_t g,
                                            double issue_s, double deadline_s, uint64_t lead,
                                            double rest_issue_s) {
  StreamResult res;
  post_staged_discards(issue_s);
  promote(ids, g, issue_s, deadline_s, res, lead, std::max(issue_s, rest_issue_s), UINT64_MAX);
  // Group 0's early copies this step did not read: their reader stopped or left the batch.
  if (g == 0) drop_streamed_ahead(issue_s);
  return res;
}

void StreamedResidencyBooks::stream_ahead(const std::vector<uint64_t>& ids, double issue_s,
                                          double deadline_s, uint64_t limit) {
  post_staged_discards(issue_s);
  drop_streamed_ahead(issue_s);
  StreamResult res;
  for (HostBlock* b : promote(ids, 0, issue_s, deadline_s, res, UINT64_MAX, issue_s, limit)) {
    b->streamed_ahead = true;
    streamed_ahead_.push_back(b->id.key);
  }
  stats_.streamed_ahead += streamed_ahead_.size();
}

void StreamedResidencyBooks::drop_streamed_ahead(double now_s) {
  bool dropped = false;
  for (uint64_t key : streamed_ahead_) {
    HostBlock* b = blocks_.find(key);
    if (!b || !b->streamed_ahead) continue;  // read, or forgotten since
    b->streamed_ahead = false;
    // A copy made resident since (another reader computed it) is that reader's now.
    if (b->mech.in_hbm) continue;
    host_.enqueue(host_.descriptor(Opcode::DISCARD, *b), Opcode::DISCARD, key, now_s);
    ++stats_.streamed_ahead_unused;
    dropped = true;
  }
  streamed_ahead_.clear();
  if (dropped) host_.flush(now_s);
}

void StreamedResidencyBooks::stream_done(const std::vector<uint64_t>& ids, uint32_t g,
                                         double done_s) {
  // The staging copies are dropped when group g has computed; the tier copies stay valid
  // (write-once). Their DISCARDs are posted later, with the next group's promotions: posted now,
  // at a later time than those promotions, they would hold the host CPU's busy-until timeline and
  // push the earlier promotions behind them (loosely-timed calls are served in call order).
  for (uint64_t id : ids) {
    auto it = running_.find(id);
    if (it == running_.end() || it->second.streamed.empty()) continue;
    const ChainRef chain{streamed_chain(id), it->second.chain_version};
    for (uint64_t key : it->second.streamed[g]) staged_discards_.push_back({key, done_s, chain});
  }
}

void StreamedResidencyBooks::post_staged_discards(double upto_s) {
  size_t n = 0;
  double last = 0.0;
  for (; n < staged_discards_.size() && staged_discards_[n].done_s <= upto_s + 1e-12; ++n) {
    const StagedDiscard& s = staged_discards_[n];
    if (const HostBlock* b = blocks_.find(s.key))
      host_.enqueue(host_.descriptor(Opcode::DISCARD, *b), Opcode::DISCARD, s.key, s.done_s,
                    s.chain);
    last = std::max(last, s.done_s);
  }
  if (!n) return;
  staged_discards_.erase(staged_discards_.begin(),
                         staged_discards_.begin() + static_cast<std::ptrdiff_t>(n));
  host_.flush(upto_s == std::numeric_limits<double>::infinity() ? last : upto_s);
}

void StreamedResidencyBooks::stream_finish() {
  post_staged_discards(std::numeric_limits<double>::infinity());
}

void StreamedResidencyBooks::unstream(HostBlock& b) {
  RunningRequest& other = running_.at(b.streamed_by - 1);
  auto& list = other.streamed[b.id.layer_group];
  list.erase(std::find(list.begin(), list.end(), b.id.key));
  ++other.chain_version;
  b.streamed_by = 0;
  slots_.pin();
  host_.note_held(b);
  ++stats_.unstreamed;
}

}  // namespace kvtier
