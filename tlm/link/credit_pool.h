#pragma once
// Receiver credits of one message class, as the sender sees them (PCIe 5.0 §2.6 flow control;
// CXL 2.0 §4.2.6 ReqCrd/DataCrd/RspCrd; CXL 3.x §4.3 CRD field). A message may leave only
// while the sender holds a credit; the credit comes back when the receiver has taken the
// message and the return has crossed the link. With N credits, message k reuses the credit
// of message k - N, so a ring of return times bounds the messages in flight per class.
#include <cstdint>
#include <systemc>
#include <vector>

namespace kvtier {

class CreditPool {
 public:
  explicit CreditPool(uint32_t credits) : returned_at_(credits ? credits : 1, sc_core::SC_ZERO_TIME) {}

  // Earliest time at or after `earliest` at which the next message holds a credit.
  sc_core::sc_time available(const sc_core::sc_time& earliest) const {
    const sc_core::sc_time& r = returned_at_[next_ % returned_at_.size()];
    return r > earliest ? r : earliest;
  }
  // Takes the credit for the next message; it is back at the sender at `returned_at`.
  void consume(const sc_core::sc_time& returned_at) {
    returned_at_[next_ % returned_at_.size()] = returned_at;
    ++next_;
  }
  uint32_t credits() const { return static_cast<uint32_t>(returned_at_.size()); }

 private:
  std::vector<sc_core::sc_time> returned_at_;
  uint64_t next_ = 0;
};

}  // namespace kvtier
