#include "tlm/link/cxl_flit_protocol.h"

#include <algorithm>
#include <stdexcept>

namespace kvtier {

namespace {

constexpr uint64_t kLineBytes = 64;

LinkWireParams cxl_wire_params(const LinkConfig& c, const FlitFormat& f, const sc_core::sc_time& latency) {
  LinkWireParams p;
  p.bytes_per_s = c.bytes_per_s();
  p.bit_error_rate = c.bit_error_rate;
  p.seed = c.error_seed;
  p.retry_buffer_units = c.retry_buffer_units;
  p.replay_latency = sc_core::sc_time(c.replay_latency_ns, sc_core::SC_NS);
  // Acks ride back in the next flit the other way (68B: Ak bit, §4.2.8.4; 256B: flit sequence).
  p.ack_delay = latency + latency + seconds(f.flit_bytes / c.bytes_per_s());
  p.fec_interleaves = f.fec_interleaves;
  return p;
}

}  // namespace

CxlFlitProtocol::DirectionState::DirectionState(const LinkConfig& c, const FlitFormat& f, const LinkWireParams& p,
                                                Direction d)
    : wire(p, d),
      packer(f, d, wire, c.multi_data_header, c.max_owed_data_slots),
      io_credits{CreditPool(c.credits_posted), CreditPool(c.credits_non_posted), CreditPool(c.credits_completion)},
      mem_credits{CreditPool(c.credits_m2s_req), CreditPool(c.credits_m2s_rwd), CreditPool(c.credits_s2m_drs),
                  CreditPool(c.credits_s2m_ndr)} {}

CxlFlitProtocol::CxlFlitProtocol(const LinkConfig& config, FlitFormat format, std::string name)
    : config_(config),
      format_(std::move(format)),
      name_(std::move(name)),
      // 68B carries PCIe-framed TLPs (STP + LCRC); 256B flit-mode TLPs have no per-TLP framing.
      framing_{format_.io_framed_tlps ? 8u : 0u, config.ecrc ? 4u : 0u},
      latency_(sc_core::sc_time(config.host_port_ns + config.device_port_ns +
                                    (format_.fec_interleaves ? config.fec_decode_ns : 0.0),
                                sc_core::SC_NS)),
      credit_return_interval_(sc_core::sc_time(config.credit_return_interval_ns, sc_core::SC_NS)) {
  for (Direction d : {Direction::Downstream, Direction::Upstream})
    dirs_[static_cast<size_t>(d)] =
        std::make_unique<DirectionState>(config_, format_, cxl_wire_params(config_, format_, latency_), d);
}

LinkTransfer CxlFlitProtocol::send(const LinkMessage& msg, const sc_core::sc_time& earliest) {
  settle_owed(msg.dir, earliest);
  return is_cxl_mem(msg.cls) ? send_mem(msg, earliest) : send_io(msg, earliest);
}

void CxlFlitProtocol::flush(const sc_core::sc_time& until) {
  settle_owed(Direction::Downstream, until);
  settle_owed(Direction::Upstream, until);
}

// Overhead owed on `dir` that was due by `until` goes out now, in time order, behind nothing
// sent later: CXL.io DLLPs join the TLP stream; credit returns ride in a flit already on the
// wire, or in the message about to leave, or else in a credit-only flit.
void CxlFlitProtocol::settle_owed(Direction dir, const sc_core::sc_time& until) {
  DirectionState& d = *dirs_[static_cast<size_t>(dir)];
  while (!d.owed_dllps.empty() && d.owed_dllps.front() <= until) {
    append_io(d, d.owed_dllps.front(), kDllpBytes);
    d.owed_dllps.pop_front();
  }
  while (!d.owed_credits.empty() && d.owed_credits.front() <= until) {
    const sc_core::sc_time due = d.owed_credits.front();
    const sc_core::sc_time deadline = due + credit_return_interval_;
    if (d.wire.busy_until() < due && until > deadline) {
      d.wire.send_control(deadline, format_.flit_bytes);  // LLCRD / empty flit with CRD
    }
    while (!d.owed_credits.empty() && d.owed_credits.front() <= deadline) d.owed_credits.pop_front();
  }
}

CxlFlitProtocol::IoAppend CxlFlitProtocol::append_io(DirectionState& d, const sc_core::sc_time& earliest,
                                                     uint32_t bytes) {
  IoAppend r;
  uint32_t remaining = bytes;
  bool any = false;
  if (d.io.exists && d.io.start >= earliest && d.io.used < format_.io_bytes_per_flit) {
    const uint32_t take = std::min(format_.io_bytes_per_flit - d.io.used, remaining);
    d.io.used += take;
    remaining -= take;
    r.first = d.io.start;
    r.last = d.io.end;
    any = true;
  }
  while (remaining > 0) {
    const LinkWire::Sent s = d.wire.send_unit(earliest, format_.flit_bytes);
    const uint32_t take = std::min(format_.io_bytes_per_flit, remaining);
    d.io = {true, s.start, s.end, take};
    remaining -= take;
    if (!any) r.first = s.start;
    any = true;
    r.last = s.end;
    r.flits += 1;
    r.replays += s.replays;
    r.wire_bytes += static_cast<uint64_t>(format_.flit_bytes) * (1 + s.replays);
  }
  return r;
}

LinkTransfer CxlFlitProtocol::send_io(const LinkMessage& msg, const sc_core::sc_time& earliest) {
  DirectionState& tx = *dirs_[static_cast<size_t>(msg.dir)];
  DirectionState& back = *dirs_[static_cast<size_t>(reverse(msg.dir))];
  const sc_core::sc_time return_delay = latency_ + back.wire.duration(format_.flit_bytes) + latency_;
  LinkTransfer t;
  bool first = true;
  for (const Tlp& tlp : tlps_for(msg, config_)) {
    CreditPool& pool = tx.io_credits[static_cast<size_t>(flow_class(tlp.kind))];
    const sc_core::sc_time ready = pool.available(earliest);
    t.credit_wait = std::max(t.credit_wait, ready - earliest);
    const IoAppend a = append_io(tx, ready, framing_.bytes(tlp));
    if (first) t.first_bit = a.first;
    first = false;
    t.last_bit = std::max(t.last_bit, a.last);
    t.units += a.flits;
    t.replays += a.replays;
    t.wire_bytes += a.wire_bytes;
    pool.consume(a.last + return_delay);
    if (format_.io_framed_tlps) {
      // 68B: the CXL.io data link layer is PCIe's; its ACK / UpdateFC DLLPs go the other way.
      ++tx.tlps_received;
      if (tx.tlps_received % config_.tlps_per_ack == 0) back.owed_dllps.push_back(a.last + latency_);
      if (tx.tlps_received % config_.tlps_per_update_fc == 0) back.owed_dllps.push_back(a.last + latency_);
    }
  }
  return t;
}

LinkTransfer CxlFlitProtocol::send_mem(const LinkMessage& msg, const sc_core::sc_time& earliest) {
  const bool read = msg.cls == TxnClass::MemRead;
  MemMsg kind;
  if (read) kind = msg.response ? MemMsg::S2MDRS : MemMsg::M2SReq;
  else kind = msg.response ? MemMsg::S2MNDR : MemMsg::M2SRwD;
  const bool m2s = kind == MemMsg::M2SReq || kind == MemMsg::M2SRwD;
  if (m2s != (msg.dir == Direction::Downstream))
    throw std::logic_error(std::string(to_string(kind)) + " cannot travel " + to_string(msg.dir) +
                           ": CXL.mem requests go host -> device, responses device -> host");
  const uint64_t bytes = read && !msg.response ? msg.read_bytes : (msg.response && !read ? 0 : msg.payload_bytes);
  // A write completion answers every line the write carried; the Link does not pass the
  // length with the completion, so one NDR answers the message (one line, 64 B, the usual case).
  const uint64_t lines = kind == MemMsg::S2MNDR ? 1 : std::max<uint64_t>(1, (bytes + kLineBytes - 1) / kLineBytes);
  const uint32_t chunks = carries_data(kind) ? format_.data_slots_per_line : 0;

  DirectionState& tx = *dirs_[static_cast<size_t>(msg.dir)];
  DirectionState& back = *dirs_[static_cast<size_t>(reverse(msg.dir))];
  const sc_core::sc_time return_delay = latency_ + back.wire.duration(format_.flit_bytes) + latency_;
  CreditPool& pool = tx.mem_credits[static_cast<size_t>(kind)];
  LinkTransfer t;
  for (uint64_t line = 0; line < lines; ++line) {
    const sc_core::sc_time ready = pool.available(earliest);
    t.credit_wait = std::max(t.credit_wait, ready - earliest);
    const MemPlacement p = tx.packer.place(kind, chunks, ready);
    if (line == 0) t.first_bit = p.first_bit;
    t.last_bit = std::max(t.last_bit, p.last_bit);
    t.units += p.flits_opened;
    t.slots += p.slots;
    t.replays += p.replays;
    t.wire_bytes += p.wire_bytes;
    pool.consume(p.last_bit + return_delay);
    back.owed_credits.push_back(p.last_bit + latency_);
  }
  return t;
}

}  // namespace kvtier
