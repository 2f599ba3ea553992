#include "tlm/link/cxl2_protocol.h"

namespace kvtier {

namespace {
// Message counts in slot order {M2S Req, M2S RwD, S2M DRS, S2M NDR}.
constexpr MsgCounts counts(uint8_t req, uint8_t rwd, uint8_t drs, uint8_t ndr) {
  return {req, rwd, drs, ndr};
}
}  // namespace

FlitFormat cxl2_68b_flit_format() {
  FlitFormat f;
  f.name = "68B";
  f.flit_bytes = 68;  // 2 B protocol ID + 4 x 16 B slots + 2 B CRC (§4.2.1)
  f.g_slots = 3;      // slot 0 is the H slot: 32-bit flit header + 96 bits of messages
  f.hs_slot = false;
  f.all_data_flits = true;  // §4.2.5: more than 3 chunks rolling over -> all-data flit
  f.data_slots_per_line = 4;
  // CXL.io (assumption): PCIe-framed TLPs and DLLPs stream through the 64 B behind the
  // protocol ID; the 2 B trailer is the flit's CRC position.
  f.io_bytes_per_flit = 64;
  f.io_framed_tlps = true;
  // Downstream M2S formats carrying CXL.mem (Table 4-6/4-7): H4 RwD, H5 Req, G4 Req (+ $DH),
  // G5 RwD (+ $Rsp). One M2S message per slot.
  f.mem_formats[static_cast<size_t>(Direction::Downstream)] = {
      {"H4", SlotKind::H, counts(0, 1, 0, 0)},
      {"H5", SlotKind::H, counts(1, 0, 0, 0)},
      {"G4", SlotKind::G, counts(1, 0, 0, 0)},
      {"G5", SlotKind::G, counts(0, 1, 0, 0)},
  };
  // Upstream S2M formats (Table 4-8): H0 ($DH + 2 $Rsp + NDR), H3 DRS + NDR, H4 2 NDR,
  // H5 2 DRS (MDH), G4 DRS + 2 NDR, G5 2 NDR, G6 3 DRS (MDH).
  f.mem_formats[static_cast<size_t>(Direction::Upstream)] = {
      {"H0", SlotKind::H, counts(0, 0, 0, 1)}, {"H3", SlotKind::H, counts(0, 0, 1, 1)},
      {"H4", SlotKind::H, counts(0, 0, 0, 2)}, {"H5", SlotKind::H, counts(0, 0, 2, 0)},
      {"G4", SlotKind::G, counts(0, 0, 1, 2)}, {"G5", SlotKind::G, counts(0, 0, 0, 2)},
      {"G6", SlotKind::G, counts(0, 0, 3, 0)},
  };
  // Per-flit maxima (§4.2.5): M2S Req 2, M2S RwD 1, S2M DRS 3, S2M NDR 2.
  f.per_flit_max = counts(2, 1, 3, 2);
  f.data_header_slots_per_flit = 1;  // one slot with data headers per flit (MDH or single)
  f.half_flit_delivery = false;
  f.fec_interleaves = 0;
  return f;
}

}  // namespace kvtier
