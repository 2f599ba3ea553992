#include "tlm/host/control_plane.h"

#include <algorithm>
#include <cmath>
#include <string>

#include "tlm/ctrl/address_map.h"
#include "tlm/link/transact.h"

namespace kvtier {

using cmdset::Opcode;
using cmdset::Status;

namespace {
kv::Format format_of(const std::string& name) {
  if (name == "fp8") return kv::Format::Fp8;
  if (name == "int4") return kv::Format::Int4;
  return kv::Format::Bf16;
}
// Bits per element, for "narrower than".
int width(kv::Format f) { return f == kv::Format::Int4 ? 4 : f == kv::Format::Fp8 ? 8 : 16; }
cmdset::Format wire_format(kv::Format f) {
  return f == kv::Format::Int4 ? cmdset::Format::INT4 : f == kv::Format::Fp8 ? cmdset::Format::FP8 : cmdset::Format::BF16;
}
constexpr uint16_t kAdmissionPriority = 0xFFFF;  // promotions a starting step waits for
}  // namespace

HostControlPlane::HostControlPlane(sc_core::sc_module_name name, const HostConfig& config, uint32_t ring_entries,
                                   uint64_t block_bytes, uint64_t budget_blocks, uint32_t layer_groups,
                                   uint64_t hbm_kv_base, uint64_t tier_blocks, double cycle_s)
    : sc_core::sc_module(name),
      config_(config),
      ring_entries_(ring_entries),
      block_bytes_(block_bytes),
      budget_(budget_blocks),
      groups_(layer_groups),
      hbm_kv_base_(hbm_kv_base),
      cycle_s_(cycle_s),
      policy_store_(config.persistent_policy) {
  policy_ = make_replacement_policy(policy_params(config), policy_store_);
  completion_in.register_b_transport(this, &HostControlPlane::completion_write);
  tier_format_ = format_of(config.tier_format);
  recompress_ = config.recompress_format != "none";
  recompress_format_ = format_of(config.recompress_format);
  host_dma_ = config.dma == "host";
  demand_.window_s = config.sustain_window_s;
  // Free lists are stacks handing out the lowest slot first.
  free_hbm_slots_.reserve(budget_);
  for (uint64_t s = budget_; s-- > 0;) free_hbm_slots_.push_back(s);
  free_tier_slots_.reserve(tier_blocks);
  for (uint64_t s = tier_blocks; s-- > 0;) free_tier_slots_.push_back(s);
}

uint64_t HostControlPlane::group_key(uint64_t position_key, uint32_t group) const {
  return groups_ == 1 ? position_key : workload::decode_block_key(position_key, group);
}

uint64_t HostControlPlane::slots_needed(const workload::Request& r) const {
  const uint64_t tokens = uint64_t(r.prompt_tokens) + r.output_tokens;
  return (tokens + config_.block_tokens - 1) / config_.block_tokens * groups_;
}

bool HostControlPlane::can_admit(const workload::Request& r) const {
  // Conservative: shared prefix blocks already pinned by others are counted again. Blocks
  // prefetched for this very request are already pinned for it: admission moves those pins.
  return pinned_ + reserved_ + slots_needed(r) - prefetch_pins(r.id) <= budget_;
}

uint64_t HostControlPlane::stored_bytes(kv::Format format) const {
  const double ratio = format == kv::Format::Fp8    ? config_.fp8_bytes_ratio
                       : format == kv::Format::Int4 ? config_.int4_bytes_ratio
                                                    : 1.0;
  if (ratio == 1.0) return block_bytes_;
  return static_cast<uint64_t>(std::ceil(static_cast<double>(block_bytes_) * ratio));
}

uint64_t HostControlPlane::prefetch_pins(uint64_t request_id) const {
  auto it = prefetch_.find(request_id);
  return it == prefetch_.end() ? 0 : it->second.keys.size();
}

void HostControlPlane::end_prefetch(uint64_t request_id) {
  auto it = prefetch_.find(request_id);
  if (it == prefetch_.end()) return;
  const double now = last_integrate_s_;
  for (uint64_t key : it->second.keys) unpin(blocks_.at(key), now);
  prefetch_.erase(it);
}

void HostControlPlane::prefetch(const SchedulerIntent& intent) {
  const double now_s = intent.now_s;
  integrate(now_s);
  // Prefetches whose request did not start in time give their pins back; their blocks stay
  // resident as idle blocks until the policy evicts them.
  std::vector<uint64_t> expired;
  for (const auto& [id, p] : prefetch_)
    if (p.expires_s < now_s) expired.push_back(id);
  std::sort(expired.begin(), expired.end());  // deterministic unpin order
  for (uint64_t id : expired) {
    ++stats_.prefetch_expired;
    end_prefetch(id);
  }
  const uint32_t horizon = config_.prefetch_horizon_steps;
  if (horizon == 0) return;
  const uint32_t bt = config_.block_tokens;
  std::vector<Block*> to_promote;
  std::vector<std::pair<double, uint16_t>> due;  // per block: deadline, priority
  uint64_t new_pins = 0;
  for (const SchedulerIntent::Upcoming& u : intent.upcoming) {
    if (u.steps_ahead == 0 || u.steps_ahead > horizon) continue;
    const workload::Request& r = *u.request;
    // Each request is looked at once, when it first comes within the horizon: the cost grows
    // with requests and the transfers they cause, not with steps x blocks.
    if (running_.count(r.id) || prefetch_scanned_.count(r.id)) continue;
    // Only as many pins as the request would hold at admission anyway, and only while it fits.
    if (pinned_ + reserved_ + new_pins + slots_needed(r) > budget_) break;
    prefetch_scanned_.insert(r.id);
    const uint64_t full = r.prompt_tokens / bt;
    std::vector<Block*> mine;
    std::unordered_set<const Block*> seen;
    for (uint64_t i = 0; i < full; ++i) {
      const uint64_t pk = i < r.prefix_hashes.size() ? r.prefix_hashes[i] : workload::decode_block_key(r.session, i);
      for (uint32_t g = 0; g < groups_; ++g) {
        auto it = blocks_.find(group_key(pk, g));
        if (it == blocks_.end()) continue;
        Block& b = it->second;
        if (b.mech.in_hbm || !b.mech.tier_valid || b.mech.in_flight) continue;
        if (seen.insert(&b).second) mine.push_back(&b);
      }
    }
    if (mine.empty()) continue;
    Prefetch& p = prefetch_[r.id];
    p.expires_s = u.expected_start_s + static_cast<double>(horizon) * intent.step_s;
    // The nearer the start, the higher the priority; deadline: the start of the layer that reads it.
    const uint16_t prio = static_cast<uint16_t>(std::max<int64_t>(1, int64_t(kAdmissionPriority) - 1 - u.steps_ahead));
    for (Block* b : mine) {
      pin(*b);
      p.keys.push_back(b->id.key);
      to_promote.push_back(b);
      due.emplace_back(u.expected_start_s + intent.step_s * b->id.layer_group / groups_, prio);
    }
    new_pins += mine.size();
  }
  if (to_promote.empty()) return;
  const double room_ready_s = make_room(to_promote.size(), now_s);
  for (size_t i = 0; i < to_promote.size(); ++i) {
    Block* b = to_promote[i];
    b->hbm_slot = take_hbm_slot();
    b->mech.in_hbm = true;
    b->mech.in_flight = true;
    b->prefetched_unused = true;
    ++stats_.prefetched;
    cmdset::Descriptor d = descriptor(Opcode::PROMOTE, *b);
    d.deadline_ns = static_cast<uint64_t>(std::llround(due[i].first * 1e9));
    d.prio = due[i].second;
    enqueue(d, Opcode::PROMOTE, b->id.key, now_s);
  }
  flush(room_ready_s);
}

void HostControlPlane::integrate(double now_s) {
  if (now_s > last_integrate_s_) {
    stats_.hbm_block_seconds += static_cast<double>(resident_) * (now_s - last_integrate_s_);
    last_integrate_s_ = now_s;
  }
}

void HostControlPlane::pin(Block& b) {
  if (b.mech.pins++ == 0) {
    ++pinned_;
    policy_->on_pinned(b.id.key);
  }
}

void HostControlPlane::unpin(Block& b, double now_s) {
  if (--b.mech.pins == 0) {
    --pinned_;
    if (b.mech.in_hbm) policy_->on_idle(b.id.key, now_s);
  }
}

uint64_t HostControlPlane::take_hbm_slot() {
  if (free_hbm_slots_.empty())
    SC_REPORT_FATAL("kvtier/host", "HBM KV budget exhausted with every block pinned (admission invariant broken)");
  const uint64_t s = free_hbm_slots_.back();
  free_hbm_slots_.pop_back();
  ++resident_;
  stats_.peak_resident_blocks = std::max(stats_.peak_resident_blocks, resident_);
  return s;
}

AdmitResult HostControlPlane::admit(const workload::Request& r, double now_s) {
  integrate(now_s);
  Running& run = running_[r.id];
  AdmitResult res;
  res.ready_s.assign(groups_, now_s);
  const uint32_t bt = config_.block_tokens;
  const uint64_t full = r.prompt_tokens / bt;
  std::vector<Block*> to_promote, to_compute;
  uint64_t cached_positions = 0;

  // Classify and pin first, so that making room never evicts a block this request reads.
  for (uint64_t i = 0; i < full; ++i) {
    const uint64_t pk = i < r.prefix_hashes.size() ? r.prefix_hashes[i] : workload::decode_block_key(r.session, i);
    bool position_cached = true;
    for (uint32_t g = 0; g < groups_; ++g) {
      const uint64_t key = group_key(pk, g);
      auto [it, inserted] = blocks_.try_emplace(key);
      Block& b = it->second;
      if (inserted) {
        b.id = kv::BlockIdentity{key, r.session, static_cast<uint32_t>(i), static_cast<uint16_t>(g), pk};
        b.owner_tenant = static_cast<uint16_t>(r.tenant);
        ++stats_.unique_blocks;
      } else if (b.id.session != r.session) {
        b.multi_session = true;
      }
      kv::BlockPolicy& pol = policy_store_.touch(key);
      pol.tenant = r.tenant;
      pol.last_use_s = now_s;
      ++pol.uses;
      pol.continues = !r.last_turn;
      policy_->on_reference(key, now_s, pol);
      references_.push_back({key, b.mech.in_hbm || b.mech.tier_valid ? kv::ReferenceKind::Read : kv::ReferenceKind::Produce, true});
      ++stats_.references;
      if (b.mech.in_hbm) {
        ++res.hbm_hits;
        res.ready_s[g] = std::max(res.ready_s[g], b.mech.ready_s);
        if (b.prefetched_unused) {
          // A prefetched block read for the first time: its transfer is judged by this step.
          b.prefetched_unused = false;
          ++stats_.prefetch_used;
          res.transfers.emplace_back(g, b.mech.ready_s);
        }
      } else if (b.mech.tier_valid) {
        ++res.tier_hits;
        to_promote.push_back(&b);
      } else {
        ++res.misses;
        position_cached = false;
        to_compute.push_back(&b);
      }
      pin(b);
      run.keys.push_back(key);
    }
    cached_positions += position_cached;
  }
  // The request's own pins now hold what its prefetch pinned.
  end_prefetch(r.id);
  prefetch_scanned_.erase(r.id);
  stats_.hbm_hits += res.hbm_hits;
  stats_.tier_hits += res.tier_hits;
  stats_.misses += res.misses;
  res.cached_tokens = static_cast<uint32_t>(cached_positions * bt);

  run.continues = !r.last_turn;
  const uint32_t private_slots = r.prompt_tokens % bt ? groups_ : 0;
  run.reserved = slots_needed(r) - full * groups_ - private_slots;
  reserved_ += run.reserved;
  pinned_ += private_slots;

  const double room_ready_s = make_room(to_promote.size() + to_compute.size() + private_slots, now_s);
  for (uint32_t g = 0; g < private_slots; ++g) run.private_ids.push_back(take_hbm_slot());
  for (Block* b : to_compute) {
    if (b->mech.in_hbm) continue;  // named twice in this prompt
    // Prefill writes these in this step; they are never a reason to stall it.
    b->hbm_slot = take_hbm_slot();
    b->mech.in_hbm = true;
    b->mech.ready_s = now_s;
  }
  for (Block* b : to_promote) {
    if (b->mech.in_hbm) continue;
    b->hbm_slot = take_hbm_slot();
    b->mech.in_hbm = true;
    b->mech.in_flight = true;
    cmdset::Descriptor d = descriptor(Opcode::PROMOTE, *b);
    if (config_.prefetch_horizon_steps) {
      // Deadline: the start of the layer group that reads the block in the step starting now.
      d.deadline_ns = static_cast<uint64_t>(std::llround((now_s + step_estimate_s_ * b->id.layer_group / groups_) * 1e9));
      d.prio = kAdmissionPriority;
    }
    enqueue(d, Opcode::PROMOTE, b->id.key, now_s);
  }
  flush(room_ready_s);
  std::unordered_set<const Block*> judged;  // a block named twice in the prompt is one transfer
  for (Block* b : to_promote) {
    res.ready_s[b->id.layer_group] = std::max(res.ready_s[b->id.layer_group], b->mech.ready_s);
    if (judged.insert(b).second) res.transfers.emplace_back(b->id.layer_group, b->mech.ready_s);
  }
  return res;
}

void HostControlPlane::on_token(uint64_t id, uint64_t session, uint32_t tenant, uint64_t context, double now_s) {
  const uint32_t bt = config_.block_tokens;
  Running& run = running_.at(id);
  if (run.private_ids.empty()) {
    // The token starts a new block: its slots come out of the request's reservation.
    integrate(now_s);
    run.reserved -= groups_;
    reserved_ -= groups_;
    pinned_ += groups_;
    make_room(groups_, now_s);
    for (uint32_t g = 0; g < groups_; ++g) run.private_ids.push_back(take_hbm_slot());
  }
  if (context % bt != 0) return;
  // The block is full: it becomes a keyed block a later turn can reuse.
  integrate(now_s);
  const uint64_t pk = workload::decode_block_key(session, context / bt - 1);
  for (uint32_t g = 0; g < groups_; ++g) {
    const uint64_t key = group_key(pk, g);
    const uint64_t slot = run.private_ids[g];
    auto [it, inserted] = blocks_.try_emplace(key);
    Block& b = it->second;
    if (inserted) {
      b.id = kv::BlockIdentity{key, session, static_cast<uint32_t>(context / bt - 1), static_cast<uint16_t>(g), pk};
      b.owner_tenant = static_cast<uint16_t>(tenant);
      ++stats_.unique_blocks;
    }
    if (b.mech.in_hbm) {
      // Already resident under this identity: keep that copy, give the slot back.
      free_hbm_slots_.push_back(slot);
      --resident_;
    } else {
      b.hbm_slot = slot;
      b.mech.in_hbm = true;
      b.mech.ready_s = now_s;
    }
    --pinned_;  // the private slot's pin moves to the keyed block
    pin(b);
    run.keys.push_back(key);
    kv::BlockPolicy& pol = policy_store_.touch(key);
    pol.tenant = tenant;
    pol.last_use_s = now_s;
    pol.continues = run.continues;
    policy_->on_reference(key, now_s, pol);
    references_.push_back({key, kv::ReferenceKind::Produce, false});
  }
  run.private_ids.clear();
}

void HostControlPlane::release(uint64_t id, const workload::Request& r, double now_s) {
  integrate(now_s);
  auto node = running_.find(id);
  Running& run = node->second;
  for (uint64_t key : run.keys) unpin(blocks_.at(key), now_s);
  for (uint64_t slot : run.private_ids) free_hbm_slots_.push_back(slot);
  resident_ -= run.private_ids.size();
  pinned_ -= run.private_ids.size();
  reserved_ -= run.reserved;
  if (r.last_turn && config_.free_dead_blocks) {
    // The conversation is over: its own blocks are dead. Shared prefixes stay.
    for (uint64_t key : run.keys) {
      auto it = blocks_.find(key);
      if (it == blocks_.end()) continue;  // listed twice
      Block& b = it->second;
      if (b.multi_session || b.id.session != r.session || b.mech.pins != 0 || b.mech.in_flight) continue;
      if (b.mech.in_hbm) {
        policy_->on_removed(key);
        free_hbm_slots_.push_back(b.hbm_slot);
        --resident_;
      }
      if (b.mech.tier_valid) {
        enqueue(descriptor(Opcode::FREE, b), Opcode::FREE, key, now_s);
        free_tier_slots_.push_back(b.mech.tier_slot);
      }
      ++stats_.frees;
      ledger_.retire(key);
      policy_store_.on_free(key);
      blocks_.erase(it);
    }
  }
  running_.erase(node);
  if (!queue_.empty()) flush(now_s);
}

bool HostControlPlane::reclaim_tier_slot(double now_s) {
  // Queued demotions finish (and stop being in flight) once posted.
  if (!queue_.empty()) flush(now_s);
  while (!tier_lru_.empty()) {
    const auto [key, epoch] = tier_lru_.front();
    tier_lru_.pop_front();
    auto it = blocks_.find(key);
    if (it == blocks_.end()) continue;
    Block& v = it->second;
    if (v.tier_epoch != epoch || v.mech.in_hbm || !v.mech.tier_valid || v.mech.in_flight || v.mech.pins) continue;
    enqueue(descriptor(Opcode::FREE, v), Opcode::FREE, key, now_s);
    free_tier_slots_.push_back(v.mech.tier_slot);
    ++stats_.tier_evictions;
    ledger_.retire(key);
    policy_store_.on_free(key);
    blocks_.erase(it);
    return true;
  }
  return false;
}

double HostControlPlane::make_room(uint64_t slots, double now_s) {
  if (free_hbm_slots_.size() >= slots) return now_s;
  bool demoted = false;
  last_demotion_done_s_ = now_s;
  while (free_hbm_slots_.size() < slots) {
    const auto victim = policy_->victim();
    if (!victim) SC_REPORT_FATAL("kvtier/host", "no evictable block although the admission check passed");
    Block& b = blocks_.at(*victim);
    policy_->on_removed(b.id.key);
    policy_store_.on_evict(b.id.key);
    b.mech.in_hbm = false;
    b.prefetched_unused = false;  // fetched and never used
    free_hbm_slots_.push_back(b.hbm_slot);
    --resident_;
    // The tier is finite too: when it is full, the copy of the block that left HBM longest
    // ago is freed to make room (never a pinned or in-flight one).
    if (!b.mech.tier_valid && free_tier_slots_.empty()) reclaim_tier_slot(now_s);
    if (b.mech.tier_valid || !free_tier_slots_.empty()) tier_lru_.emplace_back(b.id.key, b.tier_epoch = ++tier_epochs_);
    if (b.mech.tier_valid) {
      // Write-once: the tier copy is still valid, so eviction moves nothing (spec §M.1).
      enqueue(descriptor(Opcode::DISCARD, b), Opcode::DISCARD, b.id.key, now_s);
      ++stats_.discards;
      if (recompress_ && width(b.mech.format) > width(recompress_format_)) {
        // The RECOMPRESS policy: the block went cold again; re-quantise its tier copy in place.
        // This rewrites payload and breaks write-once for exactly this block (spec §M.1).
        b.mech.format = recompress_format_;
        enqueue(descriptor(Opcode::RECOMPRESS, b), Opcode::RECOMPRESS, b.id.key, now_s);
      }
    } else if (!free_tier_slots_.empty()) {
      b.mech.tier_slot = free_tier_slots_.back();
      free_tier_slots_.pop_back();
      b.mech.tier_valid = true;  // corrected if the device answers NO_SPACE
      b.mech.in_flight = true;
      b.mech.format = tier_format_;  // the control plane's choice of representation
      demand_.add(demand_.to_tier, now_s, static_cast<double>(stored_bytes(b.mech.format)));
      enqueue(descriptor(Opcode::DEMOTE, b), Opcode::DEMOTE, b.id.key, now_s);
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
  d.hbm_addr = hbm_kv_base_ + b.hbm_slot * block_bytes_;
  d.tier_addr = b.mech.tier_slot * block_bytes_;
  // The tier copy as stored (the device moves the entry's own length on PROMOTE).
  d.length = static_cast<uint32_t>(stored_bytes(b.mech.format));
  d.format = wire_format(b.mech.format);
  return d;
}

void HostControlPlane::enqueue(const cmdset::Descriptor& d, Opcode op, uint64_t key, double now_s) {
  cmdset::Descriptor tagged = d;
  if (op == Opcode::PROMOTE) demand_.add(demand_.to_hbm, now_s, static_cast<double>(d.length));
  if (host_dma_) {
    queue_.push_back({tagged, Pending{key, op, now_s, now_s}});
    return;
  }
  tagged.tag = next_tag_++;
  queue_.push_back({tagged, Pending{key, op, now_s, now_s}});
}

void HostControlPlane::flush_host_copies(double at_s) {
  // The host drives every copy itself: one driver call per copy on the CPU, the copy on the
  // direction's copy engine (time from the host copy model), and a completion round trip
  // before the host can rely on it. Metadata-only commands are host bookkeeping.
  size_t copies = 0;
  for (const auto& q : queue_) copies += q.first.opcode == Opcode::PROMOTE || q.first.opcode == Opcode::DEMOTE;
  const bool batched = copies > 1;
  const sc_core::sc_time issue_cpu = sc_core::sc_time(config_.copy_issue_cpu_ns, sc_core::SC_NS);
  sc_core::sc_time post = seconds(at_s);
  for (auto& [d, pending] : queue_) {
    if (d.opcode != Opcode::PROMOTE && d.opcode != Opcode::DEMOTE) continue;
    if (!host_copy_time_) SC_REPORT_FATAL("kvtier/host", "host.dma = host needs the host copy model (none configured)");
    post = cpu_.reserve(post, issue_cpu) + issue_cpu;
    stats_.cpu_copy_issue_s += issue_cpu.to_seconds();
    stats_.cpu_completion_s += config_.completion_cpu_ns * 1e-9;
    ++stats_.host_copies;
    pending.issued_s = post.to_seconds();
    const uint64_t bytes = d.length;
    const sc_core::sc_time duration = seconds(host_copy_time_(bytes, batched));
    Timeline& engine = d.opcode == Opcode::PROMOTE ? copy_to_hbm_ : copy_to_tier_;
    const sc_core::sc_time start = engine.reserve(post, duration);
    const double done = (start + duration).to_seconds();
    const double known = done + config_.copy_completion_rtt_us * 1e-6;
    Block& b = blocks_.at(pending.key);
    if (d.opcode == Opcode::PROMOTE) {
      stats_.promotion_queue_s += start.to_seconds() - pending.issued_s;
      stats_.promotion_transfer_s += done - start.to_seconds();
      promotion_done(b, pending, known);
    } else {
      demotion_done(b, known);
    }
  }
  stats_.host_cpu_kv_s = stats_.cpu_descriptor_s + stats_.cpu_doorbell_s + stats_.cpu_completion_s + stats_.cpu_copy_issue_s;
  queue_.clear();
}

void HostControlPlane::promotion_done(Block& b, const Pending& p, double ready_s) {
  b.mech.ready_s = ready_s;
  b.mech.in_flight = false;
  ++stats_.promotions;
  stats_.promoted_bytes += stored_bytes(b.mech.format);
  ledger_.promotion(p.key);
  stats_.promotion_latency_max_s = std::max(stats_.promotion_latency_max_s, ready_s - p.issued_s);
  stats_.promotion_latency_s.push_back(ready_s - p.requested_s);
}

void HostControlPlane::demotion_done(Block& b, double done_s) {
  b.mech.in_flight = false;
  ++stats_.demotions;
  stats_.demoted_bytes += stored_bytes(b.mech.format);
  ledger_.demotion(b.id.key);
  last_demotion_done_s_ = std::max(last_demotion_done_s_, done_s);
}

void HostControlPlane::flush(double at_s) {
  if (queue_.empty()) return;
  if (host_dma_) return flush_host_copies(at_s);
  const sc_core::sc_time cpu_per_descriptor = sc_core::sc_time(config_.descriptor_cpu_ns, sc_core::SC_NS);
  sc_core::sc_time post = seconds(at_s);
  uint32_t since_doorbell = 0;
  auto ring_doorbell = [&]() {
    uint8_t bytes[cmdset::kDoorbellBytes];
    cmdset::encode(cmdset::Doorbell{ring_tail_}, bytes);
    stats_.cpu_doorbell_s += config_.doorbell_cpu_ns * 1e-9;
    transact(mmio_out, tlm::TLM_WRITE_COMMAND, addr::kDoorbell, bytes, cmdset::kDoorbellBytes, TxnClass::Doorbell,
             post);
    ++stats_.doorbells;
    since_doorbell = 0;
  };
  for (auto& [d, pending] : queue_) {
    // The host CPU builds descriptors one after another (claim C3 counts this time).
    post = cpu_.reserve(post, cpu_per_descriptor) + cpu_per_descriptor;
    stats_.cpu_descriptor_s += cpu_per_descriptor.to_seconds();
    pending.issued_s = post.to_seconds();
    in_flight_[d.tag] = pending;
    uint8_t bytes[cmdset::kDescriptorBytes];
    cmdset::encode(d, bytes);
    transact(mmio_out, tlm::TLM_WRITE_COMMAND, addr::kRingBase + uint64_t(ring_tail_) * cmdset::kDescriptorBytes, bytes,
             cmdset::kDescriptorBytes, TxnClass::DescriptorWrite, post);
    ring_tail_ = (ring_tail_ + 1) % ring_entries_;
    ++stats_.descriptors;
    // Leave one ring slot empty so a full ring is distinguishable from an empty one.
    if (++since_doorbell == ring_entries_ - 1) ring_doorbell();
  }
  if (since_doorbell) ring_doorbell();
  queue_.clear();
  stats_.host_cpu_kv_s = stats_.cpu_descriptor_s + stats_.cpu_doorbell_s + stats_.cpu_completion_s + stats_.cpu_copy_issue_s;
}

void HostControlPlane::completion_write(tlm::tlm_generic_payload& trans, sc_core::sc_time& delay) {
  if (!trans.is_write() || trans.get_data_length() != cmdset::kCompletionBytes) {
    trans.set_response_status(tlm::TLM_COMMAND_ERROR_RESPONSE);
    return;
  }
  on_completion(cmdset::decode_completion(trans.get_data_ptr()), (sc_core::sc_time_stamp() + delay).to_seconds());
  trans.set_response_status(tlm::TLM_OK_RESPONSE);
}

void HostControlPlane::on_completion(const cmdset::Completion& c, double arrival_s) {
  auto it = in_flight_.find(c.tag);
  if (it == in_flight_.end()) {
    SC_REPORT_ERROR("kvtier/host", ("completion for unknown tag " + std::to_string(c.tag)).c_str());
    return;
  }
  const Pending p = it->second;
  in_flight_.erase(it);
  stats_.cpu_completion_s += config_.completion_cpu_ns * 1e-9;
  auto fail = [&]() {
    SC_REPORT_ERROR("kvtier/host", (std::string(cmdset::to_string(p.op)) + " of block " + std::to_string(p.key) +
                                    " completed " + cmdset::to_string(c.status) +
                                    ": host and device disagree about the index")
                                       .c_str());
  };
  switch (p.op) {
    case Opcode::PROMOTE: {
      if (c.status != Status::OK) return fail();
      promotion_done(blocks_.at(p.key), p, arrival_s);
      // Claim C2: where a promotion's time goes.
      const double accepted = c.ts_accepted * cycle_s_, looked_up = c.ts_lookup_done * cycle_s_,
                   moved = c.ts_transfer_done * cycle_s_;
      stats_.promotion_queue_s += accepted - p.issued_s;
      stats_.promotion_lookup_s += looked_up - accepted;
      stats_.promotion_transfer_s += moved - looked_up;
      break;
    }
    case Opcode::DEMOTE: {
      Block& b = blocks_.at(p.key);
      b.mech.in_flight = false;
      if (c.status == Status::NO_SPACE) {
        // The index set is full: no tier copy was made and the block is gone.
        b.mech.tier_valid = false;
        free_tier_slots_.push_back(b.mech.tier_slot);
        ++stats_.dropped_index_full;
        break;
      }
      if (c.status != Status::OK) return fail();
      demotion_done(b, arrival_s);
      break;
    }
    case Opcode::RECOMPRESS: {
      if (c.status != Status::OK) return fail();
      ++stats_.recompressions;
      stats_.recompressed_bytes += stored_bytes(blocks_.at(p.key).mech.format);
      ledger_.rewrite(p.key);
      break;
    }
    default:
      if (c.status != Status::OK) return fail();
  }
}

}  // namespace kvtier
