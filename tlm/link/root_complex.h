#pragma once
// The host's root complex as a throughput limit on device-initiated DMA: the payload a device
// writes into host (or GPU) memory, or reads out of it, passes the root complex at no more than
// `link.root_complex_dma_gbps` per direction, whatever the link could carry. Measured copy
// engines on a PCIe 5 x16 link move 51-52 GB/s where the TLP framing allows 57.6 GB/s
// (nvbandwidth, CALIBRATION §3); this is where that difference is taken (docs/link.md, "DMA
// through the root complex").
//
// A payload whose first byte reaches the root complex at `first` and its last at `last` is
// through it at max(last, start + bytes / rate), start = max(first, when the root complex
// finished the payload before): one busy-until per direction, so a lone burst is hardly
// delayed and a stream is held to the rate.
//
// The same limit caps a CPU's CXL.mem traffic (link.root_complex_load_gbps for loads' data into
// the host, link.root_complex_store_gbps for stores' data out of it), off by default; only
// link-study and calibrate make that traffic.
#include <array>
#include <cstdint>
#include <systemc>

#include "tlm/common/timeline.h"
#include "tlm/link/link_protocol.h"

namespace kvtier {

class RootComplexLimit {
 public:
  explicit RootComplexLimit(double gbps = 0) : bytes_per_s_(gbps * 1e9) {}
  bool limits() const { return bytes_per_s_ > 0; }
  // Whether a transaction class is device-initiated DMA of payload through the root complex.
  static bool applies_to(TxnClass c) {
    return c == TxnClass::PayloadWrite || c == TxnClass::PayloadRead;
  }
  // A payload leaving the host (a CPU's store): it enters the link when the root complex takes
  // it, max(at, when the payload before it was through), so stores are spaced to the rate and a
  // lone one goes at once.
  sc_core::sc_time admit(Direction dir, const sc_core::sc_time& at, uint64_t bytes) {
    if (!limits() || bytes == 0) return at;
    return busy_[static_cast<size_t>(dir)].reserve(
        at, seconds(static_cast<double>(bytes) / bytes_per_s_));
  }
  sc_core::sc_time pass(Direction dir, const sc_core::sc_time& first, const sc_core::sc_time& last,
                        uint64_t bytes) {
    if (!limits() || bytes == 0) return last;
    const sc_core::sc_time need = seconds(static_cast<double>(bytes) / bytes_per_s_);
    const sc_core::sc_time start = busy_[static_cast<size_t>(dir)].reserve(first, need);
    const sc_core::sc_time end = start + need;
    return end > last ? end : last;
  }

 private:
  double bytes_per_s_;
  std::array<Timeline, 2> busy_;
};

}  // namespace kvtier
