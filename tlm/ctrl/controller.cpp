#include "tlm/ctrl/controller.h"

#include <algorithm>
#include <cstdio>
#include <limits>

#include "tlm/ctrl/address_map.h"
#include "tlm/link/transact.h"

namespace kvtier {

namespace {
const char* opcode_name(cmdset::Opcode op) {
  using cmdset::Opcode;
  switch (op) {
    case Opcode::PROMOTE:
      return "PROMOTE";
    case Opcode::DEMOTE:
      return "DEMOTE";
    case Opcode::RECOMPRESS:
      return "RECOMPRESS";
    default:
      return "MOVE";
  }
}
}  // namespace

using cmdset::Completion;
using cmdset::Descriptor;
using cmdset::Opcode;
using cmdset::Status;

DataPlaneController::DataPlaneController(sc_core::sc_module_name name, const CtrlConfig& config)
    : sc_core::sc_module(name),
      config_(config),
      cycle_(nanoseconds(1e3 / config.clock_mhz)),
      entry_bits_(config.key_tag_bits + config.tenant_bits + config.tier_addr_bits +
                  config.hbm_slot_bits + config.length_bits + config.policy_bits +
                  config.mechanism_bits),
      policy_mask_(config.policy_bits >= 64 ? ~uint64_t{0}
                                            : (uint64_t{1} << config.policy_bits) - 1),
      own_index_(
          std::make_unique<BlockIndex>(config.index_sets, config.index_ways, config.key_tag_bits)),
      index_(own_index_.get()),
      ring_(static_cast<size_t>(config.ring_entries) * cmdset::kDescriptorBytes),
      issued_(config.desc_queue_depth),
      pipeline_(config.index_read_cycles),
      transfer_leaves_(config.xfer_queue_depth),
      releases_(config.cpl_queue_depth),
      slot_done_(config.max_outstanding_transfers, sc_core::SC_ZERO_TIME),
      engines_(config.dma_engines),
      engine_time_(config.dma_engine_gbps * 1e9),
      index_cache_(config.index_org != IndexOrg::Full ? config.index_cache_entries : 0),
      // A DMA burst's bytes, or an index row's (ctrl.index_org = host) on the socket path.
      burst_buffer_(std::max(config.max_burst_bytes, config.index_entry_bytes)) {
  mmio_in.register_b_transport(this, &DataPlaneController::mmio);
}

void DataPlaneController::set_trace(TraceEventLog* trace) {
  trace_ = trace;
  engine_tracks_.clear();
  if (!trace_) return;
  for (size_t k = 0; k < engines_.size(); ++k)
    engine_tracks_.push_back(trace_->track("device", "DMA engine " + std::to_string(k)));
  to_hbm_track_ = trace_->track("link", "to HBM");
  to_tier_track_ = trace_->track("link", "to tier");
  in_tier_track_ = trace_->track("link", "in tier");
}

double DataPlaneController::footprint_mm2() const {
  const double mib = static_cast<double>(index_->capacity()) * entry_bits_ / (1024.0 * 1024.0);
  return mib / config_.sram_mib_per_mm2;
}

uint64_t DataPlaneController::to_cycles(const sc_core::sc_time& t) const {
  return static_cast<uint64_t>(t.value() / cycle_.value());
}

void DataPlaneController::mmio(tlm::tlm_generic_payload& trans, sc_core::sc_time& delay) {
  const uint64_t addr = trans.get_address();
  const uint32_t len = trans.get_data_length();
  if (!trans.is_write()) {
    trans.set_response_status(tlm::TLM_COMMAND_ERROR_RESPONSE);
    return;
  }
  const uint64_t ring_bytes = ring_.size();
  if (addr >= addr::kRingBase && addr - addr::kRingBase + len <= ring_bytes) {
    std::copy_n(trans.get_data_ptr(), len,
                ring_.begin() + static_cast<std::ptrdiff_t>(addr - addr::kRingBase));
    trans.set_response_status(tlm::TLM_OK_RESPONSE);
    return;
  }
  if (addr == addr::kStepClock && len == 8) {
    ++stats_.step_clocks;  // the chains' step clock (host.decision = device)
    trans.set_response_status(tlm::TLM_OK_RESPONSE);
    return;
  }
  if (addr == addr::kDoorbell && len == cmdset::kDoorbellBytes) {
    const cmdset::Doorbell db = cmdset::decode_doorbell(trans.get_data_ptr());
    if (db.tail >= config_.ring_entries) {
      trans.set_response_status(tlm::TLM_ADDRESS_ERROR_RESPONSE);
      return;
    }
    ++stats_.doorbells;
    // The doorbell is a posted write: the caller's time does not wait for the commands.
    const sc_core::sc_time arrival = sim_now() + delay;
    std::vector<Descriptor> batch;
    while (head_ != db.tail) {
      batch.push_back(
          cmdset::decode_descriptor(&ring_[static_cast<size_t>(head_) * cmdset::kDescriptorBytes]));
      head_ = (head_ + 1) % config_.ring_entries;
    }
    // Each command's index set is hinted a few commands ahead of its lookup (a per-layer run's
    // index image is tens of MiB, read at random): the misses overlap.
    constexpr size_t kHintAhead = 8;
    for (size_t k = 0; k < std::min(kHintAhead, batch.size()); ++k) index_->prefetch(batch[k].key);
    auto hint_after = [&](size_t k) {
      if (k + kHintAhead < batch.size()) index_->prefetch(batch[k + kHintAhead].key);
    };
    // Ring order unless deadlines can change something: they differ, a transfer is held, or one
    // may be held.
    const bool by_deadline =
        config_.transfer_order == TransferOrder::Deadline &&
        (!held_.empty() || std::any_of(batch.begin(), batch.end(), [&](const Descriptor& d) {
          return d.deadline_ns != batch[0].deadline_ns || deferrable(d);
        }));
    if (!by_deadline) {
      // Ring order, one command at a time: the reference behaviour the RTL engine shares.
      for (size_t k = 0; k < batch.size(); ++k) {
        hint_after(k);
        Work w = decide(batch[k], arrival);
        finish(w);
      }
    } else {
      std::vector<Work> work;
      work.reserve(batch.size());
      catch_up(arrival);
      for (size_t k = 0; k < batch.size(); ++k) {
        hint_after(k);
        work.push_back(decide(batch[k], arrival));
      }
      schedule_by_deadline(work);
    }
    trans.set_response_status(tlm::TLM_OK_RESPONSE);
    return;
  }
  trans.set_response_status(tlm::TLM_ADDRESS_ERROR_RESPONSE);
}

// Deadline order (ctrl.transfer_order = deadline). Intake and lookups stay in ring order (they
// change the index). Transfers then wait in one queue across doorbells, and whenever the DMA
// side can start a transfer it takes the earliest deadline it has received; a command without
// a deadline (0) sorts last, equal deadlines go by priority (higher first), then arrival. A
// later command on a block never overtakes an earlier one: it inherits the earlier one's
// deadline when that is later, and its priority when that is lower.
//
// The model is loosely timed, so a transfer's schedule is decided only when it must be: when
// the host waits for its completion (at once for every command the host did not mark
// DEFERRABLE; for a deferrable one when the host reads its block, resolve()), when a later
// doorbell or wait shows the engine would have started it before then (catch_up), or once the
// doorbell after the one that posted it has been scheduled. A deferrable transfer (a prefetch,
// a recompression) therefore holds no place on the engines or the link while the next
// doorbell's earlier deadlines can still go first; one the host waits for is placed behind the
// held transfers with earlier deadlines only. Commands without a transfer complete at their
// lookup, in ring order. The transfer queue's bound (ctrl.xfer_queue_depth) does not apply to
// held transfers: the deadline-ordered queue is a structure the RTL engine does not have.
void DataPlaneController::schedule_by_deadline(std::vector<Work>& work) {
  ++stats_.reordered_batches;
  // What is still held was posted by earlier doorbells: this doorbell's transfers may overtake
  // it, and then it is scheduled (below).
  held_earlier_ = held_.size();
  ++doorbell_epoch_;
  std::vector<uint16_t> waited;
  std::vector<Work*> no_transfer;
  for (Work& w : work) {
    if (!(w.move && w.length > 0)) {
      no_transfer.push_back(&w);
      continue;
    }
    const bool deferred = deferrable(w.d);
    if (!deferred) waited.push_back(w.d.tag);
    hold(std::move(w), deferred);
  }
  for (uint16_t tag : waited) dispatch_until(tag);
  // A held transfer may be overtaken by the doorbell after the one that posted it, not beyond:
  // on busy-until timelines a transfer scheduled much later than it was posted would queue
  // behind everything reserved meanwhile, at later times, instead of using the idle time before
  // it. So what earlier doorbells posted is scheduled now, in deadline order (with it, this
  // doorbell's deferrable transfers due before it).
  while (held_earlier_ > 0) dispatch_until(held_.begin()->second.d.tag);
  // Commands without a transfer complete at their lookup, in ring order. Their completions are
  // posted after the transfers are placed, as in ring order, where a completion queues behind
  // the payload already reserved on the link: posted first, at a later time, it would hold the
  // link's busy-until timeline and push an earlier transfer behind it.
  for (Work* w : no_transfer) finish(*w, false);
}

void DataPlaneController::hold(Work w, bool deferred) {
  constexpr uint64_t kNone = std::numeric_limits<uint64_t>::max();
  uint64_t due = w.d.deadline_ns ? w.d.deadline_ns : kNone;
  uint32_t rank = 0xffffu - w.d.prio;
  HeldBlock& b = held_by_block_[w.d.key];
  if (b.count) due = std::max(due, b.due), rank = std::max(rank, b.rank);
  b.count++, b.due = due, b.rank = rank;
  w.seq = held_count_++;
  w.epoch = doorbell_epoch_;
  const HeldKey key{due, rank, w.seq};
  if (deferred) ++stats_.deferred_transfers;
  held_tags_.insert(w.d.tag);
  held_seqs_.insert(w.seq);
  held_.emplace(key, std::move(w));
  stats_.peak_held_transfers = std::max<uint64_t>(stats_.peak_held_transfers, held_.size());
}

void DataPlaneController::catch_up(const sc_core::sc_time& until) {
  // A held transfer is received (committed) the cycle after its lookup.
  auto received = [&](const Work& w) { return w.lookup_done + cycle_; };
  while (!held_.empty()) {
    // When the DMA side could take its next transfer: the splitter idle and a tracker slot free;
    // with nothing received by then, the engine idles until the first transfer is.
    sc_core::sc_time at =
        std::max(splitter_free_, *std::min_element(slot_done_.begin(), slot_done_.end()) + cycle_);
    // It takes the earliest deadline among those received by then.
    auto received_by = [&](const sc_core::sc_time& t) {
      return std::find_if(held_.begin(), held_.end(),
                          [&](const auto& h) { return received(h.second) <= t; });
    };
    auto pick = received_by(at);
    if (pick == held_.end()) {
      at = received(std::min_element(held_.begin(), held_.end(), [&](const auto& a, const auto& b) {
                      return received(a.second) < received(b.second);
                    })->second);
      pick = received_by(at);
    }
    if (at >= until) return;
    dispatch_until(pick->second.d.tag);
  }
}

void DataPlaneController::dispatch_until(uint16_t tag) {
  while (true) {
    if (!held_tags_.count(tag)) return;
    // Everything held ahead of it goes first, earliest deadline first.
    auto it = held_.begin();
    Work w = std::move(it->second);
    held_.erase(it);
    held_tags_.erase(w.d.tag);
    held_seqs_.erase(w.seq);
    if (!held_seqs_.empty() && *held_seqs_.begin() < w.seq) ++stats_.overtaking_transfers;
    auto b = held_by_block_.find(w.d.key);
    if (--b->second.count == 0) held_by_block_.erase(b);
    if (w.epoch < doorbell_epoch_ && held_earlier_ > 0) --held_earlier_;
    finish(w, false);
  }
}

void DataPlaneController::resolve(uint16_t tag, const sc_core::sc_time& at) {
  if (held_.empty()) return;
  catch_up(at);
  dispatch_until(tag);
}

cmdset::Completion DataPlaneController::issue_local(const Descriptor& d,
                                                    const sc_core::sc_time& at) {
  // Deadline order: what the engine would have started before `at` goes first; the command is
  // scheduled at once (the device issues it when its chain says the block is due).
  if (!held_.empty()) catch_up(at);
  Work w = decide(d, at, true);
  finish(w, false);
  return w.c;
}

void DataPlaneController::resolve_all() {
  while (!held_.empty()) dispatch_until(held_.begin()->second.d.tag);
}

double DataPlaneController::bytes_ratio(cmdset::Format f) const {
  switch (f) {
    case cmdset::Format::FP8:
      return config_.fp8_bytes_ratio;
    case cmdset::Format::INT4:
      return config_.int4_bytes_ratio;
    default:
      return 1.0;
  }
}

// Bounded queues. The RTL engine (rtl/kvdp_engine.sv and its parts) holds a descriptor back
// wherever a queue is full; in cycles, with RL = ctrl.index_read_cycles:
//  - Intake: the descriptor transactor offers one descriptor per ctrl.intake_cycles; desc_ready
//    is low while the intake FIFO (DescQueueDepth) is full. A FIFO entry frees in the cycle
//    after its descriptor issued, so descriptor k enters no earlier than two cycles after
//    descriptor k - DescQueueDepth issued (handshake one cycle after the pop, FIFO the next).
//  - Issue (kvdp_lookup.sv; ts_accepted is this cycle): the head leaves the FIFO when no
//    descriptor of the same index set is in the RL-stage pipeline (issued in the last RL
//    cycles), and when both the completion queue and the transfer queue have room for every
//    descriptor in the pipeline plus this one. The lookup does not know yet whether the command
//    moves anything, so a QUERY or a missing PROMOTE waits for transfer-queue room too: at issue
//    cycle a, (transfers not yet started at a) + (commands without a transfer issued in
//    [a - RL, a)) < XferQueueDepth, and (commands not yet released from the completion queue
//    at a) < CplQueueDepth. The lookup is done RL cycles after issue, busy or not.
//  - Transfer queue (kvdp_dma.sv): a transfer is pushed at its commit and may start the cycle
//    after. The head starts when the splitter is idle (the previous transfer's bursts handed
//    out, one per cycle), a tracker slot is free (MaxOutstanding; a slot frees the cycle after
//    its transfer's last burst is done) and no transfer of the same block is in flight. Its
//    bursts go out from the next cycle, one per cycle; the DMA engines behind the port
//    (ctrl.dma_engines) take them when one frees up, as the DMA transactor does.
//  - Completion queue (kvdp_cpl_queue.sv): an entry is allocated at commit and released in
//    descriptor order, one per cycle, the cycle after the command is done (at commit without a
//    transfer; at its last burst's done pulse with one). It stops the issue, not the transfers.
// Every bound is "at or after the time entry k - N left", so a ring of the last N leave times
// per queue gives each descriptor's times in O(1) (the tracker slots: O(MaxOutstanding)).
// In deadline order (ctrl.transfer_order) the doorbell's lookups are decided before any of its
// transfers is scheduled, so their bounds see the transfers already scheduled only.
sc_core::sc_time DataPlaneController::issue_time(const Descriptor& d,
                                                 const sc_core::sc_time& arrival) {
  // Into the intake FIFO: after the front end's decode, and when the FIFO has room.
  sc_core::sc_time in_fifo = std::max(arrival, intake_free_) + config_.intake_cycles * cycle_;
  if (const auto freed = issued_.ago(config_.desc_queue_depth))
    in_fifo = std::max(in_fifo, *freed + 2 * cycle_);
  intake_free_ = in_fifo;
  // Out of it into the lookup: the earliest cycle every issue condition holds. Each bound only
  // rises as the candidate time rises (fewer commands count as in the pipeline), so raising the
  // candidate until none moves it finds the first such cycle.
  const sc_core::sc_time unbounded = std::max(in_fifo, lookup_.busy_until());
  const sc_core::sc_time latency = config_.index_read_cycles * cycle_;
  const uint32_t set = index_->set_of(d.key);
  const size_t in_pipeline =
      static_cast<size_t>(std::min<uint64_t>(issued_count_, pipeline_.size()));
  sc_core::sc_time a = unbounded;
  // What the set hazard alone added (a read-modify-write of the same set in the pipeline), and
  // the part of it an UPDATE_POLICY in flight caused (the policy plane's cost, spec §M.2.4).
  sc_core::sc_time by_hazard = sc_core::SC_ZERO_TIME, by_update = sc_core::SC_ZERO_TIME;
  for (bool raised = true; raised;) {
    raised = false;
    auto raise = [&](const sc_core::sc_time& t) {
      if (t > a) a = t, raised = true;
    };
    if (const auto released = releases_.ago(config_.cpl_queue_depth)) raise(*released + cycle_);
    uint32_t without_transfer = 0;
    sc_core::sc_time first_out =
        sc_core::SC_ZERO_TIME;  // earliest a counted one leaves the pipeline
    for (size_t i = 0; i < in_pipeline; ++i) {
      const InPipeline& p = pipeline_[i];
      if (p.issued + latency < a) continue;  // committed before a
      if (p.set == set) {
        const sc_core::sc_time before = a;
        raise(p.issued + latency + cycle_);
        by_hazard += a - before;
        if (p.policy_update) by_update += a - before;
      }
      if (!p.transfer) {
        const sc_core::sc_time out = p.issued + latency + cycle_;
        if (without_transfer++ == 0 || out < first_out) first_out = out;
      }
    }
    if (raised) continue;
    if (without_transfer >= config_.xfer_queue_depth) {
      raise(first_out);
      continue;
    }
    if (const auto started = transfer_leaves_.ago(config_.xfer_queue_depth - without_transfer))
      raise(*started + cycle_);
  }
  stats_.set_hazard_cycles += to_cycles(by_hazard);
  stats_.policy_hazard_cycles += to_cycles(by_update);
  if (a > unbounded) {
    ++stats_.queue_held_descriptors;
    stats_.queue_held_s += to_seconds(a - unbounded);
  }
  return a;
}

DataPlaneController::Work DataPlaneController::decide(const Descriptor& d,
                                                      const sc_core::sc_time& arrival, bool local) {
  Work w;
  w.local = local;
  if (local) {
    ++stats_.device_issued;
    stats_.device_issued_promotions += d.opcode == Opcode::PROMOTE;
  } else {
    ++stats_.descriptors;
    const size_t op_index = static_cast<size_t>(d.opcode);
    if (op_index < stats_.per_opcode.size()) ++stats_.per_opcode[op_index];
  }
  w.d = d;
  w.accepted = issue_time(d, arrival);
  // One lookup enters the pipelined SRAM per cycle; the result is ready after the read latency.
  w.lookup_done = lookup_.reserve(w.accepted, cycle_) + config_.index_read_cycles * cycle_;
  const bool host_table = config_.index_org == IndexOrg::Host;
  if (index_cache_.capacity() && !index_cache_.access(d.key)) {
    // The SRAM does not hold the entry; the lookup waits for the entry's row of the table: in
    // tier DRAM (cached), or in host DRAM behind the link (host: a device read across the
    // link, behind whatever the link carries then).
    ++stats_.index_cache_misses;
    const sc_core::sc_time read = host_table ? index_row(true, d.key, w.lookup_done) - w.lookup_done
                                             : nanoseconds(config_.index_dram_read_ns);
    (host_table ? stats_.index_host_read_bytes : stats_.index_dram_read_bytes) +=
        config_.index_entry_bytes;
    stats_.index_miss_s += to_seconds(read);
    w.lookup_done += read;
  } else if (index_cache_.capacity()) {
    ++stats_.index_cache_hits;
  }
  w.transfer_done = w.lookup_done;
  // Entry inserted or dropped: the table's row is written through (a posted write, off the
  // command's path; across the link when the table is in host DRAM).
  auto write_through = [&]() {
    if (!index_cache_.capacity()) return;
    if (!host_table) {
      stats_.index_dram_write_bytes += config_.index_entry_bytes;
      return;
    }
    index_row(false, d.key, w.lookup_done);
    stats_.index_host_write_bytes += config_.index_entry_bytes;
  };

  Completion& c = w.c;
  c.tag = d.tag;
  c.status = Status::OK;
  const auto slot = index_->find(d.key);
  IndexEntry* e = slot ? &index_->at(*slot) : nullptr;
  const bool foreign = e && e->tenant != d.tenant;
  // Tenant rule: PROMOTE, QUERY and DEMOTE see another tenant's entry only when it is shareable.
  const bool read_visible = e && (!foreign || e->shareable);
  auto move = [&](Opcode op, uint64_t src, uint64_t dst, uint32_t length, cmdset::Format format) {
    w.move = true;
    w.move_op = op;
    w.src = src;
    w.dst = dst;
    w.length = length;
    w.compressed =
        config_.compress_gbps > 0 && (format != cmdset::Format::BF16 || op == Opcode::RECOMPRESS);
    w.uncompressed_bytes = length / bytes_ratio(format);
  };

  switch (d.opcode) {
    case Opcode::PROMOTE:
      if (!e) c.status = Status::MISS;
      else if (!read_visible) c.status = Status::DENIED;
      else {
        move(Opcode::PROMOTE, e->tier_addr, d.hbm_addr, e->length, e->format);
        // The promotion carries its owner's policy word: the host's intent travels with the
        // request (a shared read by another tenant leaves the entry's word).
        if (!foreign) {
          if ((e->policy ^ d.policy) & policy_mask_) ++stats_.promotion_policy_writes;
          e->policy = d.policy;
        }
        e->hbm_resident = true;
        e->hbm_addr = d.hbm_addr;
        stats_.bytes_to_hbm += e->length;
      }
      break;
    case Opcode::DEMOTE:
      if (e) {
        if (!read_visible) c.status = Status::DENIED;
        else
          c.flags |= static_cast<uint8_t>(cmdset::CplFlag::WRITE_ONCE_SKIP),
              ++stats_.write_once_skips;
      } else if (const auto free = index_->free_slot(d.key)) {
        IndexEntry n;
        n.valid = true;
        n.tag = index_->tag_of(d.key);
        n.tenant = d.tenant;
        n.shareable = (d.flags & static_cast<uint8_t>(cmdset::DescFlag::SHAREABLE)) != 0;
        n.hbm_resident = true;
        n.hbm_addr = d.hbm_addr;
        n.tier_addr = d.tier_addr;
        n.length = d.length;
        n.format = d.format;
        n.qos = d.qos;
        n.prio = d.prio;
        n.policy = d.policy;
        index_->insert(*free, n);
        write_through();
        stats_.peak_index_entries = std::max(stats_.peak_index_entries, index_->valid_entries());
        move(Opcode::DEMOTE, d.hbm_addr, d.tier_addr, d.length, d.format);
        stats_.bytes_to_tier += d.length;
      } else {
        c.status = Status::NO_SPACE;
      }
      break;
    case Opcode::QUERY:
      if (!e) c.status = Status::MISS;
      else if (!read_visible) c.status = Status::DENIED;
      break;
    case Opcode::DISCARD:
    case Opcode::FREE:
    case Opcode::UPDATE_POLICY:
    case Opcode::PIN:
    case Opcode::UNPIN:
    case Opcode::RECOMPRESS:
      // Owner-only commands.
      if (!e) {
        c.status = Status::MISS;
        break;
      }
      if (foreign) {
        c.status = Status::DENIED;
        break;
      }
      if (d.opcode == Opcode::DISCARD) {
        e->hbm_resident = false;
      } else if (d.opcode == Opcode::FREE) {
        if (e->pinned) c.status = Status::PINNED;
        else {
          index_->erase(*slot);
          index_cache_.erase(d.key);
          write_through();
        }
      } else if (d.opcode == Opcode::UPDATE_POLICY) {
        e->qos = d.qos;
        e->prio = d.prio;
        e->policy = d.policy;
      } else if (d.opcode == Opcode::PIN || d.opcode == Opcode::UNPIN) {
        e->pinned = d.opcode == Opcode::PIN;
      } else {  // RECOMPRESS: the one command that rewrites a tier copy
        // The engine transcodes the old copy (its bf16-equivalent bytes) into the new format.
        move(Opcode::RECOMPRESS, e->tier_addr, e->tier_addr, d.length, e->format);
        w.uncompressed_bytes = e->length / bytes_ratio(e->format);
        e->length = d.length;
        e->format = d.format;
        c.flags |= static_cast<uint8_t>(cmdset::CplFlag::TIER_REWRITTEN);
        ++stats_.tier_rewrites;
        stats_.bytes_to_tier += d.length;
      }
      break;
    case Opcode::CHAIN:
      // The device holds the sequence's chain from here (host.decision = device); the index is
      // not touched: the chain's members are looked up as the device issues them.
      ++stats_.chains;
      break;
    case Opcode::NOP:
      break;
    default:
      c.status = Status::BAD_OPCODE;
  }
  const size_t status_index = static_cast<size_t>(c.status);
  if (status_index < stats_.per_status.size()) ++stats_.per_status[status_index];
  pipeline_[static_cast<size_t>(issued_count_++ % pipeline_.size())] = InPipeline{
      w.accepted, index_->set_of(d.key), w.move && w.length > 0, d.opcode == Opcode::UPDATE_POLICY};
  issued_.push(w.accepted);
  return w;
}

void DataPlaneController::forget_finished_blocks() {
  // A block's last transfer end holds a later transfer of it back only while it lies beyond the
  // splitter: every later transfer leaves at or after splitter_free_, which never decreases, so
  // an end at or before splitter_free_ - cycle can never raise a leave time again. Swept when
  // the map has doubled since the last sweep, so the cost stays per transfer and the map stays
  // as large as the blocks in flight instead of every block ever moved.
  if (block_transfer_done_.size() < forget_at_) return;
  block_transfer_done_.erase_if(
      [&](uint64_t, const sc_core::sc_time& done) { return done + cycle_ <= splitter_free_; });
  forget_at_ = std::max<size_t>(kForgetMinEntries, 2 * block_transfer_done_.size());
}

void DataPlaneController::finish(Work& w, bool in_ring_order) {
  // A zero-length move is no transfer: the command completes at its lookup, as in the engine.
  if (w.move && w.length > 0) {
    // The transfer leaves the transfer queue (it was pushed at commit, the cycle the lookup is
    // done) when the splitter has handed out the previous transfer's bursts, a tracker slot is
    // free and the block's previous transfer is done; its bursts follow one per cycle.
    sc_core::sc_time leave = std::max(w.lookup_done + cycle_, splitter_free_);
    auto slot = std::min_element(slot_done_.begin(), slot_done_.end());
    leave = std::max(leave, *slot + cycle_);
    if (const sc_core::sc_time* outstanding = block_transfer_done_.find(w.d.key))
      leave = std::max(leave, *outstanding + cycle_);
    uint32_t bursts = 0;
    w.transfer_done = transfer(w, leave + cycle_, bursts);
    splitter_free_ = leave + (bursts + 1) * cycle_;
    *slot = w.transfer_done;
    transfer_leaves_.push(leave);
    block_transfer_done_[w.d.key] = w.transfer_done;
    forget_finished_blocks();
    w.c.bursts = bursts;
  }
  Completion& c = w.c;
  c.ts_accepted = to_cycles(w.accepted);
  c.ts_lookup_done = to_cycles(w.lookup_done);
  c.ts_transfer_done = to_cycles(w.transfer_done);
  // A command the device issued itself has no completion-queue entry and posts nothing: the
  // device knows its own outcome, and the block is usable once its last burst is in HBM.
  if (w.local) return;
  // The completion queue releases in descriptor order, one per cycle, the cycle after the
  // command is done (its lookup, or its transfer's last burst); the completion is formatted and
  // posted ctrl.completion_cycles later.
  // In deadline order a held transfer is scheduled after commands that completed later than it
  // (loosely timed: its place is decided late); the completion queue releases each command once
  // it is done, not behind those.
  const sc_core::sc_time release =
      !in_ring_order ? w.transfer_done + cycle_ : std::max(w.transfer_done, last_release_) + cycle_;
  last_release_ = std::max(last_release_, release);
  releases_.push(release);
  post_completion(c, release + config_.completion_cycles * cycle_);
}

// Compressed copies pass the compression engine: it (de)quantises the burst's bf16-equivalent
// bytes at its own rate, after its pipeline latency. Only the stored bytes cross the link.
sc_core::sc_time DataPlaneController::codec(const Work& w, uint32_t burst,
                                            const sc_core::sc_time& at) {
  if (!w.compressed) return at;
  const double work = w.uncompressed_bytes * burst / w.length;
  const sc_core::sc_time busy = seconds(work / (config_.compress_gbps * 1e9));
  stats_.compress_busy_s += to_seconds(busy);
  return compress_.reserve(at, busy) + busy + nanoseconds(config_.compress_latency_ns);
}

sc_core::sc_time DataPlaneController::transfer(const Work& w, const sc_core::sc_time& earliest,
                                               uint32_t& bursts) {
  // A recompression reads and writes tier DRAM in turn, burst by burst: no train.
  if (config_.burst_model == BurstModel::Train && tier_direct_ && host_direct_ &&
      w.move_op != Opcode::RECOMPRESS)
    return transfer_train(w, earliest, bursts);
  sc_core::sc_time done = earliest;
  sc_core::sc_time first_start = earliest;
  const uint32_t length = w.length;
  for (uint64_t offset = 0; offset < length; offset += config_.max_burst_bytes) {
    const uint32_t burst = BurstTarget::train_burst_length(config_.max_burst_bytes, length,
                                                           offset / config_.max_burst_bytes);
    const sc_core::sc_time start = on_engine(w, burst, earliest + bursts * cycle_);
    if (offset == 0) first_start = start;
    auto codec = [&](const sc_core::sc_time& at) { return this->codec(w, burst, at); };
    sc_core::sc_time end;
    if (w.move_op == Opcode::PROMOTE) {
      const sc_core::sc_time read = burst_read(tier_out, w.src + offset, burst, start);
      end = burst_write(host_out, addr::kHbmBase + w.dst + offset, burst, codec(read));
    } else if (w.move_op == Opcode::DEMOTE) {
      const sc_core::sc_time read =
          burst_read(host_out, addr::kHbmBase + w.src + offset, burst, codec(start));
      end = burst_write(tier_out, w.dst + offset, burst, read);
    } else {
      const sc_core::sc_time read = burst_read(tier_out, w.src + offset, burst, start);
      end = burst_write(tier_out, w.dst + offset, burst, codec(read));
    }
    done = std::max(done, end);
    ++bursts;
    ++stats_.bursts;
  }
  if (w.compressed) ++stats_.compressed_transfers;
  trace_transfer(w, first_start, done, bursts);
  return done;
}

sc_core::sc_time DataPlaneController::on_engine(const Work& w, uint32_t burst,
                                                const sc_core::sc_time& offered) {
  auto engine = std::min_element(
      engines_.begin(), engines_.end(),
      [](const Timeline& a, const Timeline& b) { return a.busy_until() < b.busy_until(); });
  const sc_core::sc_time& engine_time = engine_time_.of(burst);
  const sc_core::sc_time start = engine->reserve(offered, engine_time);
  if (trace_) {
    const size_t k = static_cast<size_t>(engine - engines_.begin());
    trace_->slice(engine_tracks_[k], opcode_name(w.move_op), to_seconds(start),
                  to_seconds(start + engine_time));
  }
  return start;
}

void DataPlaneController::trace_transfer(const Work& w, const sc_core::sc_time& first_start,
                                         const sc_core::sc_time& done, uint32_t bursts) {
  if (!trace_) return;
  char key[24];
  std::snprintf(key, sizeof key, "%016llx", static_cast<unsigned long long>(w.d.key));
  const TraceEventLog::Track& track = w.move_op == Opcode::PROMOTE  ? to_hbm_track_
                                      : w.move_op == Opcode::DEMOTE ? to_tier_track_
                                                                    : in_tier_track_;
  trace_->async_slice(
      track, "transfer", std::string(opcode_name(w.move_op)) + " " + key, to_seconds(first_start),
      to_seconds(done),
      {{"bytes", w.length}, {"bursts", bursts}, {"deadline_s", w.d.deadline_ns * 1e-9}});
}

sc_core::sc_time DataPlaneController::transfer_train(const Work& w,
                                                     const sc_core::sc_time& earliest,
                                                     uint32_t& bursts) {
  const uint32_t length = w.length;
  const uint32_t max_burst = config_.max_burst_bytes;
  const size_t n = (static_cast<size_t>(length) + max_burst - 1) / max_burst;
  const sc_core::sc_time& now = sim_now();
  train_at_.resize(n);
  train_done_.resize(n);
  sc_core::sc_time first_start = earliest;
  // The DMA engines: burst k goes to the engine that frees up first, offered k cycles after
  // `earliest`; a demotion's burst then passes the compression engine before the link.
  for (size_t k = 0; k < n; ++k) {
    const uint32_t burst = BurstTarget::train_burst_length(max_burst, length, k);
    const sc_core::sc_time start = on_engine(w, burst, earliest + bursts * cycle_);
    if (k == 0) first_start = start;
    train_at_[k] =
        w.move_op == Opcode::PROMOTE ? std::max(start, now) : std::max(codec(w, burst, start), now);
    ++bursts;
    ++stats_.bursts;
  }
  if (w.move_op == Opcode::PROMOTE) {
    // Tier DRAM reads, the compression engine, then the writes across the link into HBM.
    tier_direct_->burst_train(true, w.src, max_burst, length, TxnClass::PayloadRead,
                              train_at_.data(), train_done_.data(), n);
    for (size_t k = 0; k < n; ++k)
      train_at_[k] = std::max(
          codec(w, BurstTarget::train_burst_length(max_burst, length, k), train_done_[k]), now);
    host_direct_->burst_train(false, addr::kHbmBase + w.dst, max_burst, length,
                              TxnClass::PayloadWrite, train_at_.data(), train_done_.data(), n);
  } else {
    // DEMOTE: reads of HBM across the link, then the writes into tier DRAM.
    host_direct_->burst_train(true, addr::kHbmBase + w.src, max_burst, length,
                              TxnClass::PayloadRead, train_at_.data(), train_done_.data(), n);
    for (size_t k = 0; k < n; ++k) train_at_[k] = std::max(train_done_[k], now);
    tier_direct_->burst_train(false, w.dst, max_burst, length, TxnClass::PayloadWrite,
                              train_at_.data(), train_done_.data(), n);
  }
  sc_core::sc_time done = earliest;
  for (size_t k = 0; k < n; ++k) done = std::max(done, train_done_[k]);
  if (w.compressed) ++stats_.compressed_transfers;
  trace_transfer(w, first_start, done, bursts);
  return done;
}

// Bursts are tagged PayloadRead / PayloadWrite; the tag only matters on the link (host_out),
// tier DRAM is device-local.
sc_core::sc_time DataPlaneController::index_row(bool read, uint64_t key,
                                                const sc_core::sc_time& at) {
  // The key's row, by the key modulo the table's rows: addresses spread as the keys do (the
  // row's content is not modelled, only its access).
  const uint64_t row = key % (addr::kHostIndexSize / config_.index_entry_bytes);
  const uint64_t address = addr::kHostIndexBase + row * config_.index_entry_bytes;
  return read ? burst_read(host_out, address, config_.index_entry_bytes, at, TxnClass::IndexRead)
              : burst_write(host_out, address, config_.index_entry_bytes, at, TxnClass::IndexWrite);
}

sc_core::sc_time DataPlaneController::burst_read(
    tlm_utils::simple_initiator_socket<DataPlaneController>& socket, uint64_t addr, uint32_t length,
    const sc_core::sc_time& at, TxnClass cls) {
  if (BurstTarget* direct = &socket == &tier_out ? tier_direct_ : host_direct_)
    return direct->burst(true, addr, length, cls, std::max(at, sim_now()));
  return transact(socket, tlm::TLM_READ_COMMAND, addr, burst_buffer_.data(), length, cls, at);
}

sc_core::sc_time DataPlaneController::burst_write(
    tlm_utils::simple_initiator_socket<DataPlaneController>& socket, uint64_t addr, uint32_t length,
    const sc_core::sc_time& at, TxnClass cls) {
  // Direct: the time a transaction issued at `at` would start (never before now; transact()
  // turns an earlier time into a zero delay).
  if (BurstTarget* direct = &socket == &tier_out ? tier_direct_ : host_direct_)
    return direct->burst(false, addr, length, cls, std::max(at, sim_now()));
  return transact(socket, tlm::TLM_WRITE_COMMAND, addr, burst_buffer_.data(), length, cls, at);
}

void DataPlaneController::post_completion(const Completion& c, const sc_core::sc_time& at) {
  uint8_t bytes[cmdset::kCompletionBytes];
  cmdset::encode(c, bytes);
  const uint64_t slot = completions_posted_++ % config_.ring_entries;
  transact(host_out, tlm::TLM_WRITE_COMMAND,
           addr::kCompletionRing + slot * cmdset::kCompletionBytes, bytes, cmdset::kCompletionBytes,
           TxnClass::CompletionWrite, at);
}

}  // namespace kvtier
