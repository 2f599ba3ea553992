#include "tlm/host/control_plane.h"

#include <algorithm>
#include <string>

#include "tlm/ctrl/address_map.h"
#include "tlm/link/transact.h"

namespace kvtier {

using cmdset::Opcode;
using cmdset::Status;

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
      policy_(make_replacement_policy(config.policy)),
      policy_store_(false) {
  completion_in.register_b_transport(this, &HostControlPlane::completion_write);
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
  // Conservative: shared prefix blocks already pinned by others are counted again.
  return pinned_ + reserved_ + slots_needed(r) <= budget_;
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
      ++stats_.references;
      if (b.mech.in_hbm) {
        ++res.hbm_hits;
        res.ready_s[g] = std::max(res.ready_s[g], b.mech.ready_s);
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
  stats_.hbm_hits += res.hbm_hits;
  stats_.tier_hits += res.tier_hits;
  stats_.misses += res.misses;
  res.cached_tokens = static_cast<uint32_t>(cached_positions * bt);

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
    enqueue(descriptor(Opcode::PROMOTE, *b), Opcode::PROMOTE, b->id.key, now_s);
  }
  flush(room_ready_s);
  for (Block* b : to_promote) res.ready_s[b->id.layer_group] = std::max(res.ready_s[b->id.layer_group], b->mech.ready_s);
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

double HostControlPlane::make_room(uint64_t slots, double now_s) {
  if (free_hbm_slots_.size() >= slots) return now_s;
  bool demoted = false;
  while (free_hbm_slots_.size() < slots) {
    const auto victim = policy_->victim();
    if (!victim) SC_REPORT_FATAL("kvtier/host", "no evictable block although the admission check passed");
    Block& b = blocks_.at(*victim);
    policy_->on_removed(b.id.key);
    policy_store_.on_evict(b.id.key);
    b.mech.in_hbm = false;
    free_hbm_slots_.push_back(b.hbm_slot);
    --resident_;
    if (b.mech.tier_valid) {
      // Write-once: the tier copy is still valid, so eviction moves nothing (spec §M.1).
      enqueue(descriptor(Opcode::DISCARD, b), Opcode::DISCARD, b.id.key, now_s);
      ++stats_.discards;
    } else if (!free_tier_slots_.empty()) {
      b.mech.tier_slot = free_tier_slots_.back();
      free_tier_slots_.pop_back();
      b.mech.tier_valid = true;  // corrected if the device answers NO_SPACE
      b.mech.in_flight = true;
      enqueue(descriptor(Opcode::DEMOTE, b), Opcode::DEMOTE, b.id.key, now_s);
      demoted = true;
    } else {
      ++stats_.dropped_no_tier_space;  // lost: the next reference recomputes it
    }
  }
  last_demotion_done_s_ = now_s;
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
  d.length = static_cast<uint32_t>(block_bytes_);
  d.format = cmdset::Format::BF16;
  return d;
}

void HostControlPlane::enqueue(const cmdset::Descriptor& d, Opcode op, uint64_t key, double now_s) {
  cmdset::Descriptor tagged = d;
  tagged.tag = next_tag_++;
  queue_.push_back({tagged, Pending{key, op, now_s}});
}

void HostControlPlane::flush(double at_s) {
  if (queue_.empty()) return;
  const sc_core::sc_time cpu_per_descriptor = sc_core::sc_time(config_.descriptor_cpu_ns, sc_core::SC_NS);
  sc_core::sc_time post = seconds(at_s);
  uint32_t since_doorbell = 0;
  auto ring_doorbell = [&]() {
    uint8_t bytes[cmdset::kDoorbellBytes];
    cmdset::encode(cmdset::Doorbell{ring_tail_}, bytes);
    transact(mmio_out, tlm::TLM_WRITE_COMMAND, addr::kDoorbell, bytes, cmdset::kDoorbellBytes, TxnClass::Doorbell,
             post);
    ++stats_.doorbells;
    since_doorbell = 0;
  };
  for (auto& [d, pending] : queue_) {
    // The host CPU builds descriptors one after another (claim C3 counts this time).
    post = cpu_.reserve(post, cpu_per_descriptor) + cpu_per_descriptor;
    stats_.host_cpu_kv_s += cpu_per_descriptor.to_seconds();
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
  auto fail = [&]() {
    SC_REPORT_ERROR("kvtier/host", (std::string(cmdset::to_string(p.op)) + " of block " + std::to_string(p.key) +
                                    " completed " + cmdset::to_string(c.status) +
                                    ": host and device disagree about the index")
                                       .c_str());
  };
  switch (p.op) {
    case Opcode::PROMOTE: {
      if (c.status != Status::OK) return fail();
      Block& b = blocks_.at(p.key);
      b.mech.ready_s = arrival_s;
      b.mech.in_flight = false;
      ++stats_.promotions;
      ledger_.promotion(p.key);
      // Claim C2: where a promotion's time goes.
      const double accepted = c.ts_accepted * cycle_s_, looked_up = c.ts_lookup_done * cycle_s_,
                   moved = c.ts_transfer_done * cycle_s_;
      stats_.promotion_queue_s += accepted - p.issued_s;
      stats_.promotion_lookup_s += looked_up - accepted;
      stats_.promotion_transfer_s += moved - looked_up;
      stats_.promotion_latency_max_s = std::max(stats_.promotion_latency_max_s, arrival_s - p.issued_s);
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
      ++stats_.demotions;
      ledger_.demotion(p.key);
      last_demotion_done_s_ = std::max(last_demotion_done_s_, arrival_s);
      break;
    }
    default:
      if (c.status != Status::OK) return fail();
  }
}

}  // namespace kvtier
