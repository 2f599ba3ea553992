#pragma once
// The first-order link: per-direction bandwidth after line encoding, a fixed latency, and a
// fixed number of overhead bytes per transaction of at most max_payload_bytes. It ignores
// flits, credits and retry; the flit-accurate protocols replace it for link studies.
#include "tlm/common/timeline.h"
#include "tlm/link/link_protocol.h"

namespace kvtier {

class SimpleLinkProtocol : public LinkProtocol {
 public:
  explicit SimpleLinkProtocol(const LinkConfig& config);
  std::string name() const override { return "simple"; }
  LinkTransfer send(const LinkMessage& msg, const sc_core::sc_time& earliest) override;
  sc_core::sc_time latency(Direction) const override { return latency_; }

 private:
  TransferTime wire_time_;  // serialisation time of a message's wire bytes
  const uint32_t overhead_bytes_;
  const uint32_t max_payload_bytes_;
  const sc_core::sc_time latency_;
  Timeline wire_[2];
};

}  // namespace kvtier
