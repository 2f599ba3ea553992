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

sc_core::sc_time Link::forward(Direction dir, TxnClass cls, bool is_read, uint64_t length,
                               const sc_core::sc_time& issued) {
  // The write with its payload, or the read request alone.
  const LinkTransfer fwd =
      protocol_->send({dir, cls, false, is_read ? 0 : length, is_read ? length : 0}, issued);
  account(cls, fwd, is_read ? 0 : length, dir);
  const sc_core::sc_time lat = protocol_->latency(dir);
  // A device's DMA write into host memory passes the root complex (unlimited: unchanged).
  if (!is_read && dir == Direction::Upstream && RootComplexLimit::applies_to(cls))
    return root_complex_.pass(dir, fwd.first_bit + lat, fwd.last_bit + lat, length);
  return fwd.last_bit + lat;
}

void Link::count_transaction(TxnClass cls, const sc_core::sc_time& issued,
                             const sc_core::sc_time& done) {
  auto& c = stats_.per_class[static_cast<size_t>(cls)];
  c.messages += 1;
  c.latency_s_total += to_seconds(done - issued);
}

template <typename Deliver>
sc_core::sc_time Link::cross(Direction dir, TxnClass cls, bool is_read, uint64_t length,
                             const sc_core::sc_time& issued, Deliver&& deliver) {
  bool ok = true;
  sc_core::sc_time done = deliver(forward(dir, cls, is_read, length, issued), ok);

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
    const sc_core::sc_time lat = protocol_->latency(back);
    done = rsp.last_bit + lat;
    // The data of a device's DMA read leaves host memory through the root complex.
    if (dir == Direction::Upstream && RootComplexLimit::applies_to(cls))
      done = root_complex_.pass(back, rsp.first_bit + lat, done, length);
  }
  count_transaction(cls, issued, done);
  return done;
}

void Link::traverse(Direction dir, tlm_utils::simple_initiator_socket<Link>& out,
                    tlm::tlm_generic_payload& trans, sc_core::sc_time& delay) {
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

sc_core::sc_time Link::burst(bool is_read, uint64_t address, uint32_t length, TxnClass cls,
                             const sc_core::sc_time& at) {
  if (!host_side_) SC_REPORT_FATAL("kvtier/link", "the link's direct burst path has no host side");
  return cross(Direction::Upstream, cls, is_read, length, at,
               [&](const sc_core::sc_time& arrival, bool& ok) {
                 ok = true;  // a refused access is reported where it is refused
                 return host_side_->burst(is_read, address, length, cls, arrival);
               });
}

void Link::burst_train(bool is_read, uint64_t address, uint32_t burst_bytes, uint64_t total,
                       TxnClass cls, const sc_core::sc_time* at, sc_core::sc_time* done, size_t n) {
  if (!host_side_) SC_REPORT_FATAL("kvtier/link", "the link's direct burst path has no host side");
  const Direction dir = Direction::Upstream;
  if (is_read || protocol_->write_completes(cls))
    return BurstTarget::burst_train(is_read, address, burst_bytes, total, cls, at, done, n);
  // What cross() does for each write, stage by stage: the forward messages (the protocol and
  // the class's counters see them in burst order), the far side's train, the latencies (their
  // sum in burst order). Nothing else reads or writes these between two bursts.
  train_arrivals_.resize(n);
  for (size_t k = 0; k < n; ++k)
    train_arrivals_[k] = forward(dir, cls, false, train_burst_length(burst_bytes, total, k), at[k]);
  host_side_->burst_train(false, address, burst_bytes, total, cls, train_arrivals_.data(), done, n);
  for (size_t k = 0; k < n; ++k) count_transaction(cls, at[k], done[k]);
}

void Link::declare_stats(StatGroup& run) const {
  const std::string unit = protocol_->unit_name();
  bool any = false;
  for (const LinkClassStats& c : stats_.per_class) any = any || c.messages;
  if (!any) {
    run.add("link_classes", nullptr, "group",
            "per traffic class crossing the link (the TxnClass tag of each transaction); null: "
            "nothing crossed");
  } else {
    StatGroup classes = run.group("link_classes",
                                  "per traffic class crossing the link (the TxnClass tag of each "
                                  "transaction), only the classes that carried a transaction");
    for (size_t i = 0; i < stats_.per_class.size(); ++i) {
      const LinkClassStats& c = stats_.per_class[i];
      if (!c.messages) continue;
      StatGroup k = classes.group_as(
          to_string(static_cast<TxnClass>(i)), "<class>",
          "one traffic class: descriptor_write, doorbell, completion_write, payload_write, "
          "payload_read, mem_read, mem_write, update_policy, index_read or index_write");
      k.add("messages", c.messages, "count",
            "transactions of the class that crossed the link (a read with its data response, a "
            "write with its "
            "completion if the protocol sends one, count once)");
      k.add("payload_bytes", c.payload_bytes, "bytes",
            "payload carried by them, both directions (write data, read data)");
      k.add("wire_bytes", c.wire_bytes, "bytes",
            "bytes on the wire charged to them: payload plus framing, headers, the " + unit +
                "s they opened and the link-level overhead (DLLPs, credit flits) they caused, "
                "before line encoding");
      k.add("units", c.units, unit + "s",
            std::string("protocol units (") + unit +
                "s of link.protocol) the class's "
                "messages opened");
      k.add("wire_bytes_per_payload_byte",
            c.payload_bytes ? static_cast<double>(c.wire_bytes) / c.payload_bytes : 0.0, "x",
            "wire_bytes over payload_bytes (0 for a class that carries no payload)");
      k.add("serialisation_s", c.serialisation_s, "s",
            "wire time of all the class's messages, first bit to last bit");
      k.add("mean_latency_s", c.latency_s_total / c.messages, "s",
            "mean end-to-end time of a transaction: issue to the last response usable, target time "
            "included");
    }
  }
  StatGroup busy =
      run.group("link_busy_s", "serialisation time of the link per direction, every class");
  busy.add("downstream", stats_.busy_s[0], "s",
           "host -> device wire time (sum of the messages' first to last bit)");
  busy.add("upstream", stats_.busy_s[1], "s",
           "device -> host wire time (sum of the messages' first to last bit)");
}

}  // namespace kvtier
