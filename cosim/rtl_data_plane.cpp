#include "cosim/rtl_data_plane.h"

#include <algorithm>
#include <chrono>
#include <limits>

#include "tlm/ctrl/address_map.h"
#include "tlm/link/transact.h"

namespace kvtier::cosim {

using cmdset::Opcode;
using cmdset::Status;

RtlDataPlane::RtlDataPlane(sc_core::sc_module_name name, const CtrlConfig& config,
                           std::unique_ptr<EngineModel> engine, Mode mode,
                           const Backpressure& backpressure)
    : sc_core::sc_module(name),
      config_(config),
      cycle_(sc_core::sc_time(1e3 / config.clock_mhz, sc_core::SC_NS)),
      entry_bits_(config.key_tag_bits + config.tenant_bits + config.tier_addr_bits +
                  config.hbm_slot_bits + config.length_bits + config.policy_bits +
                  config.mechanism_bits),
      mode_(mode),
      engine_(std::move(engine)),
      ring_(static_cast<size_t>(config.ring_entries) * cmdset::kDescriptorBytes),
      engines_(config.dma_engines),
      burst_buffer_(config.max_burst_bytes),
      backpressure_(backpressure),
      stall_rng_(backpressure.seed) {
  mmio_in_socket.register_b_transport(this, &RtlDataPlane::mmio);
  engine_->reset();
}

RtlDataPlane::~RtlDataPlane() { finish(); }

void RtlDataPlane::finish() {
  if (finished_) return;
  finished_ = true;
  engine_->final();
}

uint64_t RtlDataPlane::to_cycles_floor(const sc_core::sc_time& t) const {
  return static_cast<uint64_t>(t.value() / cycle_.value());
}

uint64_t RtlDataPlane::to_cycles_ceil(const sc_core::sc_time& t) const {
  return static_cast<uint64_t>((t.value() + cycle_.value() - 1) / cycle_.value());
}

double RtlDataPlane::footprint_kib() const {
  return static_cast<double>(config_.index_sets) * config_.index_ways * entry_bits_ / 8.0 / 1024.0;
}

double RtlDataPlane::footprint_mm2() const {
  const double mib = static_cast<double>(config_.index_sets) * config_.index_ways * entry_bits_ /
                     (1024.0 * 1024.0);
  return mib / config_.sram_mib_per_mm2;
}

void RtlDataPlane::mmio(tlm::tlm_generic_payload& trans, sc_core::sc_time& delay) {
  const uint64_t addr = trans.get_address();
  const uint32_t len = trans.get_data_length();
  if (!trans.is_write()) {
    trans.set_response_status(tlm::TLM_COMMAND_ERROR_RESPONSE);
    return;
  }
  if (addr >= addr::kRingBase && addr - addr::kRingBase + len <= ring_.size()) {
    std::copy_n(trans.get_data_ptr(), len,
                ring_.begin() + static_cast<std::ptrdiff_t>(addr - addr::kRingBase));
    trans.set_response_status(tlm::TLM_OK_RESPONSE);
    return;
  }
  if (addr != addr::kDoorbell || len != cmdset::kDoorbellBytes) {
    trans.set_response_status(tlm::TLM_ADDRESS_ERROR_RESPONSE);
    return;
  }
  const cmdset::Doorbell db = cmdset::decode_doorbell(trans.get_data_ptr());
  if (db.tail >= config_.ring_entries) {
    trans.set_response_status(tlm::TLM_ADDRESS_ERROR_RESPONSE);
    return;
  }
  if (finished_) SC_REPORT_ERROR("kvtier/rtl", "doorbell after the RTL engine was finished");
  ++stats_.doorbells;
  // A posted write, as in the TLM model: the caller's time does not wait for the commands.
  const uint64_t arrival = to_cycles_floor(sim_now() + delay);
  // Bring the engine up to the doorbell (it may already be past it: then the descriptors
  // enter now, behind what the engine is still doing).
  run([&] { return now_ >= arrival; }, arrival);
  const bool was_empty = to_offer_.empty();
  while (head_ != db.tail) {
    Pending p;
    std::copy_n(&ring_[static_cast<size_t>(head_) * cmdset::kDescriptorBytes],
                cmdset::kDescriptorBytes, p.bytes.begin());
    p.arrival_cycle = arrival;
    to_offer_.push_back(p);
    const uint8_t op = p.bytes[cmdset::kDescriptorOpcodeOffset];
    ++stats_.descriptors;
    if (op < stats_.per_opcode.size()) ++stats_.per_opcode[op];
    head_ = (head_ + 1) % config_.ring_entries;
    if (coverage_ && head_ == 0) coverage_->hit("corner/descriptor_ring_wrap");
  }
  if (was_empty && !to_offer_.empty())
    offer_at_ = std::max(to_offer_.front().arrival_cycle, intake_free_) + config_.intake_cycles - 1;
  if (mode_ == Mode::Drain) drain();
  trans.set_response_status(tlm::TLM_OK_RESPONSE);
}

bool RtlDataPlane::all_done() const { return to_offer_.empty() && posted_ == submitted_; }

void RtlDataPlane::drain() {
  run([&] { return all_done(); }, std::numeric_limits<uint64_t>::max());
}

void RtlDataPlane::stall(const std::string& why) {
  stalled_ = true;
  stall_reason_ = "RTL engine stalled at cycle " + std::to_string(now_) + ": " + why;
  // A platform run cannot continue without its completions; the co-simulation bench reports
  // the stall as a difference at the first descriptor the engine did not complete.
  if (mode_ == Mode::Drain) SC_REPORT_ERROR("kvtier/rtl", stall_reason_.c_str());
}

template <typename Stop>
void RtlDataPlane::run(Stop stop, uint64_t target_cycle) {
  if (stalled_ || stop()) return;
  const auto wall0 = std::chrono::steady_clock::now();
  EngineInputs in;
  EngineOutputs out;
  while (!stop()) {
    in.desc_valid = !to_offer_.empty() && offer_at_ <= now_;
    if (in.desc_valid) in.desc = to_offer_.front().bytes;
    // The transfer due first reports all its bursts done (one pulse per cycle).
    in.dma_done_valid = !done_.empty() && done_.top().due <= now_;
    if (in.dma_done_valid) {
      in.dma_done_id = done_.top().id;
      in.dma_done_bursts = done_.top().bursts;
      bursts_out_ -= done_.top().bursts;
      done_.pop();
    }
    if (backpressure_.cpl_ready_low > 0 || backpressure_.dma_req_ready_low > 0) {
      std::uniform_real_distribution<double> u(0.0, 1.0);
      in.cpl_ready = u(stall_rng_) >= backpressure_.cpl_ready_low;
      in.dma_req_ready = u(stall_rng_) >= backpressure_.dma_req_ready_low;
    }
    engine_->set_trace_cycle(now_);
    engine_->evaluate(in, out);
    if (out.cycle != now_)
      SC_REPORT_FATAL("kvtier/rtl",
                      ("engine cycle counter " + std::to_string(out.cycle) +
                       " disagrees with the transactors' cycle " + std::to_string(now_))
                          .c_str());

    // Handshakes at the coming edge.
    if (in.desc_valid && out.desc_ready) {
      pending_opcodes_.push_back(to_offer_.front().bytes[cmdset::kDescriptorOpcodeOffset]);
      to_offer_.pop_front();
      ++submitted_;
      intake_free_ = now_ + 1;
      if (!to_offer_.empty())
        offer_at_ =
            std::max(to_offer_.front().arrival_cycle, intake_free_) + config_.intake_cycles - 1;
    }
    if (out.commit) {
      if (out.commit_xfer) transfer_owner_.push_back(committed_);
      ++committed_;
    }
    if (in.desc_valid && !out.desc_ready) ++activity_.desc_stalls;
    if (out.cpl_valid && !in.cpl_ready) ++activity_.cpl_stalls;
    if (out.dma_req_valid && !in.dma_req_ready) ++activity_.dma_req_stalls;
    if (coverage_) {
      engine_->probe(probe_);
      coverage_->sample(probe_);
      if (in.desc_valid && !out.desc_ready) coverage_->hit("corner/backpressure/desc");
      if (out.cpl_valid && !in.cpl_ready) coverage_->hit("corner/backpressure/cpl");
      if (out.dma_req_valid && !in.dma_req_ready) coverage_->hit("corner/backpressure/dma_req");
    }
    if (out.dma_req_valid && in.dma_req_ready && !take_run(out)) break;
    if (out.cpl_valid && in.cpl_ready) {
      on_completion(out);
      last_progress_ = speed_.evaluated_cycles;
    }
    issue_ready_bursts();
    // A live engine completes something within any window of kStallWindow evaluated cycles
    // (quiescent stretches are skipped, not evaluated); a broken one may spin forever.
    if (speed_.evaluated_cycles - last_progress_ > kStallWindow && !all_done()) {
      stall("no completion in " + std::to_string(kStallWindow) + " evaluated cycles with " +
            std::to_string(submitted_ - posted_ + to_offer_.size()) + " descriptors outstanding");
      break;
    }

    // Skip ahead while the engine is quiescent and no input event is due. A descriptor the
    // full intake FIFO refused is no event: it waits for room, which only a retiring done pulse
    // makes. A done pulse that does not retire its transfer only counts bursts (kvdp_dma.sv:
    // no slot frees, nothing starts), so the engine stays quiescent after it: the engine says
    // which (EngineModel::quiescent), from the same signals its retirement uses.
    uint64_t skip = 0;
    if (engine_->quiescent()) {
      uint64_t next = target_cycle;
      if (!to_offer_.empty() && offer_at_ > now_) next = std::min(next, offer_at_);
      if (!done_.empty()) next = std::min(next, done_.top().due);
      if (next == std::numeric_limits<uint64_t>::max()) {
        stall("quiescent with " + std::to_string(submitted_ - posted_ + to_offer_.size()) +
              " descriptors outstanding and no input event pending");
        break;
      }
      if (next > now_ + 1) skip = next - now_ - 1;
    }
    engine_->clock(skip);
    now_ += 1 + skip;
    ++speed_.evaluated_cycles;
    speed_.covered_cycles += 1 + skip;
  }
  speed_.wall_s += std::chrono::duration<double>(std::chrono::steady_clock::now() - wall0).count();
  // In a platform run a failed RTL assertion is a model error; the co-simulation bench counts
  // them and carries on to find the first functional difference.
  if (mode_ == Mode::Drain && engine_->assertion_failures() > 0)
    SC_REPORT_ERROR("kvtier/rtl",
                    (std::to_string(engine_->assertion_failures()) +
                     " RTL assertion(s) failed; see the kvdp assertion messages above")
                        .c_str());
}

bool RtlDataPlane::take_run(const EngineOutputs& out) {
  // A run of bursts (kvdp_dma.sv): each MaxBurstBytes long but the transfer's last, in address
  // order. The DMA datapath takes them one per cycle, as the TLM controller offers a
  // transfer's burst k k cycles after its first (DataPlaneController::transfer).
  const uint32_t max_burst = engine_->params().max_burst_bytes;
  // A broken engine's count (with its assertions off) must not make the transactor's work
  // unbounded: a run beyond MaxRunBursts stops the engine as a stall.
  if (out.dma_req_bursts > engine_->params().max_run_bursts) {
    stall("a DMA run of " + std::to_string(out.dma_req_bursts) +
          " bursts, more than MaxRunBursts " + std::to_string(engine_->params().max_run_bursts));
    return false;
  }
  for (uint32_t k = 0; k < out.dma_req_bursts; ++k) {
    // Burst k of the run, as the TLM controller cuts a train. A run whose count exceeds its
    // length (a broken engine, which the RTL's DmaBurstLength flags) shows its surplus bursts
    // empty, as the engine's port would carry them.
    const uint64_t offset = uint64_t{k} * max_burst;
    const uint32_t length = offset < out.dma_req_length
                                ? BurstTarget::train_burst_length(max_burst, out.dma_req_length, k)
                                : 0;
    const bool last = out.dma_req_last && k + 1 == out.dma_req_bursts;
    const uint64_t offer = std::max(now_, next_offer_);
    next_offer_ = offer + 1;
    deferred_.push_back(Burst{transfer_seq_, out.dma_req_id, out.dma_req_dir, length,
                              out.dma_req_src + offset, out.dma_req_dst + offset, offer, last});
    if (coverage_) coverage_->burst(length, last, max_burst);
    ++stats_.bursts;
    if (out.dma_req_dir == static_cast<uint32_t>(DmaDir::TierToHbm)) stats_.bytes_to_hbm += length;
    else stats_.bytes_to_tier += length;
  }
  if (out.dma_req_last) ++transfer_seq_;
  bursts_out_ += out.dma_req_bursts;
  activity_.max_bursts_at_once = std::max(activity_.max_bursts_at_once, bursts_out_);
  return true;
}

void RtlDataPlane::issue_ready_bursts() {
  while (!deferred_.empty()) {
    const Burst& b = deferred_.front();
    const uint64_t owner = transfer_owner_.at(static_cast<size_t>(b.transfer - owner_base_));
    // TLM order: a descriptor's bursts follow every earlier descriptor's completion.
    if (owner != posted_) break;
    issue(b);
    if (b.last) {
      transfer_owner_.pop_front();
      ++owner_base_;
    }
    deferred_.pop_front();
  }
}

void RtlDataPlane::issue(const Burst& b) {
  // As the TLM model: the burst takes the DMA engine that frees up first and keeps it busy
  // while it streams; then the read and the write go out through the sockets.
  const double engine_bytes_per_s = config_.dma_engine_gbps * 1e9;
  auto engine = std::min_element(
      engines_.begin(), engines_.end(),
      [](const Timeline& x, const Timeline& y) { return x.busy_until() < y.busy_until(); });
  const sc_core::sc_time start =
      engine->reserve(b.offer_cycle * cycle_, seconds(b.length / engine_bytes_per_s));
  sc_core::sc_time end;
  switch (static_cast<DmaDir>(b.dir)) {
    case DmaDir::TierToHbm: {
      const auto read = move(tier_out_socket, tlm::TLM_READ_COMMAND, b.src, b.length,
                             TxnClass::PayloadRead, start);
      end = move(host_out_socket, tlm::TLM_WRITE_COMMAND, addr::kHbmBase + b.dst, b.length,
                 TxnClass::PayloadWrite, read);
      break;
    }
    case DmaDir::HbmToTier: {
      const auto read = move(host_out_socket, tlm::TLM_READ_COMMAND, addr::kHbmBase + b.src,
                             b.length, TxnClass::PayloadRead, start);
      end = move(tier_out_socket, tlm::TLM_WRITE_COMMAND, b.dst, b.length, TxnClass::PayloadWrite,
                 read);
      break;
    }
    case DmaDir::TierToTier: {
      const auto read = move(tier_out_socket, tlm::TLM_READ_COMMAND, b.src, b.length,
                             TxnClass::PayloadRead, start);
      end = move(tier_out_socket, tlm::TLM_WRITE_COMMAND, b.dst, b.length, TxnClass::PayloadWrite,
                 read);
      break;
    }
    default:
      SC_REPORT_FATAL("kvtier/rtl",
                      ("burst with undefined direction " + std::to_string(b.dir)).c_str());
  }
  const uint64_t due = std::max({to_cycles_ceil(end), b.offer_cycle + 1, now_ + 1});
  TransferDone& t = transfer_done(b.id);
  t.due = std::max(t.due, due);
  ++t.bursts;
  if (b.last) {
    done_.push(Done{t.due, done_seq_++, b.id, t.bursts});
    t = TransferDone{};
  }
}

sc_core::sc_time RtlDataPlane::move(tlm_utils::simple_initiator_socket<RtlDataPlane>& socket,
                                    tlm::tlm_command cmd, uint64_t address, uint32_t length,
                                    TxnClass cls, const sc_core::sc_time& at) {
  const bool read = cmd == tlm::TLM_READ_COMMAND;
  // Direct: the time a transaction issued at `at` would start (never before now; transact()
  // turns an earlier time into a zero delay).
  if (BurstTarget* direct = &socket == &tier_out_socket ? tier_direct_ : host_direct_)
    return direct->burst(read, address, length, cls, std::max(at, sim_now()));
  return transact(socket, cmd, address, burst_buffer_.data(), length, cls, at);
}

void RtlDataPlane::on_completion(const EngineOutputs& out) {
  const cmdset::Completion c = cmdset::decode_completion(out.cpl.data());
  const uint8_t op = pending_opcodes_.front();
  pending_opcodes_.pop_front();
  const size_t status_index = static_cast<size_t>(c.status);
  if (status_index < stats_.per_status.size()) ++stats_.per_status[status_index];
  if (c.flags & static_cast<uint8_t>(cmdset::CplFlag::WRITE_ONCE_SKIP)) ++stats_.write_once_skips;
  if (c.flags & static_cast<uint8_t>(cmdset::CplFlag::TIER_REWRITTEN)) ++stats_.tier_rewrites;
  if (c.status == Status::OK) {
    if (op == static_cast<uint8_t>(Opcode::DEMOTE) &&
        !(c.flags & static_cast<uint8_t>(cmdset::CplFlag::WRITE_ONCE_SKIP)))
      stats_.peak_index_entries = std::max(stats_.peak_index_entries, ++index_entries_);
    else if (op == static_cast<uint8_t>(Opcode::FREE) && index_entries_ > 0) --index_entries_;
  }
  // The completion transactor formats and posts it ctrl.completion_cycles later.
  const sc_core::sc_time at = (now_ + config_.completion_cycles) * cycle_;
  uint8_t bytes[cmdset::kCompletionBytes];
  std::copy(out.cpl.begin(), out.cpl.end(), bytes);
  const uint64_t slot = posted_ % config_.ring_entries;
  if (coverage_) {
    coverage_->completion(op, c);
    if (slot == config_.ring_entries - 1) coverage_->hit("corner/completion_ring_wrap");
  }
  ++posted_;
  transact(host_out_socket, tlm::TLM_WRITE_COMMAND,
           addr::kCompletionRing + slot * cmdset::kCompletionBytes, bytes, cmdset::kCompletionBytes,
           TxnClass::CompletionWrite, at);
}

const BlockIndex& RtlDataPlane::index() const {
  const EngineParams& p = engine_->params();
  index_snapshot_ = std::make_unique<BlockIndex>(p.sets, p.ways, p.tag_bits);
  std::vector<RawEntry> ways;
  for (uint32_t s = 0; s < p.sets; ++s) {
    engine_->read_set(s, ways);
    for (uint32_t w = 0; w < p.ways; ++w) {
      const RawEntry& r = ways[w];
      if (!r.valid) continue;
      IndexEntry e;
      e.valid = true;
      e.tag = r.tag;
      e.tenant = static_cast<uint16_t>(r.tenant);
      e.shareable = r.shareable;
      e.pinned = r.pinned;
      e.hbm_resident = r.hbm_valid;
      e.hbm_addr = p.hbm_slot_lsb >= 64 ? 0 : r.hbm_slot << p.hbm_slot_lsb;
      e.tier_addr = p.tier_addr_lsb >= 64 ? 0 : r.tier_addr << p.tier_addr_lsb;
      e.length = r.length;
      e.format = static_cast<cmdset::Format>(r.format);
      e.qos = static_cast<uint8_t>(r.qos);
      e.prio = static_cast<uint16_t>(r.prio);
      e.policy = r.policy;
      index_snapshot_->insert(BlockIndex::Slot{s, w}, e);
    }
  }
  return *index_snapshot_;
}

}  // namespace kvtier::cosim
