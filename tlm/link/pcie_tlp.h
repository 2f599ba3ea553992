#pragma once
// PCIe transaction-layer packets: how a message becomes TLPs and how many bytes each TLP
// takes. Shared by the pcie5 protocol (non-flit 128b/130b framing) and CXL.io inside CXL
// flits (68 B mode carries the same framed TLPs; 256 B mode carries flit-mode TLPs).
#include <cstdint>
#include <vector>

#include "tlm/common/config.h"
#include "tlm/link/link_protocol.h"

namespace kvtier {

// PCIe 5.0 §2.1.1 transaction types, grouped by their flow-control class (§2.6.1).
enum class TlpKind : uint8_t { MemWrite, MemRead, Completion };
enum class FlowClass : uint8_t { Posted = 0, NonPosted = 1, Completion = 2, Count = 3 };
inline FlowClass flow_class(TlpKind k) {
  return k == TlpKind::MemWrite  ? FlowClass::Posted
         : k == TlpKind::MemRead ? FlowClass::NonPosted
                                 : FlowClass::Completion;
}

struct Tlp {
  TlpKind kind = TlpKind::MemWrite;
  uint32_t header_bytes = 16;  // 3DW 12 B or 4DW 16 B
  uint32_t data_bytes = 0;
};

// Byte costs of one TLP on the wire, before line encoding.
struct TlpFraming {
  // Non-flit mode at 8 GT/s and above (PCIe 5.0 §4.2.2.3): STP token 4 B (it carries the
  // 12-bit sequence number) + LCRC 4 B. Flit mode (PCIe 6.0, CXL 256 B): none per TLP.
  uint32_t per_tlp_bytes = 8;
  uint32_t ecrc_bytes = 0;  // 4 with ECRC (TLP digest), off by default
  uint32_t bytes(const Tlp& t) const {
    return per_tlp_bytes + t.header_bytes + t.data_bytes + ecrc_bytes;
  }
};

constexpr uint32_t kDllpBytes =
    8;  // SDP token 2 B + DLLP 4 B + CRC-16 2 B (PCIe 5.0 §3.5, §4.2.2.3)

// The TLPs a link message becomes on PCIe / CXL.io:
// - writes (descriptor, doorbell, UPDATE_POLICY, completion record, payload burst, pcie5 mem
//   write): memory writes of at most MPS each (§2.2.2);
// - read requests: one memory read per MRRS bytes (§2.2.7);
// - read data: completions of at most MPS each, or of at most RCB each when the completer
//   splits at the RCB (§2.3.1.1); requests are naturally aligned, so no partial first completion.
// Memory requests carry a 4DW header with 64-bit addresses, completions a 3DW header.
std::vector<Tlp> tlps_for(const LinkMessage& msg, const LinkConfig& config);

// The same TLPs as runs of identical ones: a message splits into full pieces and at most one
// shorter last piece, so at most two runs, in order.
struct TlpRun {
  Tlp tlp;
  uint64_t count = 0;
};
struct TlpRuns {
  TlpRun run[2];
  size_t size = 0;
  const TlpRun* begin() const { return run; }
  const TlpRun* end() const { return run + size; }
};
TlpRuns tlp_runs_for(const LinkMessage& msg, const LinkConfig& config);

}  // namespace kvtier
