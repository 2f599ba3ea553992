#pragma once
// A DMA burst's access placed by a direct call: what one blocking transaction through the
// sockets does (transact() -> b_transport along the bindings), on the same busy-until
// timelines, in the same order, with the same statistics, but without building a payload,
// calling through sockets or decoding an address per binding. The controller's bursts take this
// path (ctrl.burst_path = direct); the sockets stay the reference (ctrl.burst_path = tlm) and
// carry every other transaction. Implemented by the memories, the host bus and the link, so a
// burst crosses exactly the modules its transaction would.
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
};

}  // namespace kvtier
