#include "tlm/link/pcie5_protocol.h"

#include <algorithm>

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
    : config_(config),
      framing_{8, config.ecrc ? 4u : 0u},
      latency_(sc_core::sc_time(config.host_port_ns + config.device_port_ns, sc_core::SC_NS)),
      dirs_{DirectionState(config, pcie_wire_params(config), Direction::Downstream),
            DirectionState(config, pcie_wire_params(config), Direction::Upstream)} {}

void Pcie5Protocol::send_owed_dllps(Direction dir, const sc_core::sc_time& until) {
  auto& d = dirs_[static_cast<size_t>(dir)];
  while (!d.owed.empty() && d.owed.front().ready <= until) {
    d.wire.send_control(d.owed.front().ready, kDllpBytes);
    d.owed.pop_front();
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
  const sc_core::sc_time dllp_time = tx.wire.duration(kDllpBytes);
  LinkTransfer t;
  bool first = true;
  for (const Tlp& tlp : tlps_for(msg, config_)) {
    CreditPool& pool = tx.credits[static_cast<size_t>(flow_class(tlp.kind))];
    const sc_core::sc_time ready = pool.available(earliest);
    t.credit_wait = std::max(t.credit_wait, ready - earliest);
    const uint32_t bytes = framing_.bytes(tlp);
    const LinkWire::Sent s = tx.wire.send_unit(ready, bytes);
    if (first) t.first_bit = s.start;
    first = false;
    t.last_bit = s.end;
    t.units += 1;
    t.replays += s.replays;
    t.wire_bytes += static_cast<uint64_t>(bytes) * (1 + s.replays);
    const sc_core::sc_time checked = s.end + latency_;
    // The freed header credit travels back in an UpdateFC DLLP (PCIe 5.0 §2.6.1.2).
    pool.consume(checked + dllp_time + latency_);
    // The receiver's data link layer answers on the reverse direction (§3.6.2.1, §2.6.1.2).
    ++tx.tlps_received;
    if (tx.tlps_received % config_.tlps_per_ack == 0) {
      back.owed.push_back({checked});
      t.wire_bytes += kDllpBytes;
    }
    if (tx.tlps_received % config_.tlps_per_update_fc == 0) {
      back.owed.push_back({checked});
      t.wire_bytes += kDllpBytes;
    }
  }
  return t;
}

}  // namespace kvtier
