#pragma once
// A DMA burst's access placed by a direct call: what one blocking transaction through the
// sockets does (transact() -> b_transport along the bindings), on the same busy-until
// timelines, in the same order, with the same statistics, but without building a payload,
// calling through sockets or decoding an address per binding. The controller's bursts take this
// path (ctrl.burst_path = direct); the sockets stay the reference (ctrl.burst_path = tlm) and
// carry every other transaction. Implemented by the memories, the host bus and the link, so a
// burst crosses exactly the modules its transaction would.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string>
#include <systemc>

#include "tlm/link/txn_class.h"

namespace kvtier {

// How a refused access is reported, on either path: its class, its address and why.
inline void report_failed_access(TxnClass cls, uint64_t address, const std::string& why) {
  SC_REPORT_ERROR("kvtier/transact",
                  (std::string(to_string(cls)) + " at address 0x" +
                   sc_dt::sc_uint<64>(address).to_string(sc_dt::SC_HEX_US) + " failed: " + why)
                      .c_str());
}

class BurstTarget {
 public:
  virtual ~BurstTarget() = default;
  // Serves a read or write of `length` bytes at `address` (as this target's socket would see it)
  // issued at `at` (never before the current simulation time); returns when it is done, as
  // transact() returns. An access the target refuses is reported as transact() reports it.
  virtual sc_core::sc_time burst(bool is_read, uint64_t address, uint32_t length, TxnClass cls,
                                 const sc_core::sc_time& at) = 0;
  // The `n` bursts of one transfer of `total` bytes from `address`, in one call: burst k covers
  // [address + k * burst_bytes, + min(burst_bytes, total - k * burst_bytes)), is issued at at[k]
  // and done[k] receives when it is done. Exactly what burst() for k = 0, 1, ... gives (the
  // default makes those calls); a target overrides it to serve the train without a call chain
  // per burst, on the same timelines in the same order.
  virtual void burst_train(bool is_read, uint64_t address, uint32_t burst_bytes, uint64_t total,
                           TxnClass cls, const sc_core::sc_time* at, sc_core::sc_time* done,
                           size_t n) {
    for (size_t k = 0; k < n; ++k)
      done[k] = burst(is_read, address + k * burst_bytes, train_burst_length(burst_bytes, total, k),
                      cls, at[k]);
  }
  // The length of burst k of such a train.
  static uint32_t train_burst_length(uint32_t burst_bytes, uint64_t total, size_t k) {
    const uint64_t offset = static_cast<uint64_t>(k) * burst_bytes;
    return static_cast<uint32_t>(std::min<uint64_t>(burst_bytes, total - offset));
  }
};

}  // namespace kvtier
