#pragma once
// What distinguishes one CXL flit format from another, as data: sizes, slots, the CXL.mem
// slot formats per direction, packing limits. cxl2_protocol.cpp fills it for 68 B flits
// (CXL 2.0 §4.2), cxl3_protocol.cpp for 256 B standard and latency-optimised flits
// (CXL 3.x §4.3). Only the CXL.mem formats are listed: this model carries no CXL.cache.
#include <array>
#include <cstdint>
#include <string>
#include <vector>

namespace kvtier {

// CXL.mem message classes (CXL 2.0 §3.3): host -> device M2S Req (read request) and RwD
// (write request with data); device -> host S2M DRS (data response) and NDR (no-data
// response: write completion).
enum class MemMsg : uint8_t { M2SReq = 0, M2SRwD = 1, S2MDRS = 2, S2MNDR = 3, Count = 4 };
constexpr size_t kMemMsgKinds = static_cast<size_t>(MemMsg::Count);
using MsgCounts = std::array<uint8_t, kMemMsgKinds>;
inline const char* to_string(MemMsg m) {
  switch (m) {
    case MemMsg::M2SReq:
      return "M2S Req";
    case MemMsg::M2SRwD:
      return "M2S RwD";
    case MemMsg::S2MDRS:
      return "S2M DRS";
    case MemMsg::S2MNDR:
      return "S2M NDR";
    case MemMsg::Count:
      break;
  }
  return "?";
}
inline bool carries_data(MemMsg m) { return m == MemMsg::M2SRwD || m == MemMsg::S2MDRS; }

// H: the header slot (slot 0). HS: the 12 B header slot of a latency-optimised 256 B flit
// (slot 8). G: a generic 16 B slot, the only kind that carries data.
enum class SlotKind : uint8_t { H, HS, G };

struct SlotFormat {
  const char* name;  // as the specification names it (H5, G6, ...)
  SlotKind kind;
  MsgCounts carries;  // at most this many messages of each class
};

struct FlitFormat {
  std::string name;          // "68B", "256B", "256B-LOpt"
  uint32_t flit_bytes = 68;  // on the wire before line encoding, protocol ID / PHY bytes included
  uint32_t g_slots = 3;      // generic slots per flit
  bool hs_slot = false;      // LOpt: slot 8 is a 12 B HS slot
  bool all_data_flits =
      false;  // 68B: 4 x 16 B data, no header, when more than g_slots chunks roll over
  uint32_t data_slots_per_line = 4;  // a 64 B line is four 16 B chunks
  // CXL.io: TLP bytes one flit carries, and whether TLPs keep their PCIe framing (STP, LCRC)
  // and DLLPs travel in the TLP stream (68B), or are flit-mode TLPs with ACK/FC in the flit's
  // data-link bytes (256B).
  uint32_t io_bytes_per_flit = 64;
  bool io_framed_tlps = true;
  std::array<std::vector<SlotFormat>, 2> mem_formats;  // [Direction]: downstream M2S, upstream S2M
  MsgCounts per_flit_max{};                            // messages of each class per flit
  uint32_t data_header_slots_per_flit = 1;  // 68B: one DRS/RwD-carrying slot per flit (§4.2.5)
  bool half_flit_delivery = false;          // LOpt: a 128 B half is used once its own CRC checks
  uint32_t fec_interleaves = 0;             // 0: CRC only (68B); 3: 3-way interleaved FEC (256B)
};

}  // namespace kvtier
