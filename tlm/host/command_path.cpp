#include "tlm/host/command_path.h"

#include <algorithm>
#include <string>

#include "tlm/ctrl/address_map.h"
#include "tlm/host/control_plane.h"
#include "tlm/host/host_blocks.h"
#include "tlm/link/transact.h"

namespace kvtier {

using cmdset::Opcode;
using cmdset::Status;

DescriptorRing::DescriptorRing(tlm::tlm_initiator_socket<>& mmio, const HostConfig& config,
                               uint32_t ring_entries, double cycle_s, Timeline& cpu,
                               CommandStats& stats, PolicySyncStats& policy, HostQueues& queues,
                               CommandOutcomes& outcomes)
    : mmio_(mmio),
      config_(config),
      ring_entries_(ring_entries),
      cycle_s_(cycle_s),
      cpu_(cpu),
      stats_(stats),
      policy_(policy),
      queues_(queues),
      outcomes_(outcomes) {}

void DescriptorRing::flush(double at_s) {
  if (queue_.empty()) return;
  // The batch is taken out first: completions arriving during the doorbell may make the control
  // plane queue new commands for a later flush.
  std::vector<Command> batch = take_batch();
  if (config_.decision != HostDecision::Device ||
      std::none_of(batch.begin(), batch.end(), [](const Command& c) { return c.chain != 0; })) {
    post(batch, at_s);
    return recycle(std::move(batch));
  }
  // Device-local decisions (host.decision = device). A member of a chain the device holds (in
  // the version the command names) is issued by the device itself, from now; the others go on
  // the ring. A chain the device does not hold yet, or holds in an older version, is handed over
  // by one CHAIN descriptor on the ring, and the device issues its members once it has taken
  // that descriptor. The held chains' members are issued before the ring is posted: the ring's
  // commands reach the device later (host CPU, link), and loosely-timed reservations are served
  // in call order, so posted first they would push the earlier device-issued ones behind them.
  std::vector<Command> ring, later;
  // The chains handed over in this batch, each with its CHAIN's place in `ring` (its length
  // counts the members that follow it).
  std::vector<std::pair<uint64_t, size_t>> handing;
  for (Command& c : batch) {
    if (!c.chain) {
      ring.push_back(c);
      continue;
    }
    const auto hand = std::find_if(handing.begin(), handing.end(),
                                   [&](const auto& h) { return h.first == c.chain; });
    const bool in_hand = hand != handing.end();
    if (c.op != Opcode::PROMOTE) {
      // A staging copy's discard: the device drops it itself at its group's end for a chain it
      // holds, in whatever version; the chain of a sequence that has left is no longer held, and
      // the host posts the discard.
      const auto held = chains_.find(c.chain);
      if (held == chains_.end() || in_hand) ring.push_back(c);
      else issue_on_device(c, std::max(at_s, held->second.known_s));
      continue;
    }
    if (!in_hand) {
      const auto held = chains_.find(c.chain);
      if (held != chains_.end() && held->second.version == c.chain_version) {
        issue_on_device(c, std::max(at_s, held->second.known_s));
        continue;
      }
      handing.push_back({c.chain, ring.size()});
      Command h;
      h.op = h.d.opcode = Opcode::CHAIN;
      h.key = h.d.key = c.chain;
      h.d.tenant = c.d.tenant;
      h.d.policy = c.chain_version;
      h.chain = c.chain;
      h.chain_version = c.chain_version;
      h.requested_s = c.requested_s;
      ring.push_back(h);
      ++stats_.chain_descriptors;
    }
    ++ring[(in_hand ? hand : handing.end() - 1)->second].d.length;  // the blocks it hands over
    later.push_back(c);
  }
  post(ring, at_s);
  for (Command& c : later) {
    const auto held = chains_.find(c.chain);
    if (held == chains_.end() || held->second.version != c.chain_version)
      SC_REPORT_FATAL("kvtier/host", ("the device did not take chain " + std::to_string(c.chain) +
                                      ", whose blocks it was to issue")
                                         .c_str());
    issue_on_device(c, std::max(at_s, held->second.known_s));
  }
  recycle(std::move(batch));
}

void DescriptorRing::step_clock(double at_s) {
  if (config_.decision != HostDecision::Device) return;
  // Only a streamed chain is issued by the clock (a resuming sequence's promotions go at once).
  if (std::none_of(chains_.begin(), chains_.end(),
                   [](const auto& c) { return is_streamed_chain(c.first); }))
    return;
  uint8_t bytes[8] = {};
  const uint64_t ps = seconds(at_s).value();
  for (unsigned i = 0; i < 8; ++i) bytes[i] = static_cast<uint8_t>(ps >> (8 * i));
  transact(mmio_, tlm::TLM_WRITE_COMMAND, addr::kStepClock, bytes, 8, TxnClass::Doorbell,
           seconds(at_s));
  ++stats_.step_clocks;
  stats_.cpu_doorbell_s += config_.doorbell_cpu_ns * 1e-9;
  queues_.total();
}

void DescriptorRing::issue_on_device(Command& c, double at_s) {
  cmdset::Completion cpl;
  c.issued_s = at_s;
  if (!local_issuer_ || !local_issuer_(c.d, at_s, &cpl))
    SC_REPORT_FATAL("kvtier/host",
                    "host.decision = device: this data plane cannot issue a chain's commands");
  ++stats_.device_issued;
  if (c.op != Opcode::PROMOTE) {
    if (cpl.status != Status::OK) outcomes_.failed(c, cpl.status);
    return;
  }
  ++stats_.device_issued_promotions;
  if (cpl.status != Status::OK) return outcomes_.failed(c, cpl.status);
  // No completion crosses the link: the block is usable the cycle after its last burst is in
  // HBM (the device sets the layer group's ready flag in HBM itself).
  const double accepted = cpl.ts_accepted * cycle_s_, looked_up = cpl.ts_lookup_done * cycle_s_,
               moved = cpl.ts_transfer_done * cycle_s_;
  outcomes_.promoted(c, moved + cycle_s_, looked_up);
  stats_.promotion_queue_s += accepted - c.issued_s;
  stats_.promotion_lookup_s += looked_up - accepted;
  stats_.promotion_transfer_s += moved - looked_up;
}

void DescriptorRing::post(std::vector<Command>& batch, double at_s) {
  if (batch.empty()) return;
  const sc_core::sc_time cpu_per_descriptor = nanoseconds(config_.descriptor_cpu_ns);
  sc_core::sc_time post = seconds(at_s);
  uint32_t since_doorbell = 0;
  auto ring_doorbell = [&]() {
    uint8_t bytes[cmdset::kDoorbellBytes];
    cmdset::encode(cmdset::Doorbell{ring_tail_}, bytes);
    stats_.cpu_doorbell_s += config_.doorbell_cpu_ns * 1e-9;
    transact(mmio_, tlm::TLM_WRITE_COMMAND, addr::kDoorbell, bytes, cmdset::kDoorbellBytes,
             TxnClass::Doorbell, post);
    ++stats_.doorbells;
    since_doorbell = 0;
    queues_.run_posted();
  };
  uint32_t queue = 0;  // the queue of the run being posted
  for (Command& c : batch) {
    // Per-tenant queues: a run of one tenant's commands is kicked by its own doorbell before
    // the next tenant's begins (the batch's order is kept: the device sees what it saw).
    const uint32_t q = queues_.queue_of(c.d.tenant);
    if (q != queue && since_doorbell) ring_doorbell();
    queue = q;
    c.d.tag = next_tag_++;
    // The host CPU builds descriptors one after another (claim C3 counts this time).
    post = cpu_.reserve(post, cpu_per_descriptor) + cpu_per_descriptor;
    stats_.cpu_descriptor_s += to_seconds(cpu_per_descriptor);
    c.issued_s = to_seconds(post);
    in_flight_.put(c);
    if (c.d.flags & static_cast<uint8_t>(cmdset::DescFlag::DEFERRABLE)) deferred_[c.key] = c.d.tag;
    uint8_t bytes[cmdset::kDescriptorBytes];
    cmdset::encode(c.d, bytes);
    // A policy update is a descriptor like any other, counted on the link as its own class.
    const bool update = c.op == Opcode::UPDATE_POLICY;
    const sc_core::sc_time written =
        transact(mmio_, tlm::TLM_WRITE_COMMAND,
                 addr::kRingBase + uint64_t(ring_tail_) * cmdset::kDescriptorBytes, bytes,
                 cmdset::kDescriptorBytes,
                 update ? TxnClass::UpdatePolicy : TxnClass::DescriptorWrite, post);
    if (update) policy_.policy_update_latency.add(to_seconds(written - std::max(post, sim_now())));
    ring_tail_ = (ring_tail_ + 1) % ring_entries_;
    ++stats_.descriptors;
    // Leave one ring slot empty so a full ring is distinguishable from an empty one.
    if (++since_doorbell == ring_entries_ - 1) ring_doorbell();
  }
  if (since_doorbell) ring_doorbell();
  queues_.total();
}

void InFlightCommands::put(const Command& c) {
  const uint16_t tag = c.d.tag;
  for (;;) {
    const size_t slot = tag & (slots_.size() - 1);
    if (!used_[slot] || slots_[slot].d.tag == tag || slots_.size() > UINT16_MAX) {
      slots_[slot] = c;
      used_[slot] = 1;
      return;
    }
    // The window of tags in flight outgrew the table: double it and place them again.
    std::vector<Command> slots(2 * slots_.size());
    std::vector<uint8_t> used(2 * slots_.size(), 0);
    for (size_t i = 0; i < slots_.size(); ++i)
      if (used_[i]) {
        const size_t j = slots_[i].d.tag & (slots.size() - 1);
        slots[j] = slots_[i];
        used[j] = 1;
      }
    slots_.swap(slots);
    used_.swap(used);
  }
}

bool InFlightCommands::take(uint16_t tag, Command& out) {
  const size_t slot = tag & (slots_.size() - 1);
  if (!used_[slot] || slots_[slot].d.tag != tag) return false;
  out = slots_[slot];
  used_[slot] = 0;
  return true;
}

void DescriptorRing::on_completion(const cmdset::Completion& c, double arrival_s) {
  Command p;
  if (!in_flight_.take(c.tag, p)) {
    SC_REPORT_ERROR("kvtier/host", ("completion for unknown tag " + std::to_string(c.tag)).c_str());
    return;
  }
  if (!deferred_.empty())
    if (auto d = deferred_.find(p.key); d != deferred_.end() && d->second == c.tag)
      deferred_.erase(d);
  stats_.cpu_completion_s += config_.completion_cpu_ns * 1e-9;
  queues_.total();
  switch (p.op) {
    case Opcode::PROMOTE: {
      if (c.status != Status::OK) return outcomes_.failed(p, c.status);
      // Claim C2: where a promotion's time goes.
      const double accepted = c.ts_accepted * cycle_s_, looked_up = c.ts_lookup_done * cycle_s_,
                   moved = c.ts_transfer_done * cycle_s_;
      outcomes_.promoted(p, arrival_s, looked_up);
      stats_.promotion_queue_s += accepted - p.issued_s;
      stats_.promotion_lookup_s += looked_up - accepted;
      stats_.promotion_transfer_s += moved - looked_up;
      return;
    }
    case Opcode::DEMOTE:
      if (c.status == Status::NO_SPACE) return outcomes_.demotion_refused(p);
      if (c.status != Status::OK) return outcomes_.failed(p, c.status);
      return outcomes_.demoted(p, arrival_s);
    case Opcode::RECOMPRESS:
      if (c.status != Status::OK) return outcomes_.failed(p, c.status);
      return outcomes_.recompressed(p);
    case Opcode::CHAIN:
      // The device holds the chain from the cycle it took the descriptor (its lookup).
      if (c.status != Status::OK) return outcomes_.failed(p, c.status);
      chains_[p.chain] = {p.chain_version, c.ts_lookup_done * cycle_s_};
      return;
    default:
      if (c.status != Status::OK) outcomes_.failed(p, c.status);
  }
}

void DescriptorRing::settle(uint64_t key, double at_s) {
  const auto d = deferred_.find(key);
  if (d == deferred_.end() || !waiter_.wait) return;
  waiter_.wait(d->second, at_s);
  if (deferred_.count(key))
    SC_REPORT_FATAL(
        "kvtier/host",
        ("waited for the completion of block " + std::to_string(key) + " and none came").c_str());
}

void DescriptorRing::settle_all() {
  if (deferred_.empty() || !waiter_.wait_all) return;
  waiter_.wait_all();
}

void HostCopyEngine::flush(double at_s) {
  if (queue_.empty()) return;
  // Metadata-only commands are host bookkeeping: no copy, no device.
  size_t copies = 0;
  for (const Command& c : queue_) copies += c.op == Opcode::PROMOTE || c.op == Opcode::DEMOTE;
  const bool batched = copies > 1;
  const sc_core::sc_time issue_cpu = nanoseconds(config_.copy_issue_cpu_ns);
  sc_core::sc_time post = seconds(at_s);
  std::vector<Command> batch = take_batch();
  // Per-tenant queues: each tenant's copies go on a stream of its own, and a run of one
  // tenant's copies is one batch to notice (host.completion = interrupt).
  uint32_t queue = 0;
  size_t in_run = 0;
  for (Command& c : batch) {
    if (c.op != Opcode::PROMOTE && c.op != Opcode::DEMOTE) continue;
    const uint32_t q = queues_.queue_of(c.d.tenant);
    if (q != queue && in_run) {
      queues_.run_posted();
      in_run = 0;
    }
    queue = q;
    ++in_run;
    if (!copy_time_)
      SC_REPORT_FATAL("kvtier/host", "host.dma = host needs the host copy model (none configured)");
    post = cpu_.reserve(post, issue_cpu) + issue_cpu;
    stats_.cpu_copy_issue_s += to_seconds(issue_cpu);
    stats_.cpu_completion_s += config_.completion_cpu_ns * 1e-9;
    ++stats_.host_copies;
    c.issued_s = to_seconds(post);
    const sc_core::sc_time duration = seconds(copy_time_(c.d.length, batched));
    Timeline& engine = c.op == Opcode::PROMOTE ? to_hbm_ : to_tier_;
    const sc_core::sc_time start = engine.reserve(post, duration);
    const double done = to_seconds(start + duration);
    const double known = done + config_.copy_completion_rtt_us * 1e-6;
    if (c.op == Opcode::PROMOTE) {
      stats_.promotion_queue_s += to_seconds(start) - c.issued_s;
      stats_.promotion_transfer_s += done - to_seconds(start);
      outcomes_.promoted(c, known, c.issued_s);
    } else {
      outcomes_.demoted(c, known);
    }
  }
  if (in_run) queues_.run_posted();
  queues_.total();
  recycle(std::move(batch));
}

}  // namespace kvtier
