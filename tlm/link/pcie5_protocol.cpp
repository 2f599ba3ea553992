#include "tlm/link/pcie5_protocol.h"

#include <algorithm>

#include "tlm/link/flit_engine.h"

namespace kvtier {

namespace {

LinkWireParams pcie_wire_params(const LinkConfig& c) {
  LinkWireParams p;
  p.bytes_per_s = c.bytes_per_s();
  p.bit_error_rate = c.bit_error_rate;
  p.seed = c.error_seed;
  p.retry_buffer_units = c.retry_buffer_units;
  p.replay_latency = sc_core::sc_time(c.replay_latency_ns, sc_core::SC_NS);
  // A TLP is acknowledged by an ACK DLLP: port pipelines both ways plus the DLLP itself.
  p.ack_delay = sc_core::sc_time(2 * (c.host_port_ns + c.device_port_ns), sc_core::SC_NS) +
                seconds(kDllpBytes / c.bytes_per_s());
  p.fec_interleaves = 0;  // non-flit PCIe: LCRC only
  return p;
}

}  // namespace

Pcie5Protocol::Pcie5Protocol(const LinkConfig& config)
    : rules_{config, TlpFraming{8, config.ecrc ? 4u : 0u},
             sc_core::sc_time(config.host_port_ns + config.device_port_ns, sc_core::SC_NS)},
      dirs_{Pcie5Direction(config, pcie_wire_params(config), Direction::Downstream),
            Pcie5Direction(config, pcie_wire_params(config), Direction::Upstream)},
      engine_(make_pcie5_flit_engine(config.flit_engine, rules_)) {}

void Pcie5Protocol::send_owed_dllps(Direction dir, const sc_core::sc_time& until) {
  auto& d = dirs_[static_cast<size_t>(dir)];
  for (uint64_t due = d.owed.count_at_most(ticks(until)); due > 0;) {
    uint64_t sent = engine_->settle_dllps(d, due);
    if (sent == 0) {
      d.wire.send_control(from_ticks(d.owed.front()), kDllpBytes);
      d.owed.pop_front();
      sent = 1;
    }
    due -= sent;
  }
}

void Pcie5Protocol::flush(const sc_core::sc_time& until) {
  send_owed_dllps(Direction::Downstream, until);
  send_owed_dllps(Direction::Upstream, until);
}

LinkTransfer Pcie5Protocol::send(const LinkMessage& msg, const sc_core::sc_time& earliest) {
  auto& tx = dirs_[static_cast<size_t>(msg.dir)];
  auto& back = dirs_[static_cast<size_t>(reverse(msg.dir))];
  send_owed_dllps(msg.dir, earliest);
  LinkTransfer t;
  bool first = true;
  for (const TlpRun& run : tlp_runs_for(msg, rules_.config)) {
    // Where the first TLPs' credits bind, they go one by one and the rest may still stream.
    int tries = engine_->tlp_run_retries();
    for (uint64_t k = 0; k < run.count; ++k) {
      if (tries > 0 && run.count - k >= BulkThresholds::kMinUnits) {
        if (engine_->send_tlp_run(tx, back, {run.tlp, run.count - k}, earliest, t, first)) break;
        --tries;
      }
      send_tlp(tx, back, run.tlp, earliest, t, first);
    }
  }
  return t;
}

void Pcie5Protocol::send_tlp(Pcie5Direction& tx, Pcie5Direction& back, const Tlp& tlp,
                             const sc_core::sc_time& earliest, LinkTransfer& t, bool& first) {
  const sc_core::sc_time dllp_time = tx.wire.unit_time(kDllpBytes);
  CreditPool& pool = tx.credits[static_cast<size_t>(flow_class(tlp.kind))];
  const sc_core::sc_time ready = pool.available(earliest);
  t.credit_wait = std::max(t.credit_wait, ready - earliest);
  const uint32_t bytes = rules_.framing.bytes(tlp);
  const LinkWire::Sent s = tx.wire.send_unit(ready, bytes);
  if (first) t.first_bit = s.start;
  first = false;
  t.last_bit = s.end;
  t.units += 1;
  t.replays += s.replays;
  t.wire_bytes += static_cast<uint64_t>(bytes) * (1 + s.replays);
  const sc_core::sc_time checked = s.end + rules_.latency;
  // The freed header credit travels back in an UpdateFC DLLP (PCIe 5.0 §2.6.1.2).
  pool.consume(checked + dllp_time + rules_.latency);
  // The receiver's data link layer answers on the reverse direction (§3.6.2.1, §2.6.1.2).
  ++tx.tlps_received;
  if (mod_by(tx.tlps_received, rules_.config.tlps_per_ack) == 0) {
    back.owed.push(checked);
    t.wire_bytes += kDllpBytes;
  }
  if (mod_by(tx.tlps_received, rules_.config.tlps_per_update_fc) == 0) {
    back.owed.push(checked);
    t.wire_bytes += kDllpBytes;
  }
}

}  // namespace kvtier
