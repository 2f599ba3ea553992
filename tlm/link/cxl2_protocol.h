#pragma once
// CXL 2.0 over the PCIe 5.0 PHY with 68 B flits (CXL 2.0 §4.2): 2 B protocol ID (ARB/MUX),
// a 16 B header slot whose first 32 bits are the flit header (type, Ak, credit fields, slot
// formats), three 16 B generic slots and a 2 B CRC; 128b/130b below it; no FEC.
// CXL.mem messages pack into slot formats H0-H5 / G0-G6 (Tables 4-6..4-8, CALIBRATION §8.1);
// CXL.io TLPs keep PCIe framing and stream through 64 B of each CXL.io flit.
#include "tlm/link/cxl_flit_protocol.h"

namespace kvtier {

// The 68 B flit as data (slot formats, per-flit maxima, rollover and all-data flits).
FlitFormat cxl2_68b_flit_format();

class Cxl2Protocol : public CxlFlitProtocol {
 public:
  explicit Cxl2Protocol(const LinkConfig& config)
      : CxlFlitProtocol(config, cxl2_68b_flit_format(), "cxl2") {}
};

}  // namespace kvtier
