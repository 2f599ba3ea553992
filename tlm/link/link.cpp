#include "tlm/link/link.h"

#include "tlm/common/timeline.h"

namespace kvtier {

uint64_t LinkStats::payload_bytes() const {
  uint64_t sum = 0;
  for (const auto& c : per_class) sum += c.payload_bytes;
  return sum;
}

uint64_t LinkStats::wire_bytes() const {
  uint64_t sum = 0;
  for (const auto& c : per_class) sum += c.wire_bytes;
  return sum;
}

Link::Link(sc_core::sc_module_name name, std::unique_ptr<LinkProtocol> protocol)
    : sc_core::sc_module(name), protocol_(std::move(protocol)) {
  host_in.register_b_transport(this, &Link::downstream_transport);
  device_in.register_b_transport(this, &Link::upstream_transport);
}

void Link::downstream_transport(tlm::tlm_generic_payload& trans, sc_core::sc_time& delay) {
  traverse(Direction::Downstream, device_out, trans, delay);
}

void Link::upstream_transport(tlm::tlm_generic_payload& trans, sc_core::sc_time& delay) {
  traverse(Direction::Upstream, host_out, trans, delay);
}

void Link::account(TxnClass cls, const LinkTransfer& t, uint64_t payload, Direction dir) {
  auto& c = stats_.per_class[static_cast<size_t>(cls)];
  c.payload_bytes += payload;
  c.wire_bytes += t.wire_bytes;
  c.units += t.units;
  c.slots += t.slots;
  c.replays += t.replays;
  c.credit_wait_s += to_seconds(t.credit_wait);
  const double wire_s = to_seconds(t.last_bit - t.first_bit);
  c.serialisation_s += wire_s;
  stats_.busy_s[static_cast<size_t>(dir)] += wire_s;
}

void Link::traverse(Direction dir, tlm_utils::simple_initiator_socket<Link>& out, tlm::tlm_generic_payload& trans,
                    sc_core::sc_time& delay) {
  const TxnClass cls = txn_class_of(trans);
  const sc_core::sc_time now = sim_now();
  const sc_core::sc_time issued = now + delay;
  const uint64_t length = trans.get_data_length();
  const bool is_read = trans.is_read();

  // Forward: the write with its payload, or the read request alone.
  const LinkTransfer fwd = protocol_->send({dir, cls, false, is_read ? 0 : length, is_read ? length : 0}, issued);
  account(cls, fwd, is_read ? 0 : length, dir);
  delay = fwd.last_bit + protocol_->latency(dir) - now;
  out->b_transport(trans, delay);

  if (!is_read && trans.is_response_ok() && protocol_->write_completes(cls)) {
    // A completing write (CXL.mem RwD) is answered by a no-data completion (S2M NDR).
    const Direction back = reverse(dir);
    const LinkTransfer cmp = protocol_->send({back, cls, true, 0, 0}, now + delay);
    account(cls, cmp, 0, back);
    delay = cmp.last_bit + protocol_->latency(back) - now;
  }

  if (is_read && trans.is_response_ok()) {
    // The data travels back once the target has produced it.
    const Direction back = reverse(dir);
    const LinkTransfer rsp = protocol_->send({back, cls, true, length, 0}, now + delay);
    account(cls, rsp, length, back);
    delay = rsp.last_bit + protocol_->latency(back) - now;
  }
  auto& c = stats_.per_class[static_cast<size_t>(cls)];
  c.messages += 1;
  c.latency_s_total += to_seconds(now + delay - issued);
}

}  // namespace kvtier
