#include "tlm/link/cxl3_protocol.h"

namespace kvtier {

namespace {
constexpr MsgCounts counts(uint8_t req, uint8_t rwd, uint8_t drs, uint8_t ndr) {
  return {req, rwd, drs, ndr};
}
}  // namespace

FlitFormat cxl3_256b_flit_format(bool latency_optimised) {
  FlitFormat f;
  f.name = latency_optimised ? "256B-LOpt" : "256B";
  f.flit_bytes = 256;
  f.g_slots = latency_optimised ? 13 : 14;
  f.hs_slot = latency_optimised;
  f.all_data_flits = false;  // §4.3.3: 256B mode has no all-data flits
  f.data_slots_per_line = 4;
  f.io_bytes_per_flit = latency_optimised ? 232 : 236;  // TLP bytes per CXL.io flit (§4.3.2)
  f.io_framed_tlps = false;  // flit-mode TLPs; ACK and FC travel in the flit's link bytes
  // M2S (Table 4-14): G4/H4/HS4 Req, G14/H14/HS14 RwD.
  f.mem_formats[static_cast<size_t>(Direction::Downstream)] = {
      {"H4", SlotKind::H, counts(1, 0, 0, 0)},    {"HS4", SlotKind::HS, counts(1, 0, 0, 0)},
      {"G4", SlotKind::G, counts(1, 0, 0, 0)},    {"H14", SlotKind::H, counts(0, 1, 0, 0)},
      {"HS14", SlotKind::HS, counts(0, 1, 0, 0)}, {"G14", SlotKind::G, counts(0, 1, 0, 0)},
  };
  // S2M (Tables 4-15/4-16): G7 3 NDR, H7/HS7 2 NDR, G15 3 DRS, H15/HS15 2 DRS, G6 BISnp + NDR.
  f.mem_formats[static_cast<size_t>(Direction::Upstream)] = {
      {"H7", SlotKind::H, counts(0, 0, 0, 2)},    {"HS7", SlotKind::HS, counts(0, 0, 0, 2)},
      {"G7", SlotKind::G, counts(0, 0, 0, 3)},    {"H15", SlotKind::H, counts(0, 0, 2, 0)},
      {"HS15", SlotKind::HS, counts(0, 0, 2, 0)}, {"G15", SlotKind::G, counts(0, 0, 3, 0)},
  };
  // §4.3.4 limits per 128 B rolling group (Req 4, RwD-DH 2, DRS-DH 3, NDR 6); the model
  // applies twice each per flit (two disjoint groups), an approximation of the rolling window.
  f.per_flit_max = counts(8, 4, 6, 12);
  f.data_header_slots_per_flit = 15;  // no single-data-header-slot rule in 256B mode
  f.half_flit_delivery = latency_optimised;
  f.fec_interleaves = 3;  // PCIe 6.0 flit FEC: 3-way interleaved, one symbol each
  return f;
}

}  // namespace kvtier
