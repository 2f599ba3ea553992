#pragma once
// What the CXL flit protocol's rules (cxl_flit_protocol.h) and its engines (cxl_flit_engine.h)
// both place on: each direction's wire, CXL.mem slot packer, CXL.io flit being filled, credits
// and owed overhead, and the constants the rules derive from the configuration.
#include <array>
#include <memory>

#include "tlm/link/credit_pool.h"
#include "tlm/link/cxl_flit_format.h"
#include "tlm/link/cxl_mem_packer.h"
#include "tlm/link/link_config.h"
#include "tlm/link/link_wire.h"
#include "tlm/link/pcie_tlp.h"
#include "tlm/link/time_queue.h"

namespace kvtier {

// Whether a transaction class travels as CXL.mem (else CXL.io).
inline bool is_cxl_mem(TxnClass c) { return c == TxnClass::MemRead || c == TxnClass::MemWrite; }

// The latest CXL.io flit of a direction.
struct CxlIoTail {
  bool exists = false;
  Ticks start = 0, end = 0;  // ticks
  uint32_t used = 0;         // TLP-stream bytes in it
};

struct CxlDirection {
  CxlDirection(const LinkConfig& c, const FlitFormat& f, const LinkWireParams& p, Direction d);
  LinkWire wire;
  CxlMemPacker packer;
  CxlIoTail io;
  std::array<CreditPool, static_cast<size_t>(FlowClass::Count)> io_credits;
  std::array<CreditPool, kMemMsgKinds> mem_credits;
  uint64_t tlps_received = 0;  // by the far end, for the DLLP ratio (68B CXL.io)
  TimeQueue owed_dllps;        // CXL.io DLLPs to send on this direction, when each is due
  TimeQueue owed_credits;      // CXL.mem credit returns to send on this direction
};
using CxlDirections = std::array<std::unique_ptr<CxlDirection>, 2>;  // by Direction

struct CxlRules {
  LinkConfig config;
  FlitFormat format;
  TlpFraming framing;                       // 68B: PCIe framing (STP + LCRC); 256B: none per TLP
  sc_core::sc_time latency;                 // one way: both ports' pipelines, FEC decode on 256B
  sc_core::sc_time credit_return_interval;  // a credit-only flit when none leaves sooner
};

}  // namespace kvtier
