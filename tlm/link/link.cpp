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

template <typename Deliver>
sc_core::sc_time Link::cross(Direction dir, TxnClass cls, bool is_read, uint64_t length, const sc_core::sc_time& issued,
                             Deliver&& deliver) {
  // Forward: the write with its payload, or the read request alone.
  const LinkTransfer fwd = protocol_->send({dir, cls, false, is_read ? 0 : length, is_read ? length : 0}, issued);
  account(cls, fwd, is_read ? 0 : length, dir);
  bool ok = true;
  sc_core::sc_time done = deliver(fwd.last_bit + protocol_->latency(dir), ok);

  if (!is_read && ok && protocol_->write_completes(cls)) {
    // A completing write (CXL.mem RwD) is answered by a no-data completion (S2M NDR).
    const Direction back = reverse(dir);
    const LinkTransfer cmp = protocol_->send({back, cls, true, 0, 0}, done);
    account(cls, cmp, 0, back);
    done = cmp.last_bit + protocol_->latency(back);
  }

  if (is_read && ok) {
    // The data travels back once the target has produced it.
    const Direction back = reverse(dir);
    const LinkTransfer rsp = protocol_->send({back, cls, true, length, 0}, done);
    account(cls, rsp, length, back);
    done = rsp.last_bit + protocol_->latency(back);
  }
  auto& c = stats_.per_class[static_cast<size_t>(cls)];
  c.messages += 1;
  c.latency_s_total += to_seconds(done - issued);
  return done;
}

void Link::traverse(Direction dir, tlm_utils::simple_initiator_socket<Link>& out, tlm::tlm_generic_payload& trans,
                    sc_core::sc_time& delay) {
  const sc_core::sc_time now = sim_now();
  const sc_core::sc_time done =
      cross(dir, txn_class_of(trans), trans.is_read(), trans.get_data_length(), now + delay,
            [&](const sc_core::sc_time& arrival, bool& ok) {
              sc_core::sc_time d = arrival - now;
              out->b_transport(trans, d);
              ok = trans.is_response_ok();
              return now + d;
            });
  delay = done - now;
}

sc_core::sc_time Link::burst(bool is_read, uint64_t address, uint32_t length, TxnClass cls, const sc_core::sc_time& at) {
  if (!host_side_) SC_REPORT_FATAL("kvtier/link", "the link's direct burst path has no host side");
  return cross(Direction::Upstream, cls, is_read, length, at, [&](const sc_core::sc_time& arrival, bool& ok) {
    ok = true;  // a refused access is reported where it is refused
    return host_side_->burst(is_read, address, length, cls, arrival);
  });
}

}  // namespace kvtier
