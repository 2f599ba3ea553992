#pragma once
// CXL 3.x 256 B flits at 64 GT/s PAM4 (CXL 3.x §4.3; the PHY is PCIe 6.0's flit mode, so no
// 128b/130b: set encoding_efficiency = 1).
//   standard (cxl3):  2 B header, slot 0 (14 B H slot), slots 1-14 (16 B G slots), 2 B CRD,
//                     8 B CRC, 6 B FEC; a flit is used once it is whole and FEC-decoded.
//   latency-optimised (cxl3-lopt): slot 8 is a 12 B HS slot (13 G slots), each 128 B half has
//                     its own 6 B CRC and is used as soon as it checks.
// CXL.mem slot formats G/H/HS 4, 14, 7, 15 (Tables 4-14..4-16); no all-data flits; CXL.io
// carries flit-mode TLPs in 236 B (standard) or 232 B (LOpt) of each CXL.io flit.
#include "tlm/link/cxl_flit_protocol.h"

namespace kvtier {

FlitFormat cxl3_256b_flit_format(bool latency_optimised);

class Cxl3Protocol : public CxlFlitProtocol {
 public:
  Cxl3Protocol(const LinkConfig& config, bool latency_optimised)
      : CxlFlitProtocol(config, cxl3_256b_flit_format(latency_optimised),
                        latency_optimised ? "cxl3-lopt" : "cxl3") {}
};

}  // namespace kvtier
