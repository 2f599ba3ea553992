#include "tlm/link/simple_protocol.h"

namespace kvtier {

SimpleLinkProtocol::SimpleLinkProtocol(const LinkConfig& config)
    : wire_time_(config.bytes_per_s()),
      overhead_bytes_(config.txn_overhead_bytes),
      max_payload_bytes_(config.max_payload_bytes),
      latency_(nanoseconds(config.latency_ns)) {}

LinkTransfer SimpleLinkProtocol::send(const LinkMessage& msg, const sc_core::sc_time& earliest) {
  // A message of n payload bytes is ceil(n / max_payload) transactions, each carrying the
  // fixed overhead; a read request (n = 0) is one header-only transaction.
  const uint64_t transactions =
      msg.payload_bytes == 0 ? 1
                             : (msg.payload_bytes + max_payload_bytes_ - 1) / max_payload_bytes_;
  LinkTransfer t;
  t.units = transactions;
  t.wire_bytes = msg.payload_bytes + transactions * overhead_bytes_;
  const sc_core::sc_time& duration = wire_time_.of(t.wire_bytes);
  t.first_bit = wire_[static_cast<int>(msg.dir)].reserve(earliest, duration);
  t.last_bit = t.first_bit + duration;
  return t;
}

}  // namespace kvtier
