#include "tlm/link/cxl_flit_protocol.h"

#include <algorithm>
#include <stdexcept>

#include "tlm/link/flit_engine.h"

namespace kvtier {

namespace {

constexpr uint64_t kLineBytes = 64;

LinkWireParams cxl_wire_params(const LinkConfig& c, const FlitFormat& f,
                               const sc_core::sc_time& latency) {
  LinkWireParams p;
  p.bytes_per_s = c.bytes_per_s();
  p.bit_error_rate = c.bit_error_rate;
  p.seed = c.error_seed;
  p.retry_buffer_units = c.retry_buffer_units;
  p.replay_latency = sc_core::sc_time(c.replay_latency_ns, sc_core::SC_NS);
  // Acks ride back in the next flit the other way (68B: Ak bit, §4.2.8.4; 256B: flit sequence).
  p.ack_delay = latency + latency + seconds(f.flit_bytes / c.bytes_per_s());
  p.fec_interleaves = f.fec_interleaves;
  p.uniform_unit_bytes = f.flit_bytes;  // every sequenced unit is a flit
  return p;
}

CxlRules cxl_rules(const LinkConfig& c, FlitFormat f) {
  // 68B carries PCIe-framed TLPs (STP + LCRC); 256B flit-mode TLPs have no per-TLP framing.
  const TlpFraming framing{f.io_framed_tlps ? 8u : 0u, c.ecrc ? 4u : 0u};
  const sc_core::sc_time latency(
      c.host_port_ns + c.device_port_ns + (f.fec_interleaves ? c.fec_decode_ns : 0.0),
      sc_core::SC_NS);
  return CxlRules{c, std::move(f), framing, latency,
                  sc_core::sc_time(c.credit_return_interval_ns, sc_core::SC_NS)};
}

}  // namespace

CxlDirection::CxlDirection(const LinkConfig& c, const FlitFormat& f, const LinkWireParams& p,
                           Direction d)
    : wire(p, d),
      packer(f, d, wire, c.multi_data_header, c.max_owed_data_slots),
      io_credits{CreditPool(c.credits_posted), CreditPool(c.credits_non_posted),
                 CreditPool(c.credits_completion)},
      mem_credits{CreditPool(c.credits_m2s_req), CreditPool(c.credits_m2s_rwd),
                  CreditPool(c.credits_s2m_drs), CreditPool(c.credits_s2m_ndr)} {}

CxlFlitProtocol::CxlFlitProtocol(const LinkConfig& config, FlitFormat format, std::string name)
    : rules_(cxl_rules(config, std::move(format))), name_(std::move(name)) {
  for (Direction d : {Direction::Downstream, Direction::Upstream})
    dirs_[static_cast<size_t>(d)] = std::make_unique<CxlDirection>(
        rules_.config, rules_.format, cxl_wire_params(rules_.config, rules_.format, rules_.latency),
        d);
  engine_ = make_cxl_flit_engine(rules_.config.flit_engine, rules_, dirs_);
}

LinkTransfer CxlFlitProtocol::send(const LinkMessage& msg, const sc_core::sc_time& earliest) {
  {
    LinkTransfer t;
    if (engine_->continue_deferred(msg, earliest, t)) return t;
  }
  settle_owed(msg.dir, earliest);
  return is_cxl_mem(msg.cls) ? send_mem(msg, earliest) : send_io(msg, earliest);
}

void CxlFlitProtocol::flush(const sc_core::sc_time& until) {
  engine_->commit_deferred();
  settle_owed(Direction::Downstream, until);
  settle_owed(Direction::Upstream, until);
}

// Overhead owed on `dir` that was due by `until` goes out now, in time order, behind nothing
// sent later: CXL.io DLLPs join the TLP stream; credit returns ride in a flit already on the
// wire, or in the message about to leave, or else in a credit-only flit.
void CxlFlitProtocol::settle_owed(Direction dir, const sc_core::sc_time& until) {
  CxlDirection& d = *dirs_[static_cast<size_t>(dir)];
  for (uint64_t due = d.owed_dllps.count_at_most(ticks(until)); due > 0;) {
    uint64_t sent = engine_->settle_dllps(d, due);
    if (sent == 0) {
      append_io(d, from_ticks(d.owed_dllps.front()), kDllpBytes);
      d.owed_dllps.pop_front();
      sent = 1;
    }
    due -= sent;
  }
  while (!d.owed_credits.empty() && d.owed_credits.front() <= ticks(until)) {
    const sc_core::sc_time due = from_ticks(d.owed_credits.front());
    const sc_core::sc_time deadline = due + rules_.credit_return_interval;
    if (d.wire.busy_until() < due && until > deadline) {
      d.wire.send_control(deadline, rules_.format.flit_bytes);  // LLCRD / empty flit with CRD
    }
    d.owed_credits.pop_front(d.owed_credits.count_at_most(ticks(deadline)));
  }
}

CxlFlitProtocol::IoAppend CxlFlitProtocol::append_io(CxlDirection& d,
                                                     const sc_core::sc_time& earliest,
                                                     uint32_t bytes) {
  IoAppend r;
  uint32_t remaining = bytes;
  bool any = false;
  if (d.io.exists && d.io.start >= ticks(earliest) && d.io.used < rules_.format.io_bytes_per_flit) {
    const uint32_t take = std::min(rules_.format.io_bytes_per_flit - d.io.used, remaining);
    d.io.used += take;
    remaining -= take;
    r.first = from_ticks(d.io.start);
    r.last = from_ticks(d.io.end);
    any = true;
  }
  while (remaining > 0) {
    const LinkWire::Sent s = d.wire.send_unit(earliest, rules_.format.flit_bytes);
    const uint32_t take = std::min(rules_.format.io_bytes_per_flit, remaining);
    d.io = {true, ticks(s.start), ticks(s.end), take};
    remaining -= take;
    if (!any) r.first = s.start;
    any = true;
    r.last = s.end;
    r.flits += 1;
    r.replays += s.replays;
    r.wire_bytes += static_cast<uint64_t>(rules_.format.flit_bytes) * (1 + s.replays);
  }
  return r;
}

LinkTransfer CxlFlitProtocol::send_io(const LinkMessage& msg, const sc_core::sc_time& earliest) {
  CxlDirection& tx = *dirs_[static_cast<size_t>(msg.dir)];
  CxlDirection& back = *dirs_[static_cast<size_t>(reverse(msg.dir))];
  LinkTransfer t;
  bool first = true;
  const TlpRuns runs = tlp_runs_for(msg, rules_.config);
  for (const TlpRun& run : runs) {
    // Only the message's last run may leave its commit for later: the next run builds on it.
    const bool may_defer = &run == runs.end() - 1;
    if (engine_->send_tlps(tx, back, run, earliest, t, first, may_defer)) continue;
    // A run the closed form cannot take whole often can after its first TLPs (those whose
    // credits bind go one by one, the rest stream): offered again a few times, a TLP further
    // each time.
    int tries = engine_->tlp_run_retries();
    for (uint64_t k = 0; k < run.count; ++k) {
      if (tries > 0 && run.count - k >= BulkThresholds::kMinUnits) {
        if (engine_->send_tlp_run(tx, back, {run.tlp, run.count - k}, earliest, t, first,
                                  may_defer))
          break;
        --tries;
      }
      send_tlp(tx, back, run.tlp, earliest, t, first);
    }
  }
  return t;
}

void CxlFlitProtocol::send_tlp(CxlDirection& tx, CxlDirection& back, const Tlp& tlp,
                               const sc_core::sc_time& earliest, LinkTransfer& t, bool& first) {
  const sc_core::sc_time return_delay =
      rules_.latency + back.wire.unit_time(rules_.format.flit_bytes) + rules_.latency;
  CreditPool& pool = tx.io_credits[static_cast<size_t>(flow_class(tlp.kind))];
  const sc_core::sc_time ready = pool.available(earliest);
  t.credit_wait = std::max(t.credit_wait, ready - earliest);
  const IoAppend a = append_io(tx, ready, rules_.framing.bytes(tlp));
  if (first) t.first_bit = a.first;
  first = false;
  t.last_bit = std::max(t.last_bit, a.last);
  t.units += a.flits;
  t.replays += a.replays;
  t.wire_bytes += a.wire_bytes;
  pool.consume(a.last + return_delay);
  if (rules_.format.io_framed_tlps) {
    // 68B: the CXL.io data link layer is PCIe's; its ACK / UpdateFC DLLPs go the other way.
    ++tx.tlps_received;
    if (mod_by(tx.tlps_received, rules_.config.tlps_per_ack) == 0)
      back.owed_dllps.push(a.last + rules_.latency);
    if (mod_by(tx.tlps_received, rules_.config.tlps_per_update_fc) == 0)
      back.owed_dllps.push(a.last + rules_.latency);
  }
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
  const uint64_t bytes =
      read && !msg.response ? msg.read_bytes : (msg.response && !read ? 0 : msg.payload_bytes);
  // A write completion answers every line the write carried; the Link does not pass the
  // length with the completion, so one NDR answers the message (one line, 64 B, the usual case).
  const uint64_t lines =
      kind == MemMsg::S2MNDR ? 1 : std::max<uint64_t>(1, (bytes + kLineBytes - 1) / kLineBytes);
  const uint32_t chunks = carries_data(kind) ? rules_.format.data_slots_per_line : 0;

  CxlDirection& tx = *dirs_[static_cast<size_t>(msg.dir)];
  CxlDirection& back = *dirs_[static_cast<size_t>(reverse(msg.dir))];
  const sc_core::sc_time return_delay =
      rules_.latency + back.wire.duration(rules_.format.flit_bytes) + rules_.latency;
  CreditPool& pool = tx.mem_credits[static_cast<size_t>(kind)];
  LinkTransfer t;
  engine_->start_mem_message(kind, lines);
  for (uint64_t line = 0; line < lines; ++line) {
    const sc_core::sc_time ready = pool.available(earliest);
    t.credit_wait = std::max(t.credit_wait, ready - earliest);
    // Whether the line's earliest time held it back: it may use every flit the packer still
    // offers, and flits it opens go straight after the wire's last.
    const bool waited = tx.packer.has_window()
                            ? ready > tx.packer.first_usable_start() || ready > tx.wire.busy_until()
                            : true;
    const Ticks usable = tx.packer.has_window() ? ticks(tx.packer.first_usable_start()) : 0;
    const MemPlacement p = tx.packer.place(kind, chunks, ready);
    if (line == 0) t.first_bit = p.first_bit;
    t.last_bit = std::max(t.last_bit, p.last_bit);
    t.units += p.flits_opened;
    t.slots += p.slots;
    t.replays += p.replays;
    t.wire_bytes += p.wire_bytes;
    pool.consume(p.last_bit + return_delay);
    back.owed_credits.push(p.last_bit + rules_.latency);
    line += engine_->after_mem_line(tx, back, {usable, ticks(p.last_bit), p.slots, waited},
                                    lines - line - 1, earliest, t);
  }
  return t;
}

}  // namespace kvtier
